"""The SSE events of ``opencode serve`` as typed values, decoded once at the edge (questions and permissions are
:mod:`.questions`'s).

An event's ``type`` picks its struct (:data:`EVENTS`); its fields are under ``properties``. What a newer server
adds (and every event hive has no use for: catalogs, other plugins' notices), or an event whose fields are not the
wire's types, is an :class:`~..kit.wire.Unknown`, skipped. A message part is decoded where it is read, by its
own ``type`` (:data:`PARTS`), so a part of a kind hive does not know is skipped alone. Extra fields are ignored; a
missing or ``null`` field takes its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireUnion

__all__ = [
    "EVENTS",
    "PARTS",
    "ErrorData",
    "Event",
    "ExecutionEnd",
    "ExecutionFailed",
    "ExecutionInterrupted",
    "ExecutionSucceeded",
    "Failure",
    "Info",
    "MessagePartDelta",
    "MessagePartUpdated",
    "MessageUpdated",
    "Part",
    "Properties",
    "ReasoningPart",
    "SessionCreated",
    "SessionError",
    "SessionIdle",
    "SessionStatus",
    "SessionUpdated",
    "Status",
    "StepFinishPart",
    "TextPart",
    "Tokens",
    "ToolPart",
    "ToolState",
    "decode_event",
]


# -- message parts -------------------------------------------------------------------------------------------


class _Part(msgspec.Struct, frozen=True, tag_field="type"):
    id: str | None = None
    """The part's id."""
    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session of its message."""
    message_id: str | None = msgspec.field(default=None, name="messageID")
    """Its message."""


class TextPart(_Part, frozen=True, tag="text"):
    """Text of a message, the whole of it so far (its deltas come as ``message.part.delta``)."""

    text: str | None = None
    """The text so far."""
    time: object = msgspec.UNSET
    """Its timing: only assistant text has one (the prompt's echo has none)."""


class ReasoningPart(TextPart, frozen=True, tag="reasoning"):
    """Thinking of an assistant message."""


class ToolState(msgspec.Struct, frozen=True):
    """Where a tool call stands."""

    status: str | None = None
    """``pending``, ``running``, ``completed`` or ``error``."""
    input: dict[str, object] | None = None
    """The tool's arguments, free-form (once known)."""
    output: str | None = None
    """A completed call's output."""
    error: str | None = None
    """A failed call's error."""


class ToolPart(_Part, frozen=True, tag="tool"):
    """One tool call."""

    call_id: str | None = msgspec.field(default=None, name="callID")
    """The call's id (permissions and questions name it)."""
    tool: str | None = None
    """The tool (``bash``, ``task``, an MCP tool's)."""
    state: ToolState | None = None
    """Where it stands."""


class Cache(msgspec.Struct, frozen=True):
    """A step's cached input tokens."""

    read: int | None = None
    """Read from the cache."""
    write: int | None = None
    """Written to the cache."""


class Tokens(msgspec.Struct, frozen=True):
    """A step's token counts."""

    input: int | None = None
    """Input tokens not read from or written to the cache."""
    output: int | None = None
    """Output tokens."""
    cache: Cache | None = None
    """Cached input tokens."""


class StepFinishPart(_Part, frozen=True, tag="step-finish"):
    """The end of one model step."""

    reason: str | None = None
    """Why it ended (``stop``, ``tool-calls``, ``length``)."""
    tokens: Tokens | None = None
    """Its token counts."""


Part: TypeAlias = TextPart | ReasoningPart | ToolPart | StepFinishPart
"""A message part hive reads."""

PARTS = WireUnion[Part].of("type", Part)
"""The message parts by ``type``."""


# -- events ------------------------------------------------------------------------------------------------------


class Info(msgspec.Struct, frozen=True):
    """A session (``session.created`` / ``session.updated``) or a message (``message.updated``)."""

    id: str | None = None
    """Its id."""
    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """A message's session."""
    parent_id: str | None = msgspec.field(default=None, name="parentID")
    """The session that started a session as a subagent."""
    title: str | None = None
    """A session's title."""
    role: str | None = None
    """A message's author: ``user`` or ``assistant``."""


class ErrorData(msgspec.Struct, frozen=True):
    """An error's details."""

    message: str | None = None
    """What went wrong."""


class Failure(ErrorData, frozen=True):
    """Why a run failed: ``session.error``'s ``name`` and ``data``, OpenCode 2.0's ``message``."""

    name: str | None = None
    """Its kind (``MessageAbortedError``: the run was cancelled)."""
    data: ErrorData | None = None
    """Its details."""


class Status(msgspec.Struct, frozen=True):
    """A session's status."""

    type: str | None = None
    """``busy``, ``retry`` or ``idle``."""


class Properties(msgspec.Struct, frozen=True):
    """An event's fields (each event carries the few its kind has)."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session the event is about (none on ``session.error``: the server's)."""
    info: Info | None = None
    """The session or message described."""
    status: Status | None = None
    """A session's new status."""
    error: Failure | None = None
    """Why a run failed."""
    reason: str | None = None
    """Why an OpenCode 2.0 run failed, in a word."""
    part: object = None
    """The whole part (:data:`PARTS`) of ``message.part.updated``."""
    message_id: str | None = msgspec.field(default=None, name="messageID")
    """A streamed part's message."""
    part_id: str | None = msgspec.field(default=None, name="partID")
    """A streamed part."""
    field: str | None = None
    """The part's field a streamed piece adds to (``text``)."""
    delta: str | None = None
    """The streamed piece."""


class _Event(msgspec.Struct, frozen=True, tag_field="type"):
    properties: Properties = msgspec.field(default_factory=Properties)
    """The event's fields."""


class SessionCreated(_Event, frozen=True, tag="session.created"):
    """A session was created (a subagent's, when it has a parent)."""


class SessionUpdated(SessionCreated, frozen=True, tag="session.updated"):
    """A session changed (its title)."""


class SessionStatus(_Event, frozen=True, tag="session.status"):
    """A session went busy, retries or went idle."""


class SessionIdle(_Event, frozen=True, tag="session.idle"):
    """A session went idle."""


class SessionError(_Event, frozen=True, tag="session.error"):
    """A session's run failed (or was aborted)."""


class MessageUpdated(_Event, frozen=True, tag="message.updated"):
    """A message was created or changed."""


class MessagePartDelta(_Event, frozen=True, tag="message.part.delta"):
    """A piece of a part's field."""


class MessagePartUpdated(_Event, frozen=True, tag="message.part.updated"):
    """A part was created or changed: the whole of it."""


class ExecutionEnd(_Event, frozen=True):
    """An OpenCode 2.0 run ended (the seed's wire): terminal for its session."""


class ExecutionSucceeded(ExecutionEnd, frozen=True, tag="session.execution.succeeded"):
    """The run succeeded."""


class ExecutionInterrupted(ExecutionEnd, frozen=True, tag="session.execution.interrupted"):
    """The run was interrupted."""


class ExecutionFailed(ExecutionEnd, frozen=True, tag="session.execution.failed"):
    """The run failed."""


_SessionEvent: TypeAlias = SessionCreated | SessionUpdated | SessionStatus | SessionIdle | SessionError
_MessageEvent: TypeAlias = MessageUpdated | MessagePartDelta | MessagePartUpdated
Event: TypeAlias = _SessionEvent | _MessageEvent | ExecutionSucceeded | ExecutionInterrupted | ExecutionFailed
"""An event hive reads."""

EVENTS = WireUnion[Event].of("type", Event)
"""The events by ``type``."""


def decode_event(raw: Mapping[str, object]) -> Event | Unknown:
    """The typed event of one SSE ``data:`` object."""
    return EVENTS.decode(raw)
