"""The machine-readable documents of ``hive sessions`` (``-o json``): snake_case, as every machine output of
hive (:mod:`hive_cli.output`), unset fields omitted.

``sessions list -o json`` is an array (``[]`` when empty) of :class:`SessionSummary`; ``sessions delete <id> -o
json`` is :class:`SessionDeleted`, or :class:`CommandError` when the id is missing or unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

import msgspec

from hive_core.sessions import SessionInfo, SessionStatus, cut_title

__all__ = [
    "CommandError",
    "SessionDeleted",
    "SessionSummary",
    "encode_document",
    "iso_time",
    "session_summaries",
    "summarise",
]


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One session in ``sessions list -o json``."""

    id: str
    """The session's id."""
    status: SessionStatus
    """``active``, ``ended``, ``error`` or ``forked``."""
    model: str | None = None
    """The model it was started with; omitted when unknown."""
    created: str
    """When it was created: ISO-8601 in UTC with seven fractional digits, like ``2026-08-31T00:00:00.0000000Z``."""
    message_count: int
    """How many user and assistant messages it holds."""
    first_message: str | None = None
    """Its title, cut to :data:`~hive_core.sessions.TITLE_CHARS` characters; omitted when none."""


class SessionDeleted(msgspec.Struct, frozen=True, kw_only=True):
    """``sessions delete <id> -o json`` when the session was deleted."""

    deleted: str
    """The deleted session's id."""
    success: bool = True
    """Always ``true``."""


class CommandError(msgspec.Struct, frozen=True, kw_only=True):
    """A ``sessions`` command that failed (a missing or unknown id), with its exit code."""

    error: str
    """What went wrong."""
    exit_code: int = 1
    """The process's exit code (``exit_code``, as in every machine output)."""


def iso_time(timestamp: float) -> str:
    """Unix seconds as ISO-8601 in UTC, round-trip form with seven fractional digits and ``Z``."""
    moment = datetime.fromtimestamp(timestamp, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f") + "0Z"


def summarise(info: SessionInfo) -> SessionSummary:
    """The list entry of one session."""
    first = cut_title(info.first_message or "")
    return SessionSummary(
        id=info.id,
        status=info.status,
        model=info.model,
        created=iso_time(info.created),
        message_count=info.message_count,
        first_message=first or None,
    )


def session_summaries(sessions: Iterable[SessionInfo]) -> list[SessionSummary]:
    """The ``sessions list -o json`` document, in the order given (the store's: newest first)."""
    return [summarise(info) for info in sessions]


def encode_document(document: SessionSummary | SessionDeleted | CommandError | list[SessionSummary]) -> str:
    """A document as one line of JSON (non-ASCII written as is), without the newline."""
    return msgspec.json.encode(document).decode()
