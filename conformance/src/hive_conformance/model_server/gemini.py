"""Google Gemini: ``…/models/{model}:streamGenerateContent`` (server-sent events with ``alt=sse``, else a
streamed JSON array) and ``:generateContent``. Each chunk is a ``GenerateContentResponse`` with one candidate;
thinking parts carry ``thought: true``; a final chunk holds the ``finishReason`` and ``usageMetadata``."""

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
from .wire import dumps
from .wire import joined

__all__ = ["GeminiApi"]

_FINISH: dict[ScriptFinishReason, str] = {
    "stop": "STOP",
    "length": "MAX_TOKENS",
    "tool_calls": "STOP",
    "content_filter": "SAFETY",
}

_STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

# Google's event stream ends its lines with CRLF; clients must accept it.
_NEWLINE = b"\r\n"


class GeminiApi(WireApi):
    """The Gemini API. A function call is sent whole, once its last argument chunk is due; the API has no
    call ids, so parallel calls are told apart by order alone."""

    endpoint: ClassVar[Endpoint] = "gemini"

    def stream(self, round_: Round, call: Call) -> list[Frame]:
        responses: list[tuple[dict[str, Any], int]] = []
        for part in round_.parts:
            if isinstance(part, ScriptText):
                responses += [(self._response(call, [{"text": text}]), 1) for text in part.chunks]
            elif isinstance(part, ScriptThinking):
                for number, text in enumerate(part.chunks, start=1):
                    thought: dict[str, Any] = {"text": text, "thought": True}
                    if number == len(part.chunks) and part.signature is not None:
                        thought["thoughtSignature"] = part.signature
                    responses.append((self._response(call, [thought]), 1))
            else:
                responses.append((self._response(call, [_function_call(part)]), len(part.arguments)))
        closing = self._response(call, [{"text": ""}], _FINISH[round_.effective_finish_reason])
        if round_.usage is not None:
            closing["usageMetadata"] = _usage(round_.usage)
        if not call.sse:
            return self._array(responses, closing)
        frames = [Frame(_sse(response), chunks=chunks) for response, chunks in responses]
        frames.append(Frame(_sse(closing), closing=True))
        return frames

    def body(self, round_: Round, call: Call) -> Any:
        parts: list[dict[str, Any]] = []
        for part in round_.parts:
            if isinstance(part, ScriptText):
                parts.append({"text": joined(part.chunks)})
            elif isinstance(part, ScriptThinking):
                thought: dict[str, Any] = {"text": joined(part.chunks), "thought": True}
                if part.signature is not None:
                    thought["thoughtSignature"] = part.signature
                parts.append(thought)
            else:
                parts.append(_function_call(part))
        response = self._response(call, parts, _FINISH[round_.effective_finish_reason])
        response["usageMetadata"] = _usage(round_.usage or Usage(input_tokens=0, output_tokens=0))
        return response

    def malformed_event(self, call: Call) -> bytes:
        if not call.sse:
            return b',\r\n{"candidates": [{"content": '
        return b'data: {"candidates": [{"content": ' + _NEWLINE + _NEWLINE

    def stream_end(self, call: Call) -> bytes:
        return b"" if call.sse else b"]"

    def stream_content_type(self, call: Call) -> str:
        return "text/event-stream" if call.sse else "application/json; charset=UTF-8"

    def error_body(self, status: int, message: str) -> Any:
        return {"error": {"code": status, "message": message, "status": _STATUSES.get(status, "UNKNOWN")}}

    def context_length_error(self, message: str | None) -> tuple[int, Any]:
        text = (
            message
            or "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."
        )
        return 400, self.error_body(400, text)

    def _response(self, call: Call, parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate["index"] = 0
        return {
            "candidates": [candidate],
            "modelVersion": call.model,
            "responseId": f"scripted-{call.round_index}",
        }

    def _array(self, responses: list[tuple[dict[str, Any], int]], closing: dict[str, Any]) -> list[Frame]:
        frames: list[Frame] = []
        for response, chunks in responses:
            frames.append(Frame((b"[" if not frames else b",\r\n") + dumps(response), chunks=chunks))
        frames.append(Frame((b"[" if not frames else b",\r\n") + dumps(closing), closing=True))
        frames.append(Frame(b"]", closing=True))
        return frames


def model_from_path(path: str) -> str:
    """The model name in a ``…/models/{model}:{method}`` path."""
    return path.rsplit("/", 1)[-1].split(":", 1)[0]


def _sse(response: dict[str, Any]) -> bytes:
    return b"data: " + dumps(response) + _NEWLINE + _NEWLINE


def _function_call(part: ScriptToolCall) -> dict[str, Any]:
    value: dict[str, Any] = {"functionCall": {"name": part.name, "args": arguments_value(part)}}
    if part.signature is not None:
        value["thoughtSignature"] = part.signature
    return value


def _usage(usage: Usage) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens,
    }
    if usage.cached_input_tokens:
        metadata["cachedContentTokenCount"] = usage.cached_input_tokens
    return metadata
