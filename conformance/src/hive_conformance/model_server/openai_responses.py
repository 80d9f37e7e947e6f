"""OpenAI Responses: typed events (``response.created`` … ``response.completed``), each output item opened,
filled with deltas and closed, or one ``response`` body. Thinking is a ``reasoning`` item with summary text."""

from __future__ import annotations

from typing import Any
from typing import ClassVar

from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage

from .openai_chat import openai_error_body
from .recording import Endpoint
from .wire import CREATED
from .wire import Call
from .wire import Frame
from .wire import WireApi
from .wire import joined
from .wire import sse_event

__all__ = ["OpenAIResponsesApi"]


class OpenAIResponsesApi(WireApi):
    """``POST …/responses``. ``length`` and ``content_filter`` finish as ``response.incomplete``; the other
    finish reasons as ``response.completed`` (the API has no finish reason of its own)."""

    endpoint: ClassVar[Endpoint] = "openai_responses"

    def stream(self, round_: Round, call: Call) -> list[Frame]:
        events = _Events()
        in_progress = _response(call, "in_progress", [], None)
        events.add("response.created", {"response": in_progress})
        events.add("response.in_progress", {"response": in_progress})
        for index, part in enumerate(round_.parts):
            item_id = _item_id(call, part, index)
            place = {"item_id": item_id, "output_index": index}
            events.add(
                "response.output_item.added", {"output_index": index, "item": _item(part, item_id, False)}
            )
            if isinstance(part, ScriptText):
                empty: dict[str, Any] = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
                events.add("response.content_part.added", {**place, "content_index": 0, "part": empty})
                for text in part.chunks:
                    delta: dict[str, Any] = {**place, "content_index": 0, "delta": text, "logprobs": []}
                    events.add("response.output_text.delta", delta, chunks=1)
                whole = joined(part.chunks)
                done: dict[str, Any] = {**place, "content_index": 0, "text": whole, "logprobs": []}
                events.add("response.output_text.done", done)
                full: dict[str, Any] = {**empty, "text": whole}
                events.add("response.content_part.done", {**place, "content_index": 0, "part": full})
            elif isinstance(part, ScriptThinking):
                summary = {**place, "summary_index": 0}
                empty = {"type": "summary_text", "text": ""}
                events.add("response.reasoning_summary_part.added", {**summary, "part": empty})
                for text in part.chunks:
                    events.add("response.reasoning_summary_text.delta", {**summary, "delta": text}, chunks=1)
                whole = joined(part.chunks)
                events.add("response.reasoning_summary_text.done", {**summary, "text": whole})
                full = {"type": "summary_text", "text": whole}
                events.add("response.reasoning_summary_part.done", {**summary, "part": full})
            else:
                for text in part.arguments:
                    events.add("response.function_call_arguments.delta", {**place, "delta": text}, chunks=1)
                done = {**place, "name": part.name, "arguments": joined(part.arguments)}
                events.add("response.function_call_arguments.done", done)
            events.add(
                "response.output_item.done", {"output_index": index, "item": _item(part, item_id, True)}
            )
        final = self.body(round_, call)
        kind = "response.completed" if final["status"] == "completed" else "response.incomplete"
        events.add(kind, {"response": final}, closing=True)
        return events.frames

    def body(self, round_: Round, call: Call) -> Any:
        output = [_item(part, _item_id(call, part, index), True) for index, part in enumerate(round_.parts)]
        reason = round_.effective_finish_reason
        if reason == "length":
            return _response(call, "incomplete", output, round_.usage, "max_output_tokens")
        if reason == "content_filter":
            return _response(call, "incomplete", output, round_.usage, "content_filter")
        return _response(call, "completed", output, round_.usage)

    def malformed_event(self, call: Call) -> bytes:
        return (
            b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "delta": \n\n'
        )

    def error_body(self, status: int, message: str) -> Any:
        return openai_error_body(status, message)

    def context_length_error(self, message: str | None) -> tuple[int, Any]:
        text = (
            message
            or "Your input exceeds the context window of this model. Please adjust your input and try again."
        )
        body = openai_error_body(400, text)
        body["error"].update(param="input", code="context_length_exceeded")
        return 400, body

    def headers(self, call: Call) -> dict[str, str]:
        return {"x-request-id": f"req_scripted_{call.round_index}"}


class _Events:
    """Builds the event frames, numbering them in ``sequence_number`` order."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def add(self, kind: str, fields: dict[str, Any], *, chunks: int = 0, closing: bool = False) -> None:
        data = {"type": kind, "sequence_number": len(self.frames), **fields}
        self.frames.append(Frame(sse_event(data, event=kind), chunks=chunks, closing=closing))


def _item_id(call: Call, part: ScriptText | ScriptThinking | ScriptToolCall, index: int) -> str:
    prefix = "msg" if isinstance(part, ScriptText) else "rs" if isinstance(part, ScriptThinking) else "fc"
    return f"{prefix}_scripted_{call.round_index}_{index}"


def _item(part: ScriptText | ScriptThinking | ScriptToolCall, item_id: str, done: bool) -> dict[str, Any]:
    status = "completed" if done else "in_progress"
    if isinstance(part, ScriptText):
        content: list[dict[str, Any]] = [
            {"type": "output_text", "text": joined(part.chunks), "annotations": [], "logprobs": []}
        ]
        return {
            "id": item_id,
            "type": "message",
            "status": status,
            "role": "assistant",
            "content": content if done else [],
        }
    if isinstance(part, ScriptThinking):
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        if done:
            item["summary"] = [{"type": "summary_text", "text": joined(part.chunks)}]
            if part.signature is not None:
                item["encrypted_content"] = part.signature
        return item
    return {
        "id": item_id,
        "type": "function_call",
        "status": status,
        "call_id": part.id,
        "name": part.name,
        "arguments": joined(part.arguments) if done else "",
    }


def _usage(usage: Usage | None) -> dict[str, Any]:
    usage = usage or Usage(input_tokens=0, output_tokens=0)
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.input_tokens + usage.output_tokens,
    }


def _response(
    call: Call,
    status: str,
    output: list[dict[str, Any]],
    usage: Usage | None,
    incomplete: str | None = None,
) -> dict[str, Any]:
    return {
        "id": f"resp_scripted_{call.round_index}",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "error": None,
        "incomplete_details": {"reason": incomplete} if incomplete is not None else None,
        "instructions": call.body.get("instructions"),
        "metadata": {},
        "model": call.model,
        "output": output,
        "parallel_tool_calls": call.body.get("parallel_tool_calls", True),
        "tool_choice": call.body.get("tool_choice", "auto"),
        "tools": call.body.get("tools", []),
        "usage": _usage(usage) if status != "in_progress" else None,
    }
