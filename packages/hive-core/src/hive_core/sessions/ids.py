"""Explicit session ids (``--session-id``) are checked here; :func:`hive_core.session_id.new_session_id` makes new
ones."""

from __future__ import annotations

import re
from typing import Final

from hive_core.errors import UserError

__all__ = ["MAX_SESSION_ID_LENGTH", "InvalidSessionId", "validate_session_id"]

MAX_SESSION_ID_LENGTH: Final = 128
"""The longest session id accepted."""

_VALID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")


class InvalidSessionId(UserError, ValueError):
    """A session id that is empty, too long, or holds characters other than letters, digits, ``-`` and ``_``."""


def validate_session_id(session_id: str) -> str:
    """Return ``session_id`` unchanged, or raise :class:`InvalidSessionId` saying what is wrong with it."""
    if _VALID.fullmatch(session_id):
        return session_id
    if not session_id:
        raise InvalidSessionId("a session id cannot be empty")
    if len(session_id) > MAX_SESSION_ID_LENGTH:
        raise InvalidSessionId(
            f"a session id is at most {MAX_SESSION_ID_LENGTH} characters; this one has {len(session_id)}"
        )
    bad = sorted({c for c in session_id if not (c.isascii() and (c.isalnum() or c in "-_"))})
    raise InvalidSessionId(
        f"invalid session id {session_id!r}: only letters, digits, '-' and '_' are allowed "
        f"(found {', '.join(repr(c) for c in bad)})"
    )
