"""OpenAI Responses (``POST …/responses``), streaming: the first-party OpenAI provider.

Requests are stateless (``store: false``): the whole conversation is sent each time, and reasoning survives
between requests as encrypted content. Each reasoning item (its id, encrypted content and summary) travels in
:attr:`~hive_core.ThinkingPart.signature` with provider ``openai``, and goes back unchanged on the next request.
The SDK builds and sends the request; the stream's events are decoded here into msgspec structs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import Any
from typing import Final
from typing import Unpack

import msgspec

from hive_core import ChatError
from hive_core import chat
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart

from ._client import keyed_connection
from ._openai_base import OpenAIClientBase
from ._openai_base import OpenAIConnection
from ._openai_base import error_from_payload
from ._openai_base import unreadable
from ._tool_images import data_url
from ._tool_images import tool_images
from .registry import required_setting
from .settings import ProviderSettings

__all__ = ["SIGNATURE_PROVIDER", "OpenAIResponsesChatClient", "from_settings"]

SIGNATURE_PROVIDER: Final = "openai"
"""The provider recorded on the thinking this client returns; only such thinking is sent back to it."""

_REASONING_PREFIXES: Final = ("o1", "o3", "o4", "gpt-5", "codex")


class _ReasoningRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One reasoning item as kept in a thinking signature."""

    id: str
    encrypted_content: str
    summary: list[str] = msgspec.field(default_factory=list[str])


_encode_records = msgspec.json.Encoder().encode
_decode_records = msgspec.json.Decoder(list[_ReasoningRecord]).decode


class _Summary(msgspec.Struct, gc=False):
    text: str = ""


class _Item(msgspec.Struct, gc=False):
    type: str = ""
    id: str | None = None
    call_id: str | None = None
    name: str | None = None
    arguments: str | None = None
    encrypted_content: str | None = None
    summary: list[_Summary] | None = None


class _InputDetails(msgspec.Struct, gc=False):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct, gc=False):
    input_tokens: int | None = None
    output_tokens: int | None = None
    input_tokens_details: _InputDetails | None = None


class _Incomplete(msgspec.Struct, gc=False):
    reason: str | None = None


class _ResponseError(msgspec.Struct, gc=False):
    code: str | None = None
    message: str | None = None


class _Response(msgspec.Struct, gc=False):
    status: str | None = None
    model: str | None = None
    usage: _Usage | None = None
    incomplete_details: _Incomplete | None = None
    error: _ResponseError | None = None


class _Event(msgspec.Struct, gc=False):
    type: str = ""
    delta: str = ""
    output_index: int = 0
    item: _Item | None = None
    arguments: str | None = None
    response: _Response | None = None
    code: str | None = None
    message: str | None = None


class _Typed(msgspec.Struct, gc=False):
    type: str = ""


_decode_event = msgspec.json.Decoder(_Event).decode
_decode_typed = msgspec.json.Decoder(_Typed).decode

_THINKING_DELTAS: Final = frozenset(
    {"response.reasoning_summary_text.delta", "response.reasoning_text.delta"}
)
_HANDLED: Final = frozenset(
    {
        "response.output_text.delta",
        "response.refusal.delta",
        *_THINKING_DELTAS,
        "response.reasoning_summary_part.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.added",
        "response.output_item.done",
        "response.completed",
        "response.incomplete",
        "response.failed",
        "error",
    }
)


class OpenAIResponsesChatClient(OpenAIClientBase):
    """A model behind the OpenAI Responses API, as a :class:`~hive_core.ChatClient`; connected like
    :class:`~hive_providers.openai_chat.OpenAIChatClient` (the SDK is imported on the first request)."""

    def __init__(
        self,
        *,
        model: str,
        reasoning: bool | None = None,
        reasoning_summary: str | None = "auto",
        **connection: Unpack[OpenAIConnection],
    ) -> None:
        """Configure the client; nothing is imported or connected until the first request.

        ``reasoning`` says whether the model reasons (default: guessed from its name: ``o1``, ``o3``, ``o4``,
        ``gpt-5``, ``codex``). A reasoning model is asked for its ``reasoning_summary`` (``None``: none) and
        its encrypted reasoning, which is sent back on later requests.
        """
        super().__init__(model=model, **connection)
        if reasoning is None:
            name = model.lower()
            reasoning = name.startswith(_REASONING_PREFIXES) and "chat" not in name
        self._reasoning = reasoning
        self._summary = reasoning_summary

    def thinking(self) -> bool:
        """For reasoning models."""
        return self._reasoning

    def request_body(self, messages: Sequence[Message], options: chat.ChatOptions) -> dict[str, Any]:
        """The JSON body of the request for ``messages`` and ``options``."""
        body: dict[str, Any] = {
            "model": options.model or self.model,
            "input": _input(messages),
            "stream": True,
            "store": False,
        }
        if options.instructions and options.instructions.strip():
            body["instructions"] = options.instructions
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            body["max_output_tokens"] = options.max_output_tokens
        if options.tools:
            body["tools"] = [_function(tool) for tool in options.tools]
            body["tool_choice"] = _tool_choice(options.tool_choice)
        effort = self.api_effort(options.reasoning_effort)
        if self._reasoning:
            reasoning: dict[str, Any] = {}
            if self._summary is not None:
                reasoning["summary"] = self._summary
            if effort is not None:
                reasoning["effort"] = effort
            if reasoning:
                body["reasoning"] = reasoning
            body["include"] = ["reasoning.encrypted_content"]
        elif effort is not None:
            body["reasoning"] = {"effort": effort}
        return body

    async def stream(
        self, messages: Sequence[Message], options: chat.ChatOptions
    ) -> AsyncIterator[chat.ChatUpdate]:
        """Stream the model's response: text, reasoning summaries with their signature, function-call pieces,
        then usage and the finish."""
        provider = self.provider
        state = _State(provider)
        held = state.held
        calls = state.calls
        decode = _decode_event
        async with self._payloads("/responses", self.request_body(messages, options)) as stream:
            async for payloads in stream:
                for data in payloads:
                    try:
                        event = decode(data)
                    except msgspec.ValidationError:
                        # An event this client does not read may have fields shaped unlike the ones it does.
                        if _kind(provider, data) in _HANDLED:
                            raise ChatError(
                                f"{provider}: unreadable event {data[:200]!r}", code="network"
                            ) from None
                        continue
                    except (msgspec.DecodeError, RecursionError) as exc:
                        raise unreadable(provider, exc) from exc
                    # The deltas, one per chunk, are handled inline; the rest arrive a few times per response.
                    kind = event.type
                    if kind == "response.output_text.delta":
                        text = event.delta
                        if text.isspace():
                            held.append(text)
                        elif text:
                            if held:
                                text = "".join(held) + text
                                held.clear()
                            yield chat.TextUpdate(text)
                    elif kind == "response.function_call_arguments.delta":
                        index = calls.get(event.output_index)
                        if index is not None and event.delta:
                            state.streamed[index] = True
                            yield chat.ToolCallUpdate(index, arguments=event.delta)
                    elif kind in _THINKING_DELTAS:
                        if event.delta:
                            state.thought = True
                            yield chat.ThinkingUpdate(event.delta)
                    elif kind in _HANDLED:
                        for update in state.handle(event):
                            yield update
        for update in state.end():
            yield update


class _State:
    """What a response stream has shown so far, and the handling of its less frequent events."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.held: list[str] = []
        """Whitespace-only text, sent only if real text follows."""
        self.calls: dict[int, int] = {}
        """A function call's ``output_index`` → its index among this response's calls."""
        self.streamed: list[bool] = []
        """Per call, whether any of its arguments were sent on."""
        self.records: list[_ReasoningRecord] = []
        self.thought = False
        self.final: _Response | None = None

    def handle(self, event: _Event) -> list[chat.ChatUpdate]:
        """The updates for one event other than a text, argument or reasoning delta."""
        kind = event.type
        if kind == "response.output_item.added" or kind == "response.output_item.done":
            item = event.item
            if item is None:
                return []
            if item.type == "function_call":
                return self._call(event.output_index, item)
            if item.type == "reasoning" and kind == "response.output_item.done":
                return self._reasoning(item)
        elif kind == "response.function_call_arguments.done":
            index = self.calls.get(event.output_index)
            if index is not None and not self.streamed[index] and event.arguments:
                self.streamed[index] = True
                return [chat.ToolCallUpdate(index, arguments=event.arguments)]
        elif kind == "response.reasoning_summary_part.added":
            if self.thought:
                return [chat.ThinkingUpdate("\n\n")]
        elif kind == "response.refusal.delta":
            if event.delta:
                return [chat.TextUpdate(event.delta)]
        elif kind == "response.completed" or kind == "response.incomplete":
            self.final = event.response or _Response(status=kind.removeprefix("response."))
        elif kind == "response.failed":
            failed = event.response.error if event.response is not None else None
            message = (failed.message if failed else None) or "the response failed"
            raise error_from_payload(self.provider, message, failed.code if failed else None)
        elif kind == "error":
            raise error_from_payload(self.provider, event.message or "", event.code)
        return []

    def _call(self, output_index: int, item: _Item) -> list[chat.ChatUpdate]:
        index = self.calls.get(output_index)
        if index is None:
            self.held.clear()
            index = self.calls[output_index] = len(self.streamed)
            self.streamed.append(bool(item.arguments))
            return [chat.ToolCallUpdate(index, item.call_id, item.name, item.arguments or "")]
        if not self.streamed[index] and item.arguments:
            # Arguments that came whole, with the finished item, instead of as deltas.
            self.streamed[index] = True
            return [chat.ToolCallUpdate(index, arguments=item.arguments)]
        return []

    def _reasoning(self, item: _Item) -> list[chat.ChatUpdate]:
        if not item.id or not item.encrypted_content:
            return []  # without its encrypted content a reasoning item cannot be sent back statelessly
        summary = [part.text for part in item.summary or ()]
        self.records.append(_ReasoningRecord(item.id, item.encrypted_content, summary))
        signature = _encode_records(self.records).decode()
        return [chat.ThinkingUpdate("", signature=signature, provider=SIGNATURE_PROVIDER)]

    def end(self) -> list[chat.ChatUpdate]:
        """The closing updates (held text, usage, the finish), or ``ChatError`` when the response never
        completed."""
        final = self.final
        if final is None:
            raise ChatError(
                f"{self.provider}: the stream ended before the response completed", code="network"
            )
        updates: list[chat.ChatUpdate] = []
        if self.held and not self.streamed:
            updates.append(chat.TextUpdate("".join(self.held)))
        usage = final.usage
        if usage is not None:
            details = usage.input_tokens_details
            updates.append(
                chat.UsageUpdate(
                    usage.input_tokens or 0,
                    usage.output_tokens or 0,
                    (details.cached_tokens or 0) if details is not None else 0,
                )
            )
        updates.append(chat.FinishUpdate(_finish(final, bool(self.streamed)), final.model or None))
        return updates


def _kind(provider: str, data: bytes) -> str:
    try:
        return _decode_typed(data).type
    except (msgspec.DecodeError, RecursionError) as exc:
        raise unreadable(provider, exc) from exc


def _finish(final: _Response, called: bool) -> chat.FinishReason:
    if final.status == "incomplete":
        reason = final.incomplete_details.reason if final.incomplete_details is not None else None
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if called else "stop"


def _function(tool: chat.ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": False,
    }


def _tool_choice(choice: chat.ToolChoice) -> str | dict[str, Any]:
    if isinstance(choice, chat.RequiredTool):
        return {"type": "function", "name": choice.name}
    return choice


def _reasoning_items(part: ThinkingPart) -> list[dict[str, Any]]:
    """The reasoning items kept in a thinking part this provider issued (none for anybody else's)."""
    if part.provider != SIGNATURE_PROVIDER or not part.signature:
        return []
    try:
        records = _decode_records(part.signature)
    except msgspec.DecodeError:
        return []
    return [
        {
            "type": "reasoning",
            "id": r.id,
            "encrypted_content": r.encrypted_content,
            "summary": [{"type": "summary_text", "text": text} for text in r.summary],
        }
        for r in records
    ]


def _input(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """hive's conversation as Responses input items."""
    items: list[dict[str, Any]] = []
    for message in messages:
        role = message.role
        if role == "assistant":
            reasoning: list[dict[str, Any]] = []
            output: list[dict[str, Any]] = []
            for part in message.parts:
                if isinstance(part, ThinkingPart):
                    reasoning += _reasoning_items(part)
                elif isinstance(part, TextPart):
                    if part.text.strip():
                        output.append({"role": "assistant", "content": part.text})
                elif isinstance(part, ToolCallPart):
                    output.append(
                        {
                            "type": "function_call",
                            "call_id": part.id,
                            "name": part.name,
                            "arguments": part.arguments_text or "{}",
                        }
                    )
            if output:
                # A reasoning item must be followed by the output it led to.
                items += reasoning
                items += output
        elif role == "tool":
            items += (
                {"type": "function_call_output", "call_id": r.call_id, "output": r.content}
                for r in message.tool_results
            )
            images: list[dict[str, Any]] = []
            for line, carried in tool_images(message.tool_results):
                images.append({"type": "input_text", "text": line})
                images += ({"type": "input_image", "image_url": data_url(i)} for i in carried)
            if images:
                items.append({"role": "user", "content": images})
        else:
            items.append({"role": role, "content": message.text})
    return items


def from_settings(settings: ProviderSettings) -> OpenAIResponsesChatClient:
    """The ``openai`` provider: the Responses API at ``settings.endpoint`` (default: the SDK's endpoint).

    Raises :class:`~hive_providers.registry.MissingSettingError` without a key or a model.
    """
    return OpenAIResponsesChatClient(model=required_setting(settings, "model"), **keyed_connection(settings))
