"""Claude Code's stream-json messages (its stdout, control messages aside) as typed values, decoded once at the edge.

As claude-agent-sdk's ``message_parser``: a message's ``type`` picks its struct (:data:`MESSAGES`); what a newer
CLI adds, or a message whose fields are not the wire's types, is an :class:`~..kit.wire.Unknown`, skipped. A
``result`` is the end of the turn whatever its fields say, so an unreadable one still decodes to a
:class:`ResultMessage` (with nothing read from it). Nested values with a kind of their own (an assistant message's
content blocks) are decoded where they are read, by their own union (:data:`BLOCKS`), so one block of a kind hive
does not know never costs the message its other blocks; a ``stream_event``, many a turn, is typed down to its delta
and decoded in one go (its API event reads as absent when it is of a kind hive does not read). Extra fields are
ignored; a missing or ``null`` field takes its default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireUnion

__all__ = [
    "BLOCKS",
    "MESSAGES",
    "AssistantMessage",
    "Block",
    "ContentBlockDelta",
    "Delta",
    "Message",
    "MessageBody",
    "MessageStart",
    "ResultMessage",
    "ServerToolUseBlock",
    "StreamEvent",
    "StreamEventMessage",
    "SystemMessage",
    "TextBlock",
    "TextDelta",
    "ThinkingBlock",
    "ThinkingDelta",
    "ToolResultBlock",
    "ToolUseBlock",
    "Usage",
    "UserMessage",
    "decode_message",
]


# -- content blocks -------------------------------------------------------------------------------------------


class TextBlock(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """Text of an assistant message (a subagent's too)."""

    text: str | None = None
    """The text."""


class ThinkingBlock(msgspec.Struct, frozen=True, tag="thinking", tag_field="type"):
    """Thinking of an assistant message."""

    thinking: str | None = None
    """The thinking text."""


class ToolUseBlock(msgspec.Struct, frozen=True, tag="tool_use", tag_field="type"):
    """A tool call the model makes."""

    id: str | None = None
    """The call's id, echoed by its ``tool_result``."""
    name: str | None = None
    """The tool's name (``Bash``, ``Task``, an MCP tool's ``mcp__server__tool``)."""
    input: dict[str, object] | None = None
    """The tool's arguments, free-form."""


class ServerToolUseBlock(ToolUseBlock, frozen=True, tag="server_tool_use"):
    """A tool call the API runs itself (web search): reported like any other."""


class ToolResultBlock(msgspec.Struct, frozen=True, tag="tool_result", tag_field="type"):
    """A tool call's outcome, in a ``user`` message."""

    tool_use_id: str | None = None
    """The id of the call it ends."""
    content: object = None
    """Its output: text, or a list of content blocks."""
    is_error: bool | None = None
    """Whether the call failed."""


Block: TypeAlias = TextBlock | ThinkingBlock | ToolUseBlock | ServerToolUseBlock | ToolResultBlock
"""A content block hive reads."""

BLOCKS = WireUnion[Block].of("type", Block)
"""The content blocks by ``type``."""


# -- stream events (``--include-partial-messages``) ---------------------------------------------------------------


class TextDelta(msgspec.Struct, frozen=True, tag="text_delta", tag_field="type"):
    """A piece of streamed text."""

    text: str | None = None
    """The piece."""


class ThinkingDelta(msgspec.Struct, frozen=True, tag="thinking_delta", tag_field="type"):
    """A piece of streamed thinking."""

    thinking: str | None = None
    """The piece."""


Delta: TypeAlias = TextDelta | ThinkingDelta
"""A ``content_block_delta``'s delta hive reads."""


class MessageRef(msgspec.Struct, frozen=True):
    """The start of a streamed API message: only its id matters."""

    id: str | None = None
    """The API message's id, repeated by the complete ``assistant`` message."""


class MessageStart(msgspec.Struct, frozen=True, tag="message_start", tag_field="type"):
    """An API message begins streaming."""

    message: MessageRef | None = None
    """The message begun."""


class ContentBlockDelta(msgspec.Struct, frozen=True, tag="content_block_delta", tag_field="type"):
    """A piece of a content block."""

    delta: Delta | None = None
    """The piece."""


StreamEvent: TypeAlias = MessageStart | ContentBlockDelta
"""An API stream event hive reads."""


# -- messages -------------------------------------------------------------------------------------------------


class _Message(msgspec.Struct, frozen=True, tag_field="type"):
    session_id: str | None = None
    """The CLI's session id (most messages carry it)."""
    parent_tool_use_id: str | None = None
    """The ``Task`` call whose subagent this message is from (``None``: the turn's own)."""


class SystemMessage(_Message, frozen=True, tag="system"):
    """A system notice: ``init`` gives the session id."""

    subtype: str | None = None
    """The notice's kind (``init``, ``status``, hook notices)."""


class StreamEventMessage(_Message, frozen=True, tag="stream_event"):
    """A raw API stream event (``--include-partial-messages``)."""

    event: StreamEvent | None = None
    """The API event (``None`` for one hive does not read: see :data:`MESSAGES`)."""


class MessageBody(msgspec.Struct, frozen=True):
    """The API message an ``assistant`` or ``user`` message carries."""

    id: str | None = None
    """The API message's id (assistant messages)."""
    content: str | list[object] | None = None
    """Its content: text, or content blocks (:data:`BLOCKS`)."""


class _BodyMessage(_Message, frozen=True):
    message: MessageBody | None = None
    """The API message."""


class AssistantMessage(_BodyMessage, frozen=True, tag="assistant"):
    """A complete assistant message: its text (repeating the deltas) and its tool calls."""


class UserMessage(_BodyMessage, frozen=True, tag="user"):
    """A user message: the tool results (and the prompt's echo)."""


class Usage(msgspec.Struct, frozen=True):
    """A turn's token counts."""

    input_tokens: int | None = None
    """Input tokens not read from or written to the cache."""
    cache_creation_input_tokens: int | None = None
    """Input tokens written to the cache."""
    cache_read_input_tokens: int | None = None
    """Input tokens read from the cache."""
    output_tokens: int | None = None
    """Output tokens."""


class ResultMessage(_Message, frozen=True, tag="result"):
    """The end of the turn."""

    subtype: str | None = None
    """``success``, or the kind of failure (``error_max_turns``, ``error_during_execution``)."""
    is_error: bool | None = None
    """Whether the turn failed."""
    result: str | None = None
    """The answer's text (or the failure's)."""
    errors: list[object] | None = None
    """The failure's messages (strings)."""
    stop_reason: str | None = None
    """The API's stop reason of the last message."""
    usage: Usage | None = None
    """The turn's token counts."""


Message: TypeAlias = SystemMessage | StreamEventMessage | AssistantMessage | UserMessage | ResultMessage
"""A stream-json message hive reads."""

MESSAGES = WireUnion[Message].of("type", Message, optional={"stream_event": "event"})
"""The stream-json messages by ``type``: a ``stream_event`` is typed down to its delta, so a text delta decodes in
one go; one whose API event hive does not read (or cannot) decodes without it."""


def decode_message(raw: Mapping[str, object]) -> Message | Unknown:
    """The typed message of one parsed stdout line; a ``result`` that cannot be read still ends the turn."""
    message = MESSAGES.decode(raw)
    if type(message) is Unknown and message.kind == "result":
        return ResultMessage()
    return message
