"""Copilot's ``session.event`` notifications, as hive reads them: frozen structs.

A ``session.event`` carries ``{type, data, agentId?}``; :func:`decode_session_event` decodes its ``data`` by its
``type`` (one a turn does not read, or a later version's, is an :class:`~..kit.wire.Unknown`, keeping its type)
and returns a :class:`SessionEvent`. Decoding is tolerant (:mod:`hive_providers.backends.kit.wire`, salvaging): a
field of the wrong type reads as absent.
"""

from __future__ import annotations

from typing import Any
from typing import Final
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireStruct
from hive_providers.backends.kit.wire import WireUnion
from hive_providers.backends.kit.wire import decode

__all__ = [
    "AssistantMessage",
    "EventData",
    "MessageDelta",
    "PermissionRequested",
    "ReasoningDelta",
    "SessionError",
    "SessionEvent",
    "SessionIdle",
    "SubagentCompleted",
    "SubagentFailed",
    "SubagentStarted",
    "ToolError",
    "ToolExecutionComplete",
    "ToolExecutionStart",
    "ToolResult",
    "Usage",
    "UserInputRequested",
    "decode_session_event",
]


class _Camel(WireStruct, frozen=True, rename="camel"):
    """Copilot's fields are camelCase."""


class _Data(_Camel, frozen=True, tag_field="type"):
    """An event's ``data``; its struct's tag is the event's ``type``."""


class PermissionRequested(_Data, frozen=True, tag="permission.requested"):
    """A tool asks for permission (answered with ``session.permissions.handlePendingPermissionRequest``)."""

    request_id: str | None = None
    permission_request: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    """``{kind, fullCommandText, fileName, path, toolCallId, ...}``: kept whole, the request is judged on it."""


class UserInputRequested(_Data, frozen=True, tag="user_input.requested"):
    """A question of the ``ask_user`` tool is coming (its ``userInput.request`` follows)."""

    question: str | None = None
    tool_call_id: str | None = None
    request_id: str | None = None


class _SubagentData(_Data, frozen=True):
    tool_call_id: str | None = None
    """The ``task`` call the subagent runs for."""


class SubagentStarted(_SubagentData, frozen=True, tag="subagent.started"):
    """A subagent starts (the ``task`` tool)."""

    agent_description: str | None = None
    agent_display_name: str | None = None


class SubagentCompleted(_SubagentData, frozen=True, tag="subagent.completed"):
    """A subagent ended."""

    cancelled: bool | None = None


class SubagentFailed(_SubagentData, frozen=True, tag="subagent.failed"):
    """A subagent failed."""

    error: str | None = None


class _DeltaData(_Data, frozen=True):
    delta_content: str | None = None
    """The piece of text."""


class MessageDelta(_DeltaData, frozen=True, tag="assistant.message_delta"):
    """A piece of a reply."""

    message_id: str | None = None


class ReasoningDelta(_DeltaData, frozen=True, tag="assistant.reasoning_delta"):
    """A piece of reasoning."""


class AssistantMessage(_Data, frozen=True, tag="assistant.message"):
    """A whole reply (streamed before, unless streaming was off)."""

    content: str | None = None
    message_id: str | None = None


class ToolExecutionStart(_Data, frozen=True, tag="tool.execution_start"):
    """A tool call starts."""

    tool_call_id: str | None = None
    tool_name: str | None = None
    arguments: Any = None
    """The call's arguments, as the tool takes them."""


class ToolResult(_Camel, frozen=True):
    """A tool's result."""

    content: str | None = None


class ToolError(_Camel, frozen=True):
    """A tool's failure."""

    message: str | None = None


class ToolExecutionComplete(_Data, frozen=True, tag="tool.execution_complete"):
    """A tool call ended."""

    tool_call_id: str | None = None
    success: bool | None = None
    result: ToolResult | None = None
    error: ToolError | None = None


class Usage(_Data, frozen=True, tag="assistant.usage"):
    """One model call's tokens."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None


class SessionError(_Data, frozen=True, tag="session.error"):
    """The session failed."""

    message: str | None = None


class SessionIdle(_Data, frozen=True, tag="session.idle"):
    """The turn ended (``aborted`` after ``session.abort``)."""

    aborted: bool | None = None


_Read: TypeAlias = (
    PermissionRequested
    | UserInputRequested
    | SubagentStarted
    | SubagentCompleted
    | SubagentFailed
    | MessageDelta
    | ReasoningDelta
    | AssistantMessage
    | ToolExecutionStart
    | ToolExecutionComplete
    | Usage
    | SessionError
    | SessionIdle
)

EventData = _Read | Unknown
"""An event's ``data``, decoded by its ``type`` (an :class:`~..kit.wire.Unknown`: an event a turn does not read, or
a later version's)."""

_KINDS: Final = WireUnion[_Read].of("type", _Read, salvage=True)


class _Envelope(_Camel, frozen=True):
    type: str | None = None
    agent_id: str | None = None
    data: dict[str, Any] | None = None


class SessionEvent(WireStruct, frozen=True):
    """One ``session.event``."""

    data: EventData
    """What happened."""
    agent_id: str | None = None
    """The subagent whose event it is (``None``: the main agent's)."""


def decode_session_event(event: object) -> SessionEvent:
    """Decode one ``session.event``'s ``event``."""
    envelope = decode(event, _Envelope)
    kind = envelope.type
    # The tag is the envelope's, not the data's: decode the data as if it carried it.
    data = {**(envelope.data or {}), "type": kind} if kind is not None else envelope.data
    return SessionEvent(
        data=_KINDS.decode(data),
        agent_id=envelope.agent_id or None,
    )
