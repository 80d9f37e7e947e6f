"""Session ids: generated ones sort by creation time; explicit ones (``--session-id``) are checked."""

from __future__ import annotations

import re
import secrets
import time
from typing import Final

__all__ = ["MAX_SESSION_ID_LENGTH", "InvalidSessionId", "new_session_id", "validate_session_id"]

MAX_SESSION_ID_LENGTH: Final = 128
"""The longest session id accepted."""

_VALID: Final = re.compile(r"[A-Za-z0-9_-]{1,128}")


class InvalidSessionId(ValueError):
    """A session id that is empty, too long, or holds characters other than letters, digits, ``-`` and ``_``."""


def new_session_id(now: float | None = None) -> str:
    """A fresh id, ``<unix milliseconds in hex>-<8 random hex digits>``: ids sort in creation order."""
    millis = int((time.time() if now is None else now) * 1000)
    return f"{millis:x}-{secrets.token_hex(4)}"


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
