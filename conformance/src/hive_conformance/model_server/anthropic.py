"""Anthropic Messages: ``message_start``, a ``content_block_start``/``delta``/``stop`` triple per part,
``message_delta`` with the stop reason and usage, ``message_stop``; or one ``message`` body."""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from hive_conformance.script import Round
from hive_conformance.script import ScriptFinishReason
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage

from .recording import Endpoint
from .wire import Call
from .wire import Frame
from .wire import WireApi
from .wire import arguments_value
from .wire import joined
from .wire import sse_event

__all__ = ["AnthropicMessagesApi"]

_STOP: dict[ScriptFinishReason, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}

_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


class AnthropicMessagesApi(WireApi):
    """``POST …/messages``. Cached prompt tokens are reported apart, as ``cache_read_input_tokens``."""

    endpoint: ClassVar[Endpoint] = "anthropic_messages"

    def stream(self, round_: Round, call: Call) -> list[Frame]:
        usage = _usage(round_.usage)
        start_usage = {**usage, "output_tokens": min(1, usage["output_tokens"])}
        message = {**_message(call, [], None), "usage": start_usage}
        frames = [
            _frame("message_start", {"message": message}),
            _frame("ping", {}),
        ]
        for index, part in enumerate(round_.parts):
            if isinstance(part, ScriptText):
                frames.append(_frame("content_block_start", {"index": index, "content_block": _empty(part)}))
                for text in part.chunks:
                    delta = {"type": "text_delta", "text": text}
                    frames.append(_frame("content_block_delta", {"index": index, "delta": delta}, chunks=1))
            elif isinstance(part, ScriptThinking):
                frames.append(_frame("content_block_start", {"index": index, "content_block": _empty(part)}))
                for text in part.chunks:
                    delta = {"type": "thinking_delta", "thinking": text}
                    frames.append(_frame("content_block_delta", {"index": index, "delta": delta}, chunks=1))
                if part.signature is not None:
                    delta = {"type": "signature_delta", "signature": part.signature}
                    frames.append(_frame("content_block_delta", {"index": index, "delta": delta}))
            else:
                frames.append(_frame("content_block_start", {"index": index, "content_block": _empty(part)}))
                for text in part.arguments:
                    delta = {"type": "input_json_delta", "partial_json": text}
                    frames.append(_frame("content_block_delta", {"index": index, "delta": delta}, chunks=1))
            frames.append(_frame("content_block_stop", {"index": index}))
        delta = {"stop_reason": _STOP[round_.effective_finish_reason], "stop_sequence": None}
        frames.append(_frame("message_delta", {"delta": delta, "usage": usage}, closing=True))
        frames.append(_frame("message_stop", {}, closing=True))
        return frames

    def body(self, round_: Round, call: Call) -> Any:
        content = [_block(part) for part in round_.parts]
        return {
            **_message(call, content, _STOP[round_.effective_finish_reason]),
            "usage": _usage(round_.usage),
        }

    def malformed_event(self, call: Call) -> bytes:
        return b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": \n\n'

    def error_body(self, status: int, message: str) -> Any:
        kind = _ERRORS.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_scripted"}

    def context_length_error(self, message: str | None) -> tuple[int, Any]:
        return 400, self.error_body(400, message or "prompt is too long: 210000 tokens > 200000 maximum")

    def headers(self, call: Call) -> dict[str, str]:
        return {"request-id": f"req_scripted_{call.round_index}"}


def _frame(kind: str, fields: dict[str, Any], *, chunks: int = 0, closing: bool = False) -> Frame:
    return Frame(sse_event({"type": kind, **fields}, event=kind), chunks=chunks, closing=closing)


def _message(call: Call, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{call.round_index}",
        "type": "message",
        "role": "assistant",
        "model": call.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
    }


def _usage(usage: Usage | None) -> dict[str, int]:
    usage = usage or Usage(input_tokens=0, output_tokens=0)
    return {
        "input_tokens": max(0, usage.input_tokens - usage.cached_input_tokens),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
    }


def _empty(part: ScriptText | ScriptThinking | ScriptToolCall) -> dict[str, Any]:
    if isinstance(part, ScriptText):
        return {"type": "text", "text": ""}
    if isinstance(part, ScriptThinking):
        return {"type": "thinking", "thinking": "", "signature": ""}
    return {"type": "tool_use", "id": part.id, "name": part.name, "input": {}}


def _block(part: ScriptText | ScriptThinking | ScriptToolCall) -> dict[str, Any]:
    if isinstance(part, ScriptText):
        return {"type": "text", "text": joined(part.chunks)}
    if isinstance(part, ScriptThinking):
        return {"type": "thinking", "thinking": joined(part.chunks), "signature": part.signature or ""}
    return {"type": "tool_use", "id": part.id, "name": part.name, "input": arguments_value(part)}
