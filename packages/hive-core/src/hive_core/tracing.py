"""Traces of turns, model requests, tool calls and MCP calls, named after the OpenTelemetry GenAI conventions.

The kernel speaks to a :class:`Tracer`, a small interface a host installs once per process
(:func:`install_tracer`); until one is installed every call goes to :data:`NO_TRACER`, whose spans do nothing,
so a host without tracing pays a function call per turn, model request and tool call, and nothing per streamed
delta. The spans hive opens (each a child of the span current in its task):

- ``invoke_agent {agent}``: one turn (:func:`turn_span`; INTERNAL for hive's own loop, CLIENT for a
  coding-agent CLI);
- ``chat {model}``: one model request (:class:`TracedChatClient`, which wraps each provider's client, so each
  provider a fallback chain asks and each retry of the chain is a span of its own; :func:`traced` moves an
  adapter's own retries out of the span, so each HTTP request is one span);
- ``execute_tool {tool}``: one tool call (:func:`tool_span`), with the permission verdict
  (:func:`annotate`);
- ``{mcp.method.name} {target}``: one call to an MCP server (:func:`mcp_span`).

Message content (``gen_ai.input.messages``, ``gen_ai.output.messages``, tool arguments and results) is recorded
only when the tracer says :attr:`Tracer.capture_content`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from collections.abc import Generator
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Final
from typing import Literal
from typing import Protocol
from typing import runtime_checkable

import anyio
import msgspec

from .chat import ChatClient
from .chat import ChatOptions
from .chat import ChatUpdate
from .chat import FinishUpdate
from .chat import TextUpdate
from .chat import ToolCallUpdate
from .chat import UsageUpdate
from .chat import WrappingChatClient
from .failures import ChatError
from .fallback import RetryingChatClient
from .messages import Message
from .messages import TextPart
from .messages import ThinkingPart
from .messages import ToolCallPart
from .messages import ToolResultPart

__all__ = [
    "NO_SPAN",
    "NO_TRACER",
    "RESUMED_ATTRIBUTE",
    "VERDICT_ATTRIBUTE",
    "AttributeValue",
    "RetriesItself",
    "Span",
    "SpanKind",
    "TracedAgent",
    "TracedChatClient",
    "Tracer",
    "annotate",
    "error_type",
    "install_tracer",
    "mcp_span",
    "messages_json",
    "tool_span",
    "traced",
    "tracer",
    "turn_span",
]

AttributeValue = str | bool | int | float | Sequence[str]
"""A span attribute's value, as OpenTelemetry takes it."""

SpanKind = Literal["internal", "client"]
"""INTERNAL for work in this process, CLIENT for a call to another (a model's API, a coding-agent CLI)."""


VERDICT_ATTRIBUTE: Final = "hive.permission.verdict"
"""The ``execute_tool`` span's attribute for how the approval gate judged the call: ``allowed``, ``approved``,
``denied``, ``rejected`` or ``unavailable`` (no approval service for an ``ask``)."""

RESUMED_ATTRIBUTE: Final = "hive.turn.resumed"
"""``true`` on the ``invoke_agent`` span of a turn a restarted process finished after it was suspended on an
approval wait (:class:`~hive_core.sessions.SuspendedTurn`)."""


@dataclass(frozen=True)
class TracedAgent:
    """What runs a session's turns, as its ``invoke_agent`` spans name it."""

    name: str = "hive"
    """``gen_ai.agent.name``: ``hive`` for hive's own loop, else the coding-agent CLI's name."""
    provider: str | None = None
    """``gen_ai.provider.name`` of the model, when known."""
    model: str | None = None
    """``gen_ai.request.model``, when known."""
    client: bool = False
    """Whether another program runs the turns (a coding-agent CLI): the span is then a CLIENT span."""


class Span(Protocol):
    """One span, started and not yet ended."""

    def set(self, key: str, value: AttributeValue) -> None:
        """Set an attribute."""
        ...

    def fail(self, error_type: str) -> None:
        """Mark the span failed: ``error.type`` and an error status."""
        ...

    def end(self) -> None:
        """End the span (once)."""
        ...


class Tracer(Protocol):
    """Where spans go: an OpenTelemetry tracer provider behind a host's adapter, or nowhere (:data:`NO_TRACER`)."""

    @property
    def enabled(self) -> bool:
        """Whether spans are recorded at all; ``False`` lets callers skip preparing attributes."""
        ...

    @property
    def capture_content(self) -> bool:
        """Whether message content, tool arguments and results go into spans (an opt-in)."""
        ...

    def start(
        self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue], parent: Span | None
    ) -> Span:
        """Start a span, a child of ``parent`` (``None``: a root)."""
        ...


class _NoSpan:
    __slots__ = ()

    def set(self, key: str, value: AttributeValue) -> None:
        pass

    def fail(self, error_type: str) -> None:
        pass

    def end(self) -> None:
        pass


NO_SPAN: Final[Span] = _NoSpan()
"""The span that records nothing."""


class _NoTracer:
    __slots__ = ()

    @property
    def enabled(self) -> bool:
        return False

    @property
    def capture_content(self) -> bool:
        return False

    def start(
        self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue], parent: Span | None
    ) -> Span:
        return NO_SPAN


NO_TRACER: Final[Tracer] = _NoTracer()
"""The tracer in force until a host installs another: no span is recorded."""

_tracer: Tracer = NO_TRACER
_current: ContextVar[Span | None] = ContextVar("hive_current_span", default=None)


def install_tracer(new: Tracer | None) -> None:
    """Make ``new`` the process's tracer (``None``: back to :data:`NO_TRACER`)."""
    global _tracer
    _tracer = new if new is not None else NO_TRACER


def tracer() -> Tracer:
    """The process's tracer."""
    return _tracer


def annotate(key: str, value: AttributeValue) -> None:
    """Set an attribute on the span current in this task (nothing when there is none)."""
    span = _current.get()
    if span is not None:
        span.set(key, value)


def error_type(exc: BaseException) -> str:
    """``error.type`` of a failure: a model failure's code (``rate_limit``, ``network``, ...), else the
    exception's class name."""
    if isinstance(exc, ChatError):
        return exc.code
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return "cancelled"
    return type(exc).__qualname__


@contextmanager
def _current_span(name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue]) -> Generator[Span]:
    """A span, child of the current one and current itself for the block; a failure leaving the block is its
    ``error.type``."""
    span = _tracer.start(name, kind, attributes, _current.get())
    token = _current.set(span)
    try:
        yield span
    except BaseException as exc:
        span.fail(error_type(exc))
        raise
    finally:
        _current.reset(token)
        span.end()


_OFF: Final[AbstractContextManager[Span]] = nullcontext(NO_SPAN)
"""The block every span helper returns while tracing is off: nothing is built per call."""


def turn_span(agent: TracedAgent, session_id: str, prompt: str | None = None) -> AbstractContextManager[Span]:
    """The ``invoke_agent`` span of one turn: hive's own loop (INTERNAL) or a coding-agent CLI (CLIENT); the
    user's ``prompt`` is recorded only when content is captured."""
    if not _tracer.enabled:
        return _OFF
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent.name,
        "gen_ai.conversation.id": session_id,
    }
    if agent.provider:
        attributes["gen_ai.provider.name"] = agent.provider
    if agent.model:
        attributes["gen_ai.request.model"] = agent.model
    if prompt is not None and _tracer.capture_content:
        attributes["gen_ai.input.messages"] = messages_json([Message("user", [TextPart(prompt)])])
    kind: SpanKind = "client" if agent.client else "internal"
    return _current_span(f"invoke_agent {agent.name}", kind, attributes)


def tool_span(call: ToolCallPart) -> AbstractContextManager[Span]:
    """The ``execute_tool`` span of one tool call; its arguments only with content capture."""
    if not _tracer.enabled:
        return _OFF
    attributes: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.call.id": call.id,
        "gen_ai.tool.type": "function",
    }
    if _tracer.capture_content:
        attributes["gen_ai.tool.call.arguments"] = call.arguments_text
    return _current_span(f"execute_tool {call.name}", "internal", attributes)


def mcp_span(
    method: str, target: str, *, server: str, session_id: str | None = None
) -> AbstractContextManager[Span]:
    """The span of one request to an MCP server (``tools/call`` of a tool, ...), as a client."""
    if not _tracer.enabled:
        return _OFF
    attributes: dict[str, AttributeValue] = {"mcp.method.name": method, "hive.mcp.server": server}
    if method == "tools/call":
        attributes["gen_ai.tool.name"] = target
        attributes["gen_ai.operation.name"] = "execute_tool"
    if session_id:
        attributes["mcp.session.id"] = session_id
    return _current_span(f"{method} {target}", "client", attributes)


def messages_json(messages: Sequence[Message]) -> str:
    """``messages`` in the conventions' JSON form for ``gen_ai.input.messages`` (role and typed parts)."""
    return _JSON.encode([_message(message) for message in messages]).decode()


def _message(message: Message) -> dict[str, object]:
    parts: list[dict[str, object]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "content": part.text})
        elif isinstance(part, ThinkingPart):
            parts.append({"type": "reasoning", "content": part.text})
        elif isinstance(part, ToolCallPart):
            parts.append(
                {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments_text}
            )
        else:
            result: ToolResultPart = part
            parts.append({"type": "tool_call_response", "id": result.call_id, "response": result.content})
    return {"role": message.role, "parts": parts}


_JSON: Final = msgspec.json.Encoder()


class TracedChatClient(WrappingChatClient):
    """Wraps one provider's client: each request it streams is a ``chat {model}`` span (CLIENT), a child of the
    span current where the request is made, with the provider, the model asked for and the one that answered
    (``gen_ai.response.model``, as the response names it), the finish reasons, the usage (cache reads included),
    the time to the first chunk and, on failure, ``error.type``.

    Only a host with tracing on wraps its clients (so a host without pays nothing per chunk); per chunk it
    looks at the update's type, and keeps the text only when content is captured.
    """

    def __init__(self, inner: ChatClient, *, provider: str, model: str | None) -> None:
        super().__init__(inner)
        self.provider = provider
        """``gen_ai.provider.name``."""
        self.model = model
        """The model requests name when their options name none."""

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream from the inner client inside a ``chat`` span."""
        active = _tracer
        model = options.model or self.model or ""
        attributes: dict[str, AttributeValue] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
        }
        if model:
            attributes["gen_ai.request.model"] = model
        if options.max_output_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            attributes["gen_ai.request.temperature"] = options.temperature
        capture = active.capture_content
        if capture:
            attributes["gen_ai.input.messages"] = messages_json(messages)
            if options.instructions:
                attributes["gen_ai.system_instructions"] = _JSON.encode(
                    [{"type": "text", "content": options.instructions}]
                ).decode()
        # Not made current: the span lives across the generator's yields, which run in the caller's context.
        span = active.start(f"chat {model}".rstrip(), "client", attributes, _current.get())
        begun = time.perf_counter()
        first: float | None = None
        finishes: list[str] = []
        usage = [0, 0, 0]
        seen_usage = False
        text: list[str] = []
        calls: dict[int, list[str]] = {}
        try:
            async for update in self.inner.stream(messages, options):
                if first is None:
                    first = time.perf_counter()
                # Ordered by frequency: this runs once per streamed chunk.
                if isinstance(update, TextUpdate):
                    if capture:
                        text.append(update.text)
                elif isinstance(update, UsageUpdate):
                    seen_usage = True
                    usage[0] += update.input_tokens
                    usage[1] += update.output_tokens
                    usage[2] += update.cached_input_tokens
                elif isinstance(update, FinishUpdate):
                    finishes.append(update.reason)
                    if update.model:
                        span.set("gen_ai.response.model", update.model)
                elif capture and isinstance(update, ToolCallUpdate):
                    slot = calls.setdefault(update.index, ["", "", ""])
                    slot[0] = update.id or slot[0]
                    slot[1] = update.name or slot[1]
                    slot[2] += update.arguments
                yield update
        except GeneratorExit:  # the caller stopped reading: not a failure of the request
            raise
        except BaseException as exc:
            span.fail(error_type(exc))
            raise
        finally:
            if first is not None:
                span.set("gen_ai.response.time_to_first_chunk", first - begun)
            if finishes:
                span.set("gen_ai.response.finish_reasons", finishes)
            if seen_usage:
                span.set("gen_ai.usage.input_tokens", usage[0])
                span.set("gen_ai.usage.output_tokens", usage[1])
                span.set("gen_ai.usage.cache_read.input_tokens", usage[2])
            if capture and (text or calls):
                span.set("gen_ai.output.messages", _output(text, calls, finishes))
            span.end()


def _output(text: list[str], calls: Mapping[int, list[str]], finishes: list[str]) -> str:
    parts: list[dict[str, object]] = []
    if text:
        parts.append({"type": "text", "content": "".join(text)})
    for index in sorted(calls):
        call_id, name, arguments = calls[index]
        parts.append({"type": "tool_call", "id": call_id, "name": name, "arguments": arguments})
    message: dict[str, object] = {"role": "assistant", "parts": parts}
    if finishes:
        message["finish_reason"] = finishes[-1]
    return _JSON.encode([message]).decode()


@runtime_checkable
class RetriesItself(Protocol):
    """A client that retries a failed request inside one :meth:`~hive_core.ChatClient.stream` (an adapter
    whose vendor SDK retries), ``max_retries`` times, read when it builds its SDK client."""

    max_retries: int


def traced(client: ChatClient, *, provider: str, model: str | None) -> ChatClient:
    """``client`` with each HTTP request it makes a ``chat`` span. A client that retries by itself
    (:class:`RetriesItself`, not yet used) would make its retries inside one span: its retries are turned off and
    a :class:`~hive_core.fallback.RetryingChatClient` around the traced client makes as many, so each try is a
    span of its own."""
    traced_client = TracedChatClient(client, provider=provider, model=model)
    if isinstance(client, RetriesItself) and client.max_retries > 0:
        retries, client.max_retries = client.max_retries, 0
        return RetryingChatClient(traced_client, retries=retries)
    return traced_client
