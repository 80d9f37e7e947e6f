"""The documents and records hive prints in its machine modes (``-o json``, ``-o jsonl``, ``run --json``).

Field names and shapes are the seed's contract: ``-o json`` and ``-o jsonl`` are camelCase, ``run --json`` is
snake_case; absent values are left out of ``-o`` documents and written as ``null`` where ``run --json`` says so.
"""

from __future__ import annotations

import json
from typing import Any

from hive_core.questions import Answers
from hive_protocol import (
    AddendumEvent,
    Event,
    QuestionRequestEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
)

from .summary import TurnSummary

__all__ = [
    "done_record",
    "json_document",
    "jsonl_record",
    "question_outcome",
    "question_record",
    "run_document",
    "run_failure_document",
]

_ARGUMENT_CAP = 300


def _usage(summary: TurnSummary, *, snake: bool) -> dict[str, int] | None:
    end = summary.end
    if end is None or (end.input_tokens is None and end.output_tokens is None):
        return None
    keys = (
        ("input_tokens", "output_tokens", "total_tokens")
        if snake
        else ("inputTokens", "outputTokens", "totalTokens")
    )
    usage: dict[str, int] = dict(
        zip(keys, (end.input_tokens or 0, end.output_tokens or 0, end.total_tokens or 0), strict=True)
    )
    if end.cached_input_tokens:  # part of the input tokens, served from the provider's prompt cache
        usage["cached_input_tokens" if snake else "cachedInputTokens"] = end.cached_input_tokens
    return usage


def done_record(summary: TurnSummary, *, session_id: str | None) -> dict[str, Any]:
    """The last ``-o jsonl`` record of a successful turn: ``{"type": "done", "sessionId"?, "usage"?}``."""
    record: dict[str, Any] = {"type": "done"}
    if session_id:
        record["sessionId"] = session_id
    if (usage := _usage(summary, snake=False)) is not None:
        record["usage"] = usage
    return record


def question_record(request: QuestionRequestEvent) -> dict[str, Any]:
    """The ``-o jsonl`` record of a ``question_request``: ``{"type": "question", "id", "callId"?, "questions"}``,
    each question with its ``options`` (``label``, ``description``?), ``multiSelect`` and ``allowFreeText``."""
    record: dict[str, Any] = {"type": "question", "id": request.id}
    if request.call_id:
        record["callId"] = request.call_id
    record["questions"] = [
        {
            "question": question.question,
            **({"header": question.header} if question.header else {}),
            "options": [
                {"label": option.label, **({"description": option.description} if option.description else {})}
                for option in question.options
            ],
            "multiSelect": question.multi_select,
            "allowFreeText": question.allow_free_text,
        }
        for question in request.questions
    ]
    return record


def question_outcome(
    request: QuestionRequestEvent, answers: Answers | None, reason: str | None
) -> dict[str, Any]:
    """The ``-o jsonl`` record of how a question ended: ``{"type": "question_answer", "id", "answers"}`` (question
    text to the chosen labels or free text), or ``"declined": <why>`` in place of ``answers``."""
    record: dict[str, Any] = {"type": "question_answer", "id": request.id}
    if answers is None:
        record["declined"] = reason or "declined"
    else:
        record["answers"] = answers
    return record


def json_document(
    summary: TurnSummary,
    *,
    session_id: str | None,
    show_thinking: bool,
    questions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``-o json`` document of a successful turn; ``questions`` are the agent's questions and how each ended
    (each a :func:`question_record` merged with its :func:`question_outcome`, without their ``type``)."""
    doc: dict[str, Any] = {"content": summary.content}
    if session_id:
        doc["sessionId"] = session_id
    if (usage := _usage(summary, snake=False)) is not None:
        doc["usage"] = usage
    if show_thinking and summary.thinking:
        doc["thinking"] = {
            "content": summary.thinking_text,
            "tokenCount": max(1, len(summary.thinking_text) // 4),
        }
    if summary.calls:
        doc["toolCalls"] = [
            {"name": c.tool, "arguments": c.arguments_json, "result": c.result, "success": c.success}
            for c in summary.calls.values()
        ]
    if questions:
        doc["questions"] = questions
    return doc


def jsonl_record(event: Event, *, show_thinking: bool) -> dict[str, Any] | None:
    """The ``-o jsonl`` record for one event, or ``None`` when the event has none."""
    if isinstance(event, TextDeltaEvent):
        return {"type": "text", "content": event.content}
    if isinstance(event, ThinkingDeltaEvent):
        return {"type": "thinking", "content": event.content} if show_thinking else None
    if isinstance(event, ToolStartEvent):
        arguments = (
            event.input if isinstance(event.input, str) else json.dumps(event.input, ensure_ascii=False)
        )
        return {"type": "tool_call", "id": event.call_id, "name": event.tool, "arguments": arguments}
    if isinstance(event, ToolEndEvent):
        record: dict[str, Any] = {
            "type": "tool_result",
            "id": event.call_id,
            "name": event.tool,
            "success": event.success,
        }
        if event.output is not None:
            record["result"] = event.output
        return record
    if isinstance(event, AddendumEvent):
        return {"type": "addendum", "content": event.content}
    if isinstance(event, QuestionRequestEvent):
        return question_record(event)
    return None


def _cut(text: str, limit: int = _ARGUMENT_CAP) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def run_document(summary: TurnSummary, *, duration_ms: int) -> dict[str, Any]:
    """The ``run --json`` document of a turn that ended (snake_case)."""
    calls = list(summary.calls.values())
    thinking = summary.thinking_text
    return {
        "content": summary.content,
        "stop_reason": summary.stop_reason,
        "duration_ms": duration_ms,
        "tool_calls": len(calls),
        "refused_tool_calls": sum(c.outcome == "refused" for c in calls),
        "failed_tool_calls": sum(c.outcome == "failed" for c in calls),
        "calls": [
            {
                "tool": c.tool,
                "outcome": c.outcome,
                "refusal_kind": c.refusal,
                "arguments": _cut(c.arguments_json),
                "refusal": _cut(c.result or "") if c.refusal is not None else None,
            }
            for c in calls
        ],
        "thinking": {"content": thinking, "token_count": max(1, len(thinking) // 4)} if thinking else None,
        "usage": _usage(summary, snake=True),
    }


def run_failure_document(message: str, *, stop_reason: str, duration_ms: int) -> dict[str, Any]:
    """The ``run --json`` document of a run that failed, timed out or was cancelled."""
    return {"error": message, "stop_reason": stop_reason, "duration_ms": duration_ms}
