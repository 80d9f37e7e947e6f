"""hive's own conversation types: what the loop keeps, what sessions store and what chat clients are sent.

A conversation is a list of :class:`Message` values. Each carries a role and parts; the parts say everything a
provider needs to rebuild its own request, including opaque reasoning signatures that must go back unchanged to
the provider that issued them.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

import msgspec

from hive_protocol import RefusalKind

__all__ = [
    "Message",
    "Part",
    "Role",
    "TextPart",
    "ThinkingPart",
    "ToolCallPart",
    "ToolImage",
    "ToolResultPart",
    "system",
    "user",
]

Role = Literal["system", "user", "assistant", "tool"]
"""Who wrote a message. ``tool`` messages hold the results of the previous assistant message's calls."""


class TextPart(msgspec.Struct, tag="text", frozen=True):
    """Plain text."""

    text: str
    """The text."""


class ThinkingPart(msgspec.Struct, tag="thinking", frozen=True, omit_defaults=True):
    """A model's reasoning, with the provider's opaque signature when it gave one."""

    text: str
    """The reasoning as the model wrote it (may be empty when the provider only returns a signature)."""
    signature: str | None = None
    """Opaque token the provider needs back unchanged on the next request."""
    provider: str | None = None
    """Which provider issued the signature; other providers are not sent it."""


class ToolCallPart(msgspec.Struct, tag="tool_call", frozen=True, omit_defaults=True):
    """A tool call requested by the model."""

    id: str
    """The call's id, unique within the conversation."""
    name: str
    """The tool's name."""
    arguments_text: str
    """The arguments exactly as the model wrote them."""
    arguments: dict[str, Any] | None = None
    """The parsed arguments; ``None`` when they did not parse."""
    parse_error: str | None = None
    """Why the arguments did not parse, when they did not."""


class ToolImage(msgspec.Struct, frozen=True):
    """An image a tool returned (an MCP tool's screenshot), carried to a model that takes images."""

    media_type: str
    """Its MIME type (``image/png``)."""
    data: str
    """The image's bytes, base64-encoded."""


class ToolResultPart(msgspec.Struct, tag="tool_result", frozen=True, omit_defaults=True):
    """The outcome of one tool call, as the model reads it."""

    call_id: str
    """The call answered."""
    name: str
    """The tool called."""
    content: str
    """The result text the model reads."""
    is_error: bool = False
    """Whether the call failed or was refused."""
    refusal: RefusalKind | None = None
    """Set when the call was refused instead of run."""
    error: str | None = None
    """``Type: message`` of the failure, for the repeated-error guard."""
    images: tuple[ToolImage, ...] = ()
    """Images the tool returned besides its text (:attr:`content` names each one). A provider that carries
    them sends them as images after the results; any other sends only the text."""


Part = TextPart | ThinkingPart | ToolCallPart | ToolResultPart
"""Any part of a message."""


class Message(msgspec.Struct, frozen=True):
    """One message of a conversation."""

    role: Role
    """Who wrote it."""
    parts: list[Part]
    """Its content, in order."""

    @property
    def text(self) -> str:
        """The concatenated text parts."""
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))

    @property
    def tool_calls(self) -> list[ToolCallPart]:
        """The tool calls it requests."""
        return [p for p in self.parts if isinstance(p, ToolCallPart)]

    @property
    def tool_results(self) -> list[ToolResultPart]:
        """The tool results it carries."""
        return [p for p in self.parts if isinstance(p, ToolResultPart)]


def system(text: str) -> Message:
    """A system message."""
    return Message("system", [TextPart(text)])


def user(text: str) -> Message:
    """A user message."""
    return Message("user", [TextPart(text)])
