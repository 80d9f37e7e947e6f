"""The interface every model speaks to the loop: a :class:`ChatClient` streams updates for a conversation and
says what it can do (:class:`Capabilities`); :class:`CapabilityProbe`, :class:`ModelLister` and
:class:`AsyncClosable` are what some clients can do besides."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import Any
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

import msgspec

from hive_protocol import FallbackEvent
from hive_protocol import ReasoningEffort

from .messages import Message

__all__ = [
    "AsyncClosable",
    "Capabilities",
    "CapabilityProbe",
    "ChatClient",
    "ChatOptions",
    "ChatUpdate",
    "FinishReason",
    "FinishUpdate",
    "ModelLister",
    "NoticeUpdate",
    "RequiredTool",
    "TextUpdate",
    "ThinkingUpdate",
    "ToolCallUpdate",
    "ToolChoice",
    "ToolSpec",
    "UsageUpdate",
    "WindowSource",
    "WrappingChatClient",
    "probed_capabilities",
]

FinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
"""Why a model stopped writing."""

WindowSource = Literal["server", "catalog", "configured"]
"""Where a client's context window came from: its server's metadata, the model catalog, or a window the client
was configured with."""


class RequiredTool(msgspec.Struct, frozen=True):
    """A tool choice that makes the model call this one tool."""

    name: str
    """The tool the model must call."""


ToolChoice = Literal["auto", "none", "required"] | RequiredTool
"""``auto`` (the model decides), ``none`` (no tool), ``required`` (some tool), or one :class:`RequiredTool`."""


class ToolSpec(msgspec.Struct, frozen=True):
    """A tool as the model is shown it."""

    name: str
    """The tool's name."""
    description: str
    """What it does, for the model."""
    parameters: dict[str, Any]
    """JSON Schema of its arguments object."""


class ChatOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Settings for one model request."""

    tools: list[ToolSpec] = msgspec.field(default_factory=list[ToolSpec])
    """The tools offered."""
    tool_choice: ToolChoice = "auto"
    """How the model may use them."""
    temperature: float | None = None
    """Sampling temperature; ``None`` leaves the provider's default."""
    max_output_tokens: int | None = None
    """Cap on the tokens written."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a model that reasons thinks; ``None`` leaves the model's default."""
    instructions: str | None = None
    """System text for this request only, sent in addition to the conversation's system messages."""
    model: str | None = None
    """A model override for this request."""


class TextUpdate(msgspec.Struct, frozen=True):
    """A piece of reply text."""

    text: str
    """The piece."""


class ThinkingUpdate(msgspec.Struct, frozen=True):
    """A piece of reasoning, or the signature that closes a reasoning block."""

    text: str
    """The piece (empty when only a signature arrives)."""
    signature: str | None = None
    """The provider's opaque signature for the reasoning so far."""
    provider: str | None = None
    """The provider that issued the signature."""


class ToolCallUpdate(msgspec.Struct, frozen=True):
    """A piece of a tool call; pieces with the same ``index`` are joined, ids and names arrive once."""

    index: int
    """The call's position in this response."""
    id: str | None = None
    """The call's id, on the piece that carries it."""
    name: str | None = None
    """The tool's name, on the piece that carries it."""
    arguments: str = ""
    """A piece of the arguments' JSON text."""


class UsageUpdate(msgspec.Struct, frozen=True):
    """Token usage of the request; several updates add up."""

    input_tokens: int = 0
    """Input tokens."""
    output_tokens: int = 0
    """Output tokens."""
    cached_input_tokens: int = 0
    """Input tokens served from the provider's cache."""


class FinishUpdate(msgspec.Struct, frozen=True):
    """The model stopped."""

    reason: FinishReason
    """Why."""
    model: str | None = None
    """The model that answered, as the provider's response names it (``None``: it named none)."""


class NoticeUpdate(msgspec.Struct, frozen=True):
    """Something the client decorators report to the turn's client (a retry or provider switch)."""

    event: FallbackEvent
    """The event to relay."""


ChatUpdate = TextUpdate | ThinkingUpdate | ToolCallUpdate | UsageUpdate | FinishUpdate | NoticeUpdate
"""Any update a chat client streams."""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a chat client can do: the one place a client says so, read by the loop and the decorators."""

    tools: bool = True
    """It accepts tool definitions and returns tool calls; the loop offers no tools to a client without."""
    streamed_tool_calls: bool = True
    """Tool-call arguments arrive in pieces while streaming (else each call arrives whole)."""
    thinking: bool = False
    """It can return reasoning separately from the reply."""
    context_window: int | None = None
    """The model's context window in tokens, when known; the token budget and compaction are measured against
    it."""
    context_window_source: WindowSource | None = None
    """Where :attr:`context_window` came from (``None``: not said, read as ``catalog``).

    The rule every adapter follows: a window the client was explicitly built with (``configured``: the user
    knows what their server runs) wins, then what the server itself reports once probed (``server``: Ollama's
    model info, LM Studio's model list, llama.cpp's props, the local model's GGUF header), then the maintained
    catalog of cloud models (``catalog``, matched by the model name's prefix). Only when the client knows none
    does the host fall back to ``compaction.maxContextTokens`` and then a stated default
    (:func:`hive_core.context.resolve_window`)."""


@runtime_checkable
class ChatClient(Protocol):
    """A model. Implementations stream updates and raise :class:`~hive_core.failures.ChatError` on failure."""

    @property
    def capabilities(self) -> Capabilities:
        """What the client can do."""
        ...

    def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream the model's response to ``messages``."""
        ...


@runtime_checkable
class CapabilityProbe(Protocol):
    """A client that can ask its server what it can do (the model's context window, mostly).

    :attr:`ChatClient.capabilities` is a synchronous property and never does I/O; a host awaits
    :meth:`probe_capabilities` once before a session's first request (:func:`probed_capabilities` does it for
    any client), after which ``capabilities`` reports what the server said. A probe that fails is not an error:
    the client keeps what it knew without it.
    """

    async def probe_capabilities(self) -> Capabilities:
        """Ask the server once (later calls answer from the first one's result) and return the capabilities."""
        ...


async def probed_capabilities(client: ChatClient) -> Capabilities:
    """``client``'s capabilities after it asked its server, when it can (:class:`CapabilityProbe`); else its
    capabilities as they are."""
    if isinstance(client, CapabilityProbe):
        return await client.probe_capabilities()
    return client.capabilities


@runtime_checkable
class ModelLister(Protocol):
    """A client that can say which models its endpoint offers."""

    async def list_models(self) -> Sequence[str]:
        """The model names the endpoint serves."""
        ...


@runtime_checkable
class AsyncClosable(Protocol):
    """A client that holds connections (or a loaded model) until it is closed."""

    async def aclose(self) -> None:
        """Release what the client holds; a later request opens it again."""
        ...


class WrappingChatClient:
    """The part of a decorator around one client that passes on: what the inner client can do, probing it, and
    closing it. A decorator adds its own :meth:`stream`."""

    def __init__(self, inner: ChatClient) -> None:
        self.inner = inner
        """The client wrapped."""

    @property
    def capabilities(self) -> Capabilities:
        """The inner client's."""
        return self.inner.capabilities

    async def probe_capabilities(self) -> Capabilities:
        """The inner client's, once it asked its server (:func:`probed_capabilities`)."""
        return await probed_capabilities(self.inner)

    async def aclose(self) -> None:
        """Close the inner client, when it holds connections."""
        if isinstance(self.inner, AsyncClosable):
            await self.inner.aclose()
