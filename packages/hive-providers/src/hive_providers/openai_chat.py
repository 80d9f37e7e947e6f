"""OpenAI Chat Completions (``POST …/chat/completions``), streaming: OpenAI itself and every compatible server.

The SDK builds and sends the request; the stream's chunks are decoded here into msgspec structs. Reasoning
arrives as ``reasoning_content`` (or ``reasoning``, as Ollama and others spell it) and becomes thinking; tool
calls arrive as deltas keyed by ``index`` and become :class:`~hive_core.ToolCallUpdate` pieces with the same
index. Chat Completions has no reasoning signature, so thinking is not sent back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final
from typing import Unpack

import msgspec

from hive_core import ChatError
from hive_core import chat
from hive_core.messages import Message

from ._openai_base import OpenAIClientBase
from ._openai_base import OpenAIConnection
from ._openai_base import error_from_payload
from ._openai_base import unreadable
from ._tool_images import data_url
from ._tool_images import tool_images

__all__ = ["OpenAIChatClient"]

_FINISH: Final[Mapping[str, chat.FinishReason]] = {
    "stop": "stop",
    "length": "length",
    "max_tokens": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
}


class _Function(msgspec.Struct, gc=False):
    name: str | None = None
    arguments: str | None = None


class _ToolCallDelta(msgspec.Struct, gc=False):
    index: int | None = None
    id: str | None = None
    function: _Function | None = None


class _Delta(msgspec.Struct, gc=False):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    refusal: str | None = None
    tool_calls: list[_ToolCallDelta] | None = None


class _Choice(msgspec.Struct, gc=False):
    delta: _Delta | None = None
    finish_reason: str | None = None


class _PromptDetails(msgspec.Struct, gc=False):
    cached_tokens: int | None = None


class _Usage(msgspec.Struct, gc=False):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    prompt_tokens_details: _PromptDetails | None = None


class _StreamError(msgspec.Struct, gc=False):
    message: str | None = None
    code: str | int | None = None
    type: str | None = None


class _Chunk(msgspec.Struct, gc=False):
    choices: list[_Choice] | None = None
    usage: _Usage | None = None
    error: _StreamError | None = None
    model: str | None = None


_decode_chunk = msgspec.json.Decoder(_Chunk).decode


class OpenAIChatClient(OpenAIClientBase):
    """A model behind an OpenAI Chat Completions endpoint, as a :class:`~hive_core.ChatClient`.

    ``api_key`` and ``base_url`` default to the SDK's (its ``OPENAI_API_KEY`` lookup, OpenAI's endpoint); the
    other settings of the connection are :class:`~hive_providers._openai_base.OpenAIConnection`'s. The SDK is
    imported and its client built on the first request.
    """

    def __init__(
        self,
        *,
        model: str,
        thinking: bool | None = None,
        max_tokens_field: str = "max_completion_tokens",
        carry_images: bool = True,
        **connection: Unpack[OpenAIConnection],
    ) -> None:
        """Configure the client; nothing is imported or connected until the first request.

        ``thinking`` declares whether the model returns reasoning (default: ``False`` for OpenAI, which does
        not stream it here, ``True`` for compatible servers). ``max_tokens_field`` is ``max_completion_tokens``
        for OpenAI, ``max_tokens`` for servers that only know the older name. ``carry_images``: the images
        tools returned follow their results as a user message of ``image_url`` parts (off: only the results'
        text, which names them).
        """
        super().__init__(model=model, **connection)
        self.carry_images = carry_images
        self._thinking = thinking if thinking is not None else self.provider != "openai"
        self._max_tokens_field = max_tokens_field

    def thinking(self) -> bool:
        """As configured."""
        return self._thinking

    def request_body(self, messages: Sequence[Message], options: chat.ChatOptions) -> dict[str, Any]:
        """The JSON body of the request for ``messages`` and ``options``."""
        body: dict[str, Any] = {
            "model": options.model or self.model,
            "messages": _messages(messages, options.instructions, carry_images=self.carry_images),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if options.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in options.tools
            ]
            body["tool_choice"] = _tool_choice(options.tool_choice)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.max_output_tokens is not None:
            body[self._max_tokens_field] = options.max_output_tokens
        effort = self.api_effort(options.reasoning_effort)
        if effort is not None:
            body["reasoning_effort"] = effort
        return body

    async def stream(
        self, messages: Sequence[Message], options: chat.ChatOptions
    ) -> AsyncIterator[chat.ChatUpdate]:
        """Stream the model's response: text, thinking, tool-call pieces, then usage and the finish."""
        provider = self.provider
        finish: str | None = None
        done = False
        usage: _Usage | None = None
        model: str | None = None  # the model the server says answered
        held: list[str] = []  # whitespace-only text, sent only if real text follows
        slots: dict[int, int] = {}  # the wire's tool-call index → ours
        ids: list[str | None] = []  # our index → the call's id
        decode = _decode_chunk
        async with self._payloads("/chat/completions", self.request_body(messages, options)) as stream:
            async for payloads in stream:
                for data in payloads:
                    if data == b"[DONE]":
                        done = True
                        continue
                    try:
                        chunk = decode(data)
                    except (msgspec.DecodeError, RecursionError) as exc:
                        raise unreadable(provider, exc) from exc
                    if chunk.choices:
                        for choice in chunk.choices:
                            delta = choice.delta
                            if delta is not None:
                                text = delta.content
                                if text:
                                    if text.isspace():
                                        held.append(text)
                                    else:
                                        if held:
                                            text = "".join(held) + text
                                            held.clear()
                                        yield chat.TextUpdate(text)
                                reasoning = delta.reasoning_content or delta.reasoning
                                if reasoning:
                                    yield chat.ThinkingUpdate(reasoning)
                                if delta.tool_calls:
                                    held.clear()
                                    for call in delta.tool_calls:
                                        yield _call_update(call, slots, ids)
                                if delta.refusal:
                                    yield chat.TextUpdate(delta.refusal)
                            if choice.finish_reason:
                                finish = choice.finish_reason
                    if chunk.usage is not None:
                        usage = chunk.usage
                    if chunk.model:
                        model = chunk.model
                    if chunk.error is not None:
                        error = chunk.error
                        if isinstance(error.code, int):  # some servers put the HTTP status here
                            raise error_from_payload(provider, error.message or "", error.type, error.code)
                        raise error_from_payload(provider, error.message or "", error.code or error.type)
        if finish is None and not done:
            raise ChatError(f"{provider}: the stream ended before the model finished", code="network")
        if held and not ids:
            yield chat.TextUpdate("".join(held))
        if usage is not None:
            details = usage.prompt_tokens_details
            yield chat.UsageUpdate(
                usage.prompt_tokens or 0,
                usage.completion_tokens or 0,
                (details.cached_tokens or 0) if details is not None else 0,
            )
        reason = _FINISH.get(finish or "stop", "stop")
        yield chat.FinishUpdate("tool_calls" if ids and reason == "stop" else reason, model)


def _call_update(call: _ToolCallDelta, slots: dict[int, int], ids: list[str | None]) -> chat.ToolCallUpdate:
    """The update for one tool-call delta, placed by its index.

    Some compatible servers omit ``index`` or reuse one index for several calls; a delta that brings a new id
    for an index that already has one starts a new call, and a delta with neither continues the last call.
    """
    call_id = call.id or None
    wire = call.index
    if wire is None:
        if call_id is None and ids:
            index = len(ids) - 1
            function = call.function
            return chat.ToolCallUpdate(index, None, function.name if function else None, _arguments(function))
        wire = -len(ids) - 1
    index = slots.get(wire)
    if index is None or (call_id is not None and ids[index] is not None and ids[index] != call_id):
        index = len(ids)
        ids.append(call_id)
        slots[wire] = index
    elif call_id is not None and ids[index] is None:
        ids[index] = call_id
    function = call.function
    return chat.ToolCallUpdate(
        index, call_id, (function.name or None) if function else None, _arguments(function)
    )


def _arguments(function: _Function | None) -> str:
    return (function.arguments or "") if function is not None else ""


def _tool_choice(choice: chat.ToolChoice) -> str | dict[str, Any]:
    if isinstance(choice, chat.RequiredTool):
        return {"type": "function", "function": {"name": choice.name}}
    return choice


def _messages(
    messages: Sequence[Message], instructions: str | None, *, carry_images: bool = True
) -> list[dict[str, Any]]:
    """hive's conversation as Chat Completions messages (``instructions`` first, as a system message; with
    ``carry_images`` the images tools returned after their results, in a user message)."""
    out: list[dict[str, Any]] = []
    if instructions and instructions.strip():
        out.append({"role": "system", "content": instructions})
    for message in messages:
        role = message.role
        if role == "tool":
            out.extend(
                {"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                for r in message.tool_results
            )
            images: list[dict[str, Any]] = []
            if carry_images:
                for line, carried in tool_images(message.tool_results):
                    images.append({"type": "text", "text": line})
                    images += ({"type": "image_url", "image_url": {"url": data_url(i)}} for i in carried)
            if images:
                out.append({"role": "user", "content": images})
        elif role == "assistant":
            text = message.text
            calls = message.tool_calls
            if calls:
                out.append(
                    {
                        "role": "assistant",
                        "content": text if text.strip() else None,
                        "tool_calls": [
                            {
                                "id": c.id,
                                "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments_text or "{}"},
                            }
                            for c in calls
                        ],
                    }
                )
            elif text:
                out.append({"role": "assistant", "content": text})
        else:
            out.append({"role": role, "content": message.text})
    return out
