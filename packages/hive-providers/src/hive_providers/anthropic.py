"""Anthropic Messages through the ``anthropic`` SDK.

The SDK owns configuration, authentication, retries (it honours ``retry-after``) and error types; the adapter
reads the SDK's raw streaming response and decodes the events itself with msgspec, which costs a fraction of
building the SDK's event objects per chunk. The SDK is imported when a client first talks to the API.

Thinking signatures go back only to Anthropic (``ThinkingPart.provider == "anthropic"``). A response with one
thinking block stores that block's signature as is. A response with several thinking blocks, or with a redacted
one, stores in ``ThinkingPart.signature`` the JSON array of those blocks exactly as they are sent back (a
signature of Anthropic's is base64, so it never starts with ``[``): redacted thinking stays opaque and every
block keeps its own signature.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import Unpack
from typing import cast

import anyio.to_thread
import httpx2
import msgspec

from hive_core import ChatError
from hive_core import chat
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.redaction import mask_url
from hive_protocol import ErrorCode

from ._client import Connection
from ._client import RemoteChatClient
from ._client import keyed_connection
from ._client import sdk_http_client
from ._client import transport_error
from .errors import chat_error_for_status
from .errors import code_for_status
from .registry import required_setting
from .settings import ProviderSettings
from .sse import iter_sse

if TYPE_CHECKING:
    from anthropic import AsyncAnthropic

__all__ = ["DEFAULT_MAX_TOKENS", "THINKING_BUDGETS", "AnthropicChatClient", "from_settings"]

PROVIDER: Final = "anthropic"

DEFAULT_MAX_TOKENS: Final = 4096
"""``max_tokens`` when the request sets no output cap (the API requires one)."""

THINKING_BUDGETS: Final[dict[str, int]] = {"low": 2048, "medium": 6144, "high": 12288, "extra_high": 24576}
"""Thinking tokens per reasoning effort. They come on top of the output cap: ``max_tokens`` is the cap plus
the budget, so thinking never eats the reply."""

_EFFORTS: Final[dict[str, str]] = {"low": "low", "medium": "medium", "high": "high", "extra_high": "max"}
_STOP_REASONS: Final[dict[str, chat.FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
# The status Anthropic uses for each error type, for errors that arrive inside a stream.
_ERROR_STATUS: Final[dict[str, int]] = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_TOOL_ID = re.compile(r"[A-Za-z0-9_-]+")
_NOT_ID = re.compile(r"[^A-Za-z0-9_-]")
_CACHEABLE: Final = frozenset({"text", "tool_result", "tool_use"})
# Models that take adaptive thinking with an effort instead of a token budget: 4.6 and later, and 5+.
_ADAPTIVE_MODEL = re.compile(r"claude-(?:[a-z]+-)?(?:4-(?:[6-9]|\d\d)|[5-9]|\d\d)(?:\D|$)|mythos")
# Models that refuse sampling parameters: 4.7 and later, and 5+.
_NO_SAMPLING_MODEL = re.compile(r"claude-(?:[a-z]+-)?(?:4-(?:[7-9]|\d\d)|[5-9]|\d\d)(?:\D|$)|mythos")


class _Usage(msgspec.Struct):
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    cache_creation_input_tokens: int | None = None


class _Block(msgspec.Struct):
    type: str = ""
    id: str = ""
    name: str = ""
    input: msgspec.Raw = msgspec.Raw()
    text: str = ""
    thinking: str = ""
    signature: str = ""
    data: str = ""


class _Delta(msgspec.Struct):
    type: str = ""
    text: str = ""
    partial_json: str = ""
    thinking: str = ""
    signature: str = ""
    stop_reason: str | None = None


class _Start(msgspec.Struct):
    usage: _Usage | None = None
    model: str | None = None


class _Error(msgspec.Struct):
    type: str = ""
    message: str = ""


class _Event(msgspec.Struct):
    """Every stream event in one flat shape: decoding never fails on an event type added later."""

    type: str = ""
    index: int = 0
    delta: _Delta | None = None
    content_block: _Block | None = None
    message: _Start | None = None
    usage: _Usage | None = None
    error: _Error | None = None


_decode_event = msgspec.json.Decoder(_Event).decode
_decode_blocks = msgspec.json.Decoder(list[dict[str, Any]]).decode
_encode = msgspec.json.encode


def _sdk():  # unannotated: the inferred module type keeps the SDK's names typed
    import anthropic

    return anthropic


class AnthropicChatClient(RemoteChatClient):
    """A :class:`~hive_core.ChatClient` for Anthropic's Messages API."""

    def __init__(
        self,
        *,
        model: str,
        prompt_caching: bool = True,
        http_client: httpx2.AsyncClient | None = None,
        **connection: Unpack[Connection],
    ) -> None:
        """Configure a client; nothing is imported or connected until the first request.

        ``api_key`` falls back to the SDK's own lookup. ``base_url`` is the API root without ``/v1`` (a
        trailing ``/v1`` is dropped, since the SDK adds it). ``prompt_caching`` marks the system prompt and the
        last message as cache breakpoints. ``http_client`` is used instead of the SDK's own (and left open).
        """
        super().__init__(provider=PROVIDER, model=model, connection=connection)
        if self.base_url:
            self.base_url = _api_root(self.base_url)
        self.prompt_caching = prompt_caching
        """Whether requests mark cache breakpoints."""
        self._http_client = http_client
        self._client: AsyncAnthropic | None = None

    async def _sdk_client(self) -> AsyncAnthropic:
        if self._client is None:
            # The SDK takes seconds to import on a slow machine; keep the event loop running meanwhile.
            sdk = await anyio.to_thread.run_sync(_sdk)
            self._client = sdk.AsyncAnthropic(
                api_key=self.api_key,
                base_url=self.base_url,
                max_retries=self.max_retries,
                timeout=self.timeout,
                http_client=self._http_client or sdk_http_client(sdk.DefaultAsyncHttpxClient),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the SDK client's connections (a client passed in as ``http_client`` stays open)."""
        client, self._client = self._client, None
        if client is not None and self._http_client is None:
            await client.close()

    async def list_models(self) -> list[str]:
        """The ids of the models the key can use."""
        client = await self._sdk_client()
        sdk = _sdk()
        try:
            return [model.id async for model in client.models.list(limit=1000)]
        except sdk.APIError as exc:
            raise _sdk_error(exc) from exc

    async def stream(
        self, messages: Sequence[Message], options: chat.ChatOptions
    ) -> AsyncIterator[chat.ChatUpdate]:
        """Stream the model's answer to ``messages``; failures raise :class:`~hive_core.ChatError`."""
        body = self._request_body(messages, options)
        client = await self._sdk_client()
        sdk = _sdk()
        # The SDK's overloads cannot be matched from a dict of keyword arguments.
        create: Any = client.messages.with_streaming_response.create
        try:
            async with create(**body, timeout=self.timeout) as raw:
                async for update in _read_stream(cast(httpx2.Response, raw.http_response)):
                    yield update
        except sdk.APIError as exc:
            raise _sdk_error(exc) from exc
        except httpx2.TransportError as exc:
            raise transport_error(PROVIDER, exc, self.idle_timeout) from exc

    def _request_body(self, messages: Sequence[Message], options: chat.ChatOptions) -> dict[str, Any]:
        """The streaming Messages request for ``messages`` and ``options``, as the SDK's keyword arguments."""
        model = options.model or self.model
        system: list[str] = [options.instructions] if options.instructions else []
        turns: list[dict[str, Any]] = []
        called: set[str] = set()
        for message in messages:
            if message.role == "system":
                if text := message.text:
                    system.append(text)
                continue
            blocks = _blocks(message, called)
            if not blocks:
                continue
            role = "assistant" if message.role == "assistant" else "user"
            if turns and turns[-1]["role"] == role:
                turns[-1]["content"].extend(blocks)
            else:
                turns.append({"role": role, "content": blocks})

        budget = _thinking_budget(options.reasoning_effort)
        forced = bool(options.tools) and options.tool_choice not in ("auto", "none")
        if forced:
            budget = None  # the API refuses thinking together with a forced tool choice
        cap = options.max_output_tokens or DEFAULT_MAX_TOKENS
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": cap + (budget or 0),
            "messages": turns,
            "stream": True,
        }
        if system:
            body["system"] = [{"type": "text", "text": "\n\n".join(system)}]
        tools = [
            {"name": t.name, "description": t.description, "input_schema": _input_schema(t.parameters)}
            for t in options.tools
        ]
        if tools:
            body["tools"] = tools
            body["tool_choice"] = _tool_choice(options.tool_choice)
        elif called:
            # The API refuses tool_use and tool_result blocks when no tools are declared; declare the ones
            # the conversation used, and forbid calling them.
            body["tools"] = [
                {"name": name, "description": "Not available now.", "input_schema": {"type": "object"}}
                for name in sorted(called)
            ]
            body["tool_choice"] = {"type": "none"}
        if budget is not None:
            if _ADAPTIVE_MODEL.search(model):
                body["thinking"] = {"type": "adaptive"}
                body["output_config"] = {"effort": _EFFORTS[options.reasoning_effort or "medium"]}
            else:
                body["thinking"] = {"type": "enabled", "budget_tokens": budget}
        elif options.reasoning_effort == "none" and not forced and _ADAPTIVE_MODEL.search(model):
            body["thinking"] = {"type": "disabled"}
        if options.temperature is not None and budget is None and not _NO_SAMPLING_MODEL.search(model):
            # Thinking requires the default temperature, and the SDK no longer takes sampling parameters as
            # arguments (the API still does, for the models that accept them).
            body["extra_body"] = {"temperature": options.temperature}
        if self.prompt_caching:
            _mark_cache_breakpoints(body)
        return body


def _api_root(url: str) -> str:
    url = url.rstrip("/")
    return url.removesuffix("/v1")


def _thinking_budget(effort: str | None) -> int | None:
    if effort is None or effort == "none":
        return None
    try:
        return THINKING_BUDGETS[effort]
    except KeyError:
        raise ChatError(
            f"anthropic: unknown reasoning effort {effort!r}; expected none, low, medium, high or extra_high",
            code="request_rejected",
        ) from None


def _tool_choice(choice: chat.ToolChoice) -> dict[str, str]:
    if isinstance(choice, chat.RequiredTool):
        return {"type": "tool", "name": choice.name}
    return {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}[choice]


def _input_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    if parameters.get("type") == "object":
        return parameters
    return {"type": "object", "properties": {}, **parameters}


def _blocks(message: Message, called: set[str]) -> list[dict[str, Any]]:
    """A message's content blocks; whitespace-only text is left out (the API refuses it)."""
    blocks: list[dict[str, Any]] = []
    assistant = message.role == "assistant"
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text.strip():
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ToolCallPart):
            if assistant:
                called.add(part.name)
                call_id = _tool_id(part.id)
                blocks.append(
                    {"type": "tool_use", "id": call_id, "name": part.name, "input": part.arguments or {}}
                )
        elif isinstance(part, ToolResultPart):
            if not assistant:
                called.add(part.name)
                result: dict[str, Any] = {"type": "tool_result", "tool_use_id": _tool_id(part.call_id)}
                if part.images:
                    result["content"] = [
                        *([{"type": "text", "text": part.content}] if part.content else []),
                        *(
                            {
                                "type": "image",
                                "source": {"type": "base64", "media_type": i.media_type, "data": i.data},
                            }
                            for i in part.images
                        ),
                    ]
                elif part.content:
                    result["content"] = part.content
                if part.is_error:
                    result["is_error"] = True
                blocks.append(result)
        elif assistant and part.provider == PROVIDER and part.signature:
            blocks += _thinking_blocks(part)
    return blocks


def _tool_id(call_id: str) -> str:
    """The id as the API accepts it (letters, digits, ``_`` and ``-``): ids made by other providers may not be."""
    return call_id if _TOOL_ID.fullmatch(call_id) else _NOT_ID.sub("_", call_id) or "_"


def _thinking_blocks(part: ThinkingPart) -> list[dict[str, Any]]:
    signature = part.signature or ""
    if signature.startswith("["):
        try:
            return _decode_blocks(signature)
        except msgspec.DecodeError:
            pass
    return [{"type": "thinking", "thinking": part.text, "signature": signature}]


def _mark_cache_breakpoints(body: dict[str, Any]) -> None:
    ephemeral = {"type": "ephemeral"}
    if system := body.get("system"):
        system[-1]["cache_control"] = ephemeral
    elif tools := body.get("tools"):
        tools[-1]["cache_control"] = ephemeral
    if turns := body["messages"]:
        last = turns[-1]["content"][-1]
        if last["type"] in _CACHEABLE:
            last["cache_control"] = ephemeral


def _thinking_signature(blocks: list[dict[str, Any]]) -> str:
    if len(blocks) == 1 and blocks[0]["type"] == "thinking":
        return blocks[0]["signature"]
    return _encode(blocks).decode()


async def _read_stream(response: httpx2.Response) -> AsyncIterator[chat.ChatUpdate]:
    """Updates from a Messages event stream; ends at ``message_stop`` and fails if the stream ends before."""
    thinking: dict[int, list[str]] = {}
    signed: list[dict[str, Any]] = []
    stop_reason: str | None = None
    model: str | None = None
    usage = _Usage()
    async for sse in iter_sse(response.aiter_bytes()):
        try:
            event = _decode_event(sse.data)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise ChatError(f"anthropic: unreadable stream event ({exc})", code="internal") from exc
        kind = event.type
        # Ordered by frequency: deltas are nearly every event.
        if kind == "content_block_delta":
            delta = event.delta
            if delta is None:
                continue
            delta_kind = delta.type
            if delta_kind == "text_delta":
                if delta.text:
                    yield chat.TextUpdate(delta.text)
            elif delta_kind == "input_json_delta":
                if delta.partial_json:
                    yield chat.ToolCallUpdate(event.index, arguments=delta.partial_json)
            elif delta_kind == "thinking_delta":
                if delta.thinking:
                    thinking.setdefault(event.index, []).append(delta.thinking)
                    yield chat.ThinkingUpdate(delta.thinking)
            elif delta_kind == "signature_delta" and delta.signature:
                text = "".join(thinking.get(event.index, ()))
                signed.append({"type": "thinking", "thinking": text, "signature": delta.signature})
                yield chat.ThinkingUpdate("", signature=_thinking_signature(signed), provider=PROVIDER)
        elif kind == "content_block_start":
            block = event.content_block
            if block is None:
                continue
            if block.type == "text":
                if block.text:
                    yield chat.TextUpdate(block.text)
            elif block.type == "tool_use":
                raw = bytes(block.input)
                arguments = raw.decode() if raw not in (b"", b"{}") else ""
                yield chat.ToolCallUpdate(event.index, id=block.id, name=block.name, arguments=arguments)
            elif block.type == "thinking":
                if block.thinking:
                    thinking.setdefault(event.index, []).append(block.thinking)
                    yield chat.ThinkingUpdate(block.thinking)
            elif block.type == "redacted_thinking":
                signed.append({"type": "redacted_thinking", "data": block.data})
                yield chat.ThinkingUpdate("", signature=_thinking_signature(signed), provider=PROVIDER)
        elif kind == "message_delta":
            if event.delta is not None and event.delta.stop_reason is not None:
                stop_reason = event.delta.stop_reason
            if event.usage is not None:
                _merge_usage(usage, event.usage)
        elif kind == "message_start":
            if event.message is not None:
                model = event.message.model
                if event.message.usage is not None:
                    _merge_usage(usage, event.message.usage)
        elif kind == "message_stop":
            break
        elif kind == "error":
            raise _stream_error(event.error or _Error())
    else:
        raise ChatError("anthropic: the stream ended before message_stop", code="network")
    if usage.input_tokens is not None or usage.output_tokens is not None:
        cached = usage.cache_read_input_tokens or 0
        yield chat.UsageUpdate(
            input_tokens=(usage.input_tokens or 0) + cached + (usage.cache_creation_input_tokens or 0),
            output_tokens=usage.output_tokens or 0,
            cached_input_tokens=cached,
        )
    yield chat.FinishUpdate(_STOP_REASONS.get(stop_reason or "end_turn", "stop"), model)


def _merge_usage(into: _Usage, update: _Usage) -> None:
    """Later usage counts are cumulative: each field present replaces the earlier one."""
    for field in _Usage.__struct_fields__:
        value = getattr(update, field)
        if value is not None:
            setattr(into, field, value)


def _stream_error(error: _Error) -> ChatError:
    """An ``error`` event inside a stream (an overload, say, after the response started)."""
    code = code_for_status(_ERROR_STATUS.get(error.type, 500), error.message)
    return ChatError(f"anthropic: {error.type or 'error'}: {error.message or 'no details given'}", code=code)


def _sdk_error(exc: Exception) -> ChatError:
    """The :class:`ChatError` for an exception of the SDK's."""
    sdk = _sdk()
    if isinstance(exc, sdk.APIStatusError):
        message = exc.message
        body = cast("object", exc.body)
        if isinstance(body, dict):
            error = cast("dict[str, object]", body).get("error")
            if isinstance(error, dict):
                text = cast("dict[str, object]", error).get("message")
                if isinstance(text, str):
                    message = text
        return chat_error_for_status(PROVIDER, exc.status_code, message, exc.response.headers)
    code: ErrorCode = "unknown"
    if isinstance(exc, sdk.APITimeoutError):
        code = "timeout"
    elif isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        detail = f" ({type(cause).__name__}: {cause})" if cause is not None else ""
        where = mask_url(str(exc.request.url))
        return ChatError(f"anthropic: could not reach the server at {where}{detail}", code="network")
    return ChatError(f"anthropic: {exc}", code=code)


def from_settings(settings: ProviderSettings) -> AnthropicChatClient:
    """The ``anthropic`` provider; raises :class:`~hive_providers.registry.MissingSettingError` without a key or
    a model."""
    return AnthropicChatClient(model=required_setting(settings, "model"), **keyed_connection(settings))
