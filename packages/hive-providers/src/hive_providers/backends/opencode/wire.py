"""The SSE events of ``opencode serve`` as typed values, decoded once at the edge (questions and permissions are
:mod:`.questions`'s).

An event's ``type`` picks its struct (:data:`EVENTS`); its fields are under ``properties``. What a newer server
adds (and every event hive has no use for: catalogs, other plugins' notices), or an event whose fields are not the
wire's types, is an :class:`~..kit.wire_union.Unknown`, skipped. A message part is decoded where it is read, by its
own ``type`` (:data:`PARTS`), so a part of a kind hive does not know is skipped alone. Extra fields are ignored; a
missing or ``null`` field takes its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire_union import Unknown, WireUnion

__all__ = [
    "EVENTS",
    "PARTS",
    "Event",
    "ExecutionEnd",
    "ExecutionFailed",
    "ExecutionInterrupted",
    "ExecutionSucceeded",
    "MessageInfo",
    "MessagePartDelta",
    "MessagePartUpdated",
    "MessageUpdated",
    "Part",
    "ReasoningPart",
    "SessionCreated",
    "SessionError",
    "SessionErrorInfo",
    "SessionIdle",
    "SessionInfo",
    "SessionStatus",
    "SessionUpdated",
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

PARTS = WireUnion("type", TextPart, ReasoningPart, ToolPart, StepFinishPart)
"""The message parts by ``type``."""


# -- events ------------------------------------------------------------------------------------------------------


class _Event(msgspec.Struct, frozen=True, tag_field="type"):
    pass


class SessionInfo(msgspec.Struct, frozen=True):
    """A session as ``session.created`` / ``session.updated`` describe it."""

    id: str | None = None
    """Its id."""
    parent_id: str | None = msgspec.field(default=None, name="parentID")
    """The session that started it as a subagent."""
    title: str | None = None
    """Its title."""


class SessionInfoProperties(msgspec.Struct, frozen=True):
    """What a session event carries."""

    info: SessionInfo | None = None
    """The session."""


class SessionCreated(_Event, frozen=True, tag="session.created"):
    """A session was created (a subagent's, when it has a parent)."""

    properties: SessionInfoProperties | None = None
    """The event's fields."""


class SessionUpdated(SessionCreated, frozen=True, tag="session.updated"):
    """A session changed (its title)."""


class StatusType(msgspec.Struct, frozen=True):
    """A session's status."""

    type: str | None = None
    """``busy``, ``retry`` or ``idle``."""


class SessionStatusProperties(msgspec.Struct, frozen=True):
    """What ``session.status`` carries."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session."""
    status: StatusType | None = None
    """Its status."""


class SessionStatus(_Event, frozen=True, tag="session.status"):
    """A session went busy, retries or went idle."""

    properties: SessionStatusProperties | None = None
    """The event's fields."""


class SessionProperties(msgspec.Struct, frozen=True):
    """What an event about one session carries."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session."""


class SessionIdle(_Event, frozen=True, tag="session.idle"):
    """A session went idle."""

    properties: SessionProperties | None = None
    """The event's fields."""


class SessionErrorData(msgspec.Struct, frozen=True):
    """An error's details."""

    message: str | None = None
    """What went wrong."""


class SessionErrorInfo(msgspec.Struct, frozen=True):
    """A session's error."""

    name: str | None = None
    """Its kind (``MessageAbortedError``: the run was cancelled)."""
    data: SessionErrorData | None = None
    """Its details."""


class SessionErrorProperties(msgspec.Struct, frozen=True):
    """What ``session.error`` carries."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session (none: the server's)."""
    error: SessionErrorInfo | None = None
    """The error."""


class SessionError(_Event, frozen=True, tag="session.error"):
    """A session's run failed (or was aborted)."""

    properties: SessionErrorProperties | None = None
    """The event's fields."""


class MessageInfo(msgspec.Struct, frozen=True):
    """A message as ``message.updated`` describes it."""

    id: str | None = None
    """Its id."""
    role: str | None = None
    """``user`` or ``assistant``."""
    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """Its session."""


class MessageProperties(msgspec.Struct, frozen=True):
    """What ``message.updated`` carries."""

    info: MessageInfo | None = None
    """The message."""


class MessageUpdated(_Event, frozen=True, tag="message.updated"):
    """A message was created or changed."""

    properties: MessageProperties | None = None
    """The event's fields."""


class PartDeltaProperties(msgspec.Struct, frozen=True):
    """What ``message.part.delta`` carries."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The part's session."""
    message_id: str | None = msgspec.field(default=None, name="messageID")
    """The part's message."""
    part_id: str | None = msgspec.field(default=None, name="partID")
    """The part."""
    field: str | None = None
    """The part's field the piece adds to (``text``)."""
    delta: str | None = None
    """The piece."""


class MessagePartDelta(_Event, frozen=True, tag="message.part.delta"):
    """A piece of a part's field."""

    properties: PartDeltaProperties | None = None
    """The event's fields."""


class PartProperties(msgspec.Struct, frozen=True):
    """What ``message.part.updated`` carries."""

    part: object = None
    """The whole part (:data:`PARTS`)."""


class MessagePartUpdated(_Event, frozen=True, tag="message.part.updated"):
    """A part was created or changed: the whole of it."""

    properties: PartProperties | None = None
    """The event's fields."""


class ExecutionError(msgspec.Struct, frozen=True):
    """Why an OpenCode 2.0 run failed."""

    message: str | None = None
    """What went wrong."""


class ExecutionProperties(msgspec.Struct, frozen=True):
    """What OpenCode 2.0's run ends carry."""

    session_id: str | None = msgspec.field(default=None, name="sessionID")
    """The session."""
    error: ExecutionError | None = None
    """Why a failed run failed."""
    reason: str | None = None
    """Why a failed run failed, in a word."""


class ExecutionEnd(_Event, frozen=True):
    """An OpenCode 2.0 run ended (the seed's wire): terminal for its session."""

    properties: ExecutionProperties | None = None
    """The event's fields."""


class ExecutionSucceeded(ExecutionEnd, frozen=True, tag="session.execution.succeeded"):
    """The run succeeded."""


class ExecutionInterrupted(ExecutionEnd, frozen=True, tag="session.execution.interrupted"):
    """The run was interrupted."""


class ExecutionFailed(ExecutionEnd, frozen=True, tag="session.execution.failed"):
    """The run failed."""


Event: TypeAlias = (
    SessionCreated
    | SessionUpdated
    | SessionStatus
    | SessionIdle
    | SessionError
    | MessageUpdated
    | MessagePartDelta
    | MessagePartUpdated
    | ExecutionSucceeded
    | ExecutionInterrupted
    | ExecutionFailed
)
"""An event hive reads."""

EVENTS = WireUnion(
    "type",
    SessionCreated,
    SessionUpdated,
    SessionStatus,
    SessionIdle,
    SessionError,
    MessageUpdated,
    MessagePartDelta,
    MessagePartUpdated,
    ExecutionSucceeded,
    ExecutionInterrupted,
    ExecutionFailed,
)
"""The events by ``type``."""


def decode_event(raw: Mapping[str, object]) -> Event | Unknown:
    """The typed event of one SSE ``data:`` object."""
    return EVENTS.decode(raw)
