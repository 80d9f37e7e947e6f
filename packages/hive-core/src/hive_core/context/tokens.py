"""Token estimates: one estimator for compaction and the token-budget backstop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from hive_core.chat import ChatOptions
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart

__all__ = [
    "CONVERSATION_OVERHEAD",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "chars_to_tokens",
    "estimate_message_tokens",
    "estimate_tokens",
    "estimate_tool_tokens",
]

MESSAGE_OVERHEAD: Final = 4
"""Tokens a message costs beyond its content (role and separators)."""
CONVERSATION_OVERHEAD: Final = 3
"""Tokens a request costs beyond its messages."""
IMAGE_TOKENS: Final = 1_000
"""Tokens an image a tool returned is counted as: about what the providers charge for a screenshot at their
default detail (they scale images down to roughly a megapixel)."""


def estimate_message_tokens(message: Message) -> int:
    """Characters / 4 (rounded up) over the message's parts, each text counted once, plus
    :data:`MESSAGE_OVERHEAD`.

    A tool call costs its name and the JSON of its arguments; a tool result its content, and
    :data:`IMAGE_TOKENS` for each image it carries.
    """
    chars = images = 0
    for part in message.parts:
        if isinstance(part, TextPart | ThinkingPart):
            chars += len(part.text)
        elif isinstance(part, ToolCallPart):
            chars += len(part.name) + len(part.arguments_text)
        else:
            chars += len(part.content)
            images += len(part.images)
    return chars_to_tokens(chars) + images * IMAGE_TOKENS + MESSAGE_OVERHEAD


def estimate_tokens(messages: Sequence[Message], options: ChatOptions | None = None) -> int:
    """The estimate for a whole request: its messages, the request's instructions and
    :data:`CONVERSATION_OVERHEAD`."""
    total = CONVERSATION_OVERHEAD + sum(estimate_message_tokens(m) for m in messages)
    if options is not None and options.instructions:
        total += chars_to_tokens(len(options.instructions))
    return total


def estimate_tool_tokens(options: ChatOptions) -> int:
    """The estimate for the tool definitions a request offers (name, description, JSON schema)."""
    chars = sum(
        len(tool.name) + len(tool.description) + len(msgspec.json.encode(tool.parameters))
        for tool in options.tools
    )
    return chars_to_tokens(chars)


def chars_to_tokens(chars: int) -> int:
    """The estimator's rule: four characters a token, rounded up."""
    return -(-chars // 4)
