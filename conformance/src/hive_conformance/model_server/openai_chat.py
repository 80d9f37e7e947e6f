"""OpenAI Chat Completions: ``chat.completion.chunk`` events ending in ``data: [DONE]``, or one
``chat.completion`` body. Thinking travels as ``reasoning_content``, the field OpenAI-compatible servers use."""

from __future__ import annotations

from typing import Any
from typing import ClassVar
from typing import cast

from hive_conformance.script import Round
from hive_conformance.script import ScriptFinishReason
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage

from .recording import Endpoint
from .wire import CREATED
from .wire import Call
from .wire import Frame
from .wire import WireApi
from .wire import joined
from .wire import sse_event

__all__ = ["OpenAIChatApi", "openai_error_body", "openai_usage"]

_FINISH: dict[ScriptFinishReason, str] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "content_filter": "content_filter",
}

_ERRORS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def openai_error_body(status: int, message: str) -> dict[str, Any]:
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    kind, code = _ERRORS.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def openai_usage(usage: Usage | None) -> dict[str, Any]:
    """Chat Completions usage; zeros when the round scripts none."""
    usage = usage or Usage(input_tokens=0, output_tokens=0)
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
    }


class OpenAIChatApi(WireApi):
    """``POST …/chat/completions``. The usage chunk is sent only when the request sets
    ``stream_options.include_usage``, as OpenAI does."""

    endpoint: ClassVar[Endpoint] = "openai_chat"

    def stream(self, round_: Round, call: Call) -> list[Frame]:
        completion_id = _completion_id(call)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return sse_event(_envelope(completion_id, call, "chat.completion.chunk", choices=[choice]))

        frames = [Frame(chunk({"role": "assistant", "content": "", "refusal": None}))]
        tool_index = 0
        for part in round_.parts:
            if isinstance(part, ScriptText):
                frames += [Frame(chunk({"content": text}), chunks=1) for text in part.chunks]
            elif isinstance(part, ScriptThinking):
                frames += [Frame(chunk({"reasoning_content": text}), chunks=1) for text in part.chunks]
            else:
                header = {
                    "index": tool_index,
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": ""},
                }
                frames.append(Frame(chunk({"tool_calls": [header]})))
                for text in part.arguments:
                    delta = {"tool_calls": [{"index": tool_index, "function": {"arguments": text}}]}
                    frames.append(Frame(chunk(delta), chunks=1))
                tool_index += 1
        frames.append(Frame(chunk({}, _FINISH[round_.effective_finish_reason]), closing=True))
        options: Any = call.body.get("stream_options")
        if isinstance(options, dict) and cast("dict[str, Any]", options).get("include_usage") is True:
            envelope = _envelope(completion_id, call, "chat.completion.chunk", choices=[])
            envelope["usage"] = openai_usage(round_.usage)
            frames.append(Frame(sse_event(envelope), closing=True))
        frames.append(Frame(b"data: [DONE]\n\n", closing=True))
        return frames

    def body(self, round_: Round, call: Call) -> Any:
        text = "".join(joined(part.chunks) for part in round_.parts if isinstance(part, ScriptText))
        thinking = "".join(joined(part.chunks) for part in round_.parts if isinstance(part, ScriptThinking))
        calls = [part for part in round_.parts if isinstance(part, ScriptToolCall)]
        message: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
        if thinking:
            message["reasoning_content"] = thinking
        if calls:
            message["tool_calls"] = [
                {
                    "id": part.id,
                    "type": "function",
                    "function": {"name": part.name, "arguments": joined(part.arguments)},
                }
                for part in calls
            ]
        choice = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": _FINISH[round_.effective_finish_reason],
        }
        envelope = _envelope(_completion_id(call), call, "chat.completion", choices=[choice])
        envelope["usage"] = openai_usage(round_.usage)
        return envelope

    def malformed_event(self, call: Call) -> bytes:
        return (
            b'data: {"id": "' + _completion_id(call).encode() + b'", "choices": [{"delta": {"content": \n\n'
        )

    def error_body(self, status: int, message: str) -> Any:
        return openai_error_body(status, message)

    def context_length_error(self, message: str | None) -> tuple[int, Any]:
        text = message or (
            "This model's maximum context length is 128000 tokens. However, your messages resulted in "
            "130000 tokens. Please reduce the length of the messages."
        )
        body = openai_error_body(400, text)
        body["error"].update(param="messages", code="context_length_exceeded")
        return 400, body

    def headers(self, call: Call) -> dict[str, str]:
        return {"x-request-id": f"req_scripted_{call.round_index}"}


def _completion_id(call: Call) -> str:
    return f"chatcmpl-scripted-{call.round_index}"


def _envelope(completion_id: str, call: Call, kind: str, *, choices: list[Any]) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": kind,
        "created": CREATED,
        "model": call.model,
        "system_fingerprint": None,
        "choices": choices,
    }
