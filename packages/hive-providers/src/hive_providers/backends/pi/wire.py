"""Pi's events (``--mode json`` lines, the events of ``--mode rpc``) as typed values, decoded once at the edge.

An event's ``type`` picks its struct (:data:`EVENTS`); what a newer Pi adds, and the events hive has no use for
(``turn_start``, ``queue_update``, compaction and retry notices), are an :class:`~..kit.wire.Unknown`,
skipped. A streamed piece (``message_update``, many a turn) is typed down to its ``assistantMessageEvent`` and
decoded in one go (the piece reads as absent when it is of a kind hive does not read); a message's content blocks
are decoded where they are read (:data:`BLOCKS`). Extra fields are ignored; a missing or ``null`` field takes its
default. OMP, Pi's fork, sends the same events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireUnion

__all__ = [
    "BLOCKS",
    "EVENTS",
    "RUN_ENDS",
    "AgentEnd",
    "AgentSettled",
    "Event",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "PiMessage",
    "SessionHeader",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolResult",
    "Update",
    "Usage",
    "decode_event",
]


class _Tagged(msgspec.Struct, frozen=True, tag_field="type", rename="camel"):
    pass


# -- content -------------------------------------------------------------------------------------------------


class TextBlock(_Tagged, frozen=True, tag="text"):
    """Text of a message."""

    text: str | None = None
    """The text."""


class ThinkingBlock(_Tagged, frozen=True, tag="thinking"):
    """Thinking of an assistant message."""

    thinking: str | None = None
    """The thinking text."""


BLOCKS = WireUnion("type", TextBlock, ThinkingBlock)
"""The content blocks hive reads (tool calls are read from ``tool_execution_*``), by ``type``."""


class Usage(msgspec.Struct, frozen=True, rename="camel"):
    """An assistant message's token counts."""

    input: int | None = None
    """Input tokens not read from or written to the cache."""
    output: int | None = None
    """Output tokens."""
    cache_read: int | None = None
    """Input tokens read from the cache."""
    cache_write: int | None = None
    """Input tokens written to the cache."""


class PiMessage(msgspec.Struct, frozen=True, rename="camel"):
    """A message of the conversation (``user``, ``assistant``, ``toolResult``)."""

    role: str | None = None
    """Who wrote it."""
    content: list[object] | None = None
    """Its content blocks (:data:`BLOCKS`)."""
    usage: Usage | None = None
    """An assistant message's token counts."""
    stop_reason: str | None = None
    """Why an assistant message ended (``stop``, ``toolUse``, ``length``, ``aborted``, ``error``)."""
    error_message: str | None = None
    """Why it ended in ``error``."""


# -- streamed pieces -----------------------------------------------------------------------------------------------


class _Piece(_Tagged, frozen=True):
    delta: str | None = None
    """The piece."""


class TextDelta(_Piece, frozen=True, tag="text_delta"):
    """A piece of streamed text."""


class ThinkingDelta(_Piece, frozen=True, tag="thinking_delta"):
    """A piece of streamed thinking."""


Update: TypeAlias = TextDelta | ThinkingDelta
"""An ``assistantMessageEvent`` piece hive reads."""


# -- events ------------------------------------------------------------------------------------------------------


class SessionHeader(_Tagged, frozen=True, tag="session"):
    """The first line of ``--mode json``: the session."""

    id: str | None = None
    """Pi's session id."""


class MessageStart(_Tagged, frozen=True, tag="message_start"):
    """A message begins."""


class MessageUpdate(_Tagged, frozen=True, tag="message_update"):
    """A streamed piece of the assistant message."""

    assistant_message_event: Update | None = None
    """The piece (``None`` for one hive does not read: see :data:`EVENTS`)."""


class MessageEnd(_Tagged, frozen=True, tag="message_end"):
    """A message is complete (an assistant message repeats its streamed text)."""

    message: PiMessage | None = None
    """The message."""


class _ToolExecution(_Tagged, frozen=True):
    tool_call_id: str | None = None
    """The call's id."""


class ToolExecutionStart(_ToolExecution, frozen=True, tag="tool_execution_start"):
    """Pi starts running a tool (it asks no one)."""

    tool_name: str | None = None
    """The tool (``bash``, ``read``, an extension's)."""
    args: dict[str, object] | None = None
    """The tool's arguments, free-form."""


class ToolResult(msgspec.Struct, frozen=True):
    """A tool's outcome."""

    content: list[object] | None = None
    """Its output blocks: text blocks, the others shown as JSON."""


class ToolExecutionEnd(_ToolExecution, frozen=True, tag="tool_execution_end"):
    """A tool finished."""

    result: ToolResult | None = None
    """Its outcome."""
    is_error: bool | None = None
    """Whether it failed."""


class AgentEnd(_Tagged, frozen=True, tag="agent_end"):
    """The run ended."""


class AgentSettled(_Tagged, frozen=True, tag="agent_settled"):
    """The run ended (builds that send it)."""


_MessageEvent: TypeAlias = MessageStart | MessageUpdate | MessageEnd
_ToolEvent: TypeAlias = ToolExecutionStart | ToolExecutionEnd
Event: TypeAlias = SessionHeader | _MessageEvent | _ToolEvent | AgentEnd | AgentSettled
"""A Pi event hive reads."""

EVENTS = WireUnion[Event].of("type", Event, optional={"message_update": "assistantMessageEvent"})
"""Pi's events by ``type``."""

RUN_ENDS = frozenset({"agent_end", "agent_settled"})
"""The events that end a run, by ``type``."""


def decode_event(raw: Mapping[str, object]) -> Event | Unknown:
    """The typed event of one parsed line (responses and extension requests are the backend's)."""
    return EVENTS.decode(raw)
