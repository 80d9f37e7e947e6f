"""The machine-readable documents of ``hive sessions`` (``-o json``): snake_case, as every machine output of
hive (:mod:`hive_cli.output`), unset fields omitted.

``sessions list -o json`` is an array (``[]`` when empty) of :class:`SessionSummary`; ``sessions delete <id> -o
json`` is :class:`SessionDeleted`, or :class:`CommandError` when the id is missing or unknown. ``sessions show <id>
-o json`` is :class:`SessionTranscript` (snake_case keys, the vocabulary the other machine outputs move to).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import UTC
from datetime import datetime
from typing import Final
from typing import Literal

import msgspec

from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.sessions import SessionInfo
from hive_core.sessions import cut_title

__all__ = [
    "CommandError",
    "ListedStatus",
    "SessionDeleted",
    "SessionSummary",
    "SessionTranscript",
    "TranscriptItem",
    "encode_document",
    "iso_time",
    "session_summaries",
    "session_transcript",
    "summarise",
    "transcript_items",
]

ListedStatus = Literal["active", "ended", "error", "forked", "dead"]
"""A session's state as listed: its recorded status, or ``dead`` for an ``active`` one whose process is gone."""

SUMMARY_CHARS: Final = 120
"""The longest summary of a tool call's arguments or a tool result's first line."""


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One session in ``sessions list -o json``."""

    id: str
    """The session's id."""
    status: ListedStatus
    """``active``, ``ended``, ``error``, ``forked``, or ``dead`` (active, but its process is gone)."""
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


def summarise(info: SessionInfo, status: ListedStatus | None = None) -> SessionSummary:
    """The list entry of one session (``status``: its state as listed, when known; else its recorded status)."""
    first = cut_title(info.first_message or "")
    return SessionSummary(
        id=info.id,
        status=status or info.status,
        model=info.model,
        created=iso_time(info.created),
        message_count=info.message_count,
        first_message=first or None,
    )


def session_summaries(
    sessions: Iterable[SessionInfo], statuses: Mapping[str, ListedStatus] | None = None
) -> list[SessionSummary]:
    """The ``sessions list -o json`` document, in the order given (the store's: newest first); ``statuses``:
    the state each session is listed with, by id."""
    shown = statuses or {}
    return [summarise(info, shown.get(info.id)) for info in sessions]


class TranscriptItem(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One step of a session's transcript."""

    kind: Literal["user", "assistant", "tool_call", "tool_result"]
    """What it is: a user or assistant message, a tool call the model made, or that call's result."""
    text: str
    """The message; for a tool call its arguments, for a result its first line, each cut to
    :data:`SUMMARY_CHARS` characters."""
    tool: str | None = None
    """The tool called (tool calls and results)."""
    call_id: str | None = None
    """The call's id (tool calls and results)."""
    is_error: bool = False
    """Whether the call failed or was refused (results)."""
    lines: int | None = None
    """How many lines the whole result held (results)."""


class SessionTranscript(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """``sessions show <id> -o json``: a session and what was said in it."""

    session_id: str
    """The session's id."""
    status: ListedStatus
    """Its state, as ``sessions list`` shows it."""
    created: str
    """When it was created (ISO-8601, UTC)."""
    model: str | None = None
    """The model it was started with; omitted when unknown."""
    provider: str | None = None
    """The provider (or coding-agent CLI) it was started with; omitted when unknown."""
    items: list[TranscriptItem]
    """The transcript, in order."""


def _cut(text: str, limit: int = SUMMARY_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _arguments(call: ToolCallPart) -> str:
    if call.arguments is None:
        return _cut(" ".join(call.arguments_text.split()))
    return _cut(json.dumps(call.arguments, ensure_ascii=False, separators=(", ", ": ")))


def _result(part: ToolResultPart) -> TranscriptItem:
    lines = part.content.splitlines()
    first = next((line.strip() for line in lines if line.strip()), "")
    return TranscriptItem(
        kind="tool_result",
        text=_cut(first),
        tool=part.name,
        call_id=part.call_id,
        is_error=part.is_error,
        lines=len(lines),
    )


def transcript_items(messages: Sequence[Message]) -> list[TranscriptItem]:
    """The transcript of a conversation: user and assistant text whole, tool calls and results summarised (system
    messages left out)."""
    items: list[TranscriptItem] = []
    for message in messages:
        if message.role == "system":
            continue
        for part in message.parts:
            if isinstance(part, TextPart) and part.text.strip() and message.role in ("user", "assistant"):
                items.append(TranscriptItem(kind=message.role, text=part.text.strip()))
            elif isinstance(part, ToolCallPart):
                items.append(
                    TranscriptItem(kind="tool_call", text=_arguments(part), tool=part.name, call_id=part.id)
                )
            elif isinstance(part, ToolResultPart):
                items.append(_result(part))
    return items


def session_transcript(
    info: SessionInfo, messages: Sequence[Message], status: ListedStatus | None = None
) -> SessionTranscript:
    """The ``sessions show -o json`` document of ``info``, its conversation ``messages`` (as restored)."""
    return SessionTranscript(
        session_id=info.id,
        status=status or info.status,
        created=iso_time(info.created),
        model=info.model,
        provider=info.provider,
        items=transcript_items(messages),
    )


def encode_document(
    document: SessionSummary
    | SessionDeleted
    | CommandError
    | SessionTranscript
    | TranscriptItem
    | list[SessionSummary],
) -> str:
    """A document as one line of JSON (non-ASCII written as is), without the newline."""
    return msgspec.json.encode(document).decode()
