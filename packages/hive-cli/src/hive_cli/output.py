"""The documents and records hive prints in its machine modes: ``-o json`` and ``-o jsonl``, on every command.

One vocabulary everywhere, the wire protocol's: snake_case field names, ``session_id``, ``stop_reason``, and
``call_id`` for a tool call. ``-o json`` is one document on one line; ``-o jsonl`` is one record per line. A turn
(``hive -p``, ``hive run``) is documented the same way by both commands: :func:`turn_document` once it ended,
whether it completed, failed, timed out or was cancelled (then with ``error`` and what it had so far).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any
from typing import Final
from typing import Literal

from hive_core.questions import Answers
from hive_core.spending import describe_cost
from hive_protocol import AddendumEvent
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent

from .summary import CallRecord
from .summary import TurnSummary

__all__ = [
    "OUTPUT_FORMATS",
    "OutputFormat",
    "done_record",
    "error_record",
    "jsonl_record",
    "print_document",
    "print_records",
    "question_outcome",
    "question_record",
    "start_record",
    "turn_document",
    "warn_deprecated",
]

OutputFormat = Literal["text", "json", "jsonl"]
"""What ``-o`` takes."""

OUTPUT_FORMATS: Final[tuple[OutputFormat, ...]] = ("text", "json", "jsonl")
"""Every ``-o`` value, in the order ``--help`` lists them."""

_warned: set[str] = set()


def warn_deprecated(old: str, new: str) -> None:
    """Say once per process on stderr that ``old`` is a deprecated spelling of ``new`` (it still works)."""
    if old in _warned:
        return
    _warned.add(old)
    sys.stderr.write(f"hive: {old} is deprecated; use {new}\n")


def print_document(document: object) -> None:
    """``-o json``: one JSON document on one line of stdout."""
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def print_records(records: Iterable[object]) -> None:
    """``-o jsonl``: each record on its own line of stdout."""
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _usage(summary: TurnSummary) -> dict[str, int] | None:
    end = summary.end
    if end is None or (end.input_tokens is None and end.output_tokens is None):
        return None
    usage = {
        "input_tokens": end.input_tokens or 0,
        "output_tokens": end.output_tokens or 0,
        "total_tokens": end.total_tokens or 0,
    }
    if end.cached_input_tokens:  # part of the input tokens, served from the provider's prompt cache
        usage["cached_input_tokens"] = end.cached_input_tokens
    return usage


def start_record(session_id: str | None) -> dict[str, Any]:
    """The first ``-o jsonl`` record: ``{"type": "start", "session_id"?}`` (no id when no session could open)."""
    return {"type": "start", **({"session_id": session_id} if session_id else {})}


def done_record(summary: TurnSummary, *, session_id: str | None) -> dict[str, Any]:
    """The last ``-o jsonl`` record of a turn that ended: ``{"type": "done", "session_id"?, "stop_reason",
    "usage"?}``."""
    record: dict[str, Any] = {"type": "done"}
    if session_id:
        record["session_id"] = session_id
    record["stop_reason"] = summary.stop_reason
    if (usage := _usage(summary)) is not None:
        record["usage"] = usage
    return record


def error_record(message: str, *, stop_reason: str, exit_code: int) -> dict[str, Any]:
    """The last ``-o jsonl`` record of a turn that failed, timed out or was cancelled."""
    return {"type": "error", "error": message, "stop_reason": stop_reason, "exit_code": exit_code}


def question_record(request: QuestionRequestEvent) -> dict[str, Any]:
    """The ``-o jsonl`` record of a ``question_request``: ``{"type": "question", "id", "call_id"?, "questions"}``,
    each question with its ``options`` (``label``, ``description``?), ``multi_select`` and ``allow_free_text``."""
    record: dict[str, Any] = {"type": "question", "id": request.id}
    if request.call_id:
        record["call_id"] = request.call_id
    record["questions"] = [
        {
            "question": question.question,
            **({"header": question.header} if question.header else {}),
            "options": [
                {"label": option.label, **({"description": option.description} if option.description else {})}
                for option in question.options
            ],
            "multi_select": question.multi_select,
            "allow_free_text": question.allow_free_text,
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


def _call(call: CallRecord) -> dict[str, Any]:
    return {
        "call_id": call.call_id,
        "tool": call.tool,
        "arguments": call.arguments_json,
        "outcome": call.outcome,
        "success": call.success,
        "result": call.result,
        "refusal_kind": call.refusal,
    }


def turn_document(
    summary: TurnSummary,
    *,
    session_id: str | None,
    duration_ms: int,
    exit_code: int,
    show_thinking: bool = True,
    questions: list[dict[str, Any]] | None = None,
    error: str | None = None,
    stop_reason: str | None = None,
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """The ``-o json`` document of a turn (``hive -p``, ``hive run``), however it ended.

    ``cost_usd`` is the turn's price in US dollars (``None``: unknown); the document carries it as ``cost_usd``
    (a number or ``null``) and as ``cost`` in words (``$0.0123`` or ``cost unknown``).

    ``error`` and ``stop_reason`` (``error``, ``timeout``, ``cancelled``) describe a turn that did not end by
    itself; the document still carries what the turn had so far. ``questions`` are the agent's questions and how
    each ended (a :func:`question_record` merged with its :func:`question_outcome`, without their ``type``).
    """
    calls = list(summary.calls.values())
    thinking = summary.thinking_text if show_thinking else ""
    document: dict[str, Any] = {
        "session_id": session_id,
        "content": summary.content,
        "stop_reason": stop_reason or summary.stop_reason,
        "exit_code": exit_code,
        "duration_ms": duration_ms,
        "tool_calls": len(calls),
        "refused_tool_calls": sum(c.outcome == "refused" for c in calls),
        "failed_tool_calls": sum(c.outcome == "failed" for c in calls),
        "calls": [_call(call) for call in calls],
        "thinking": {"content": thinking, "token_count": max(1, len(thinking) // 4)} if thinking else None,
        "usage": _usage(summary),
        "cost_usd": cost_usd,
        "cost": describe_cost(cost_usd),
    }
    if questions:
        document["questions"] = questions
    if error is not None:
        document["error"] = error
    return document


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
        return {"type": "tool_call", "call_id": event.call_id, "tool": event.tool, "arguments": arguments}
    if isinstance(event, ToolEndEvent):
        record: dict[str, Any] = {
            "type": "tool_result",
            "call_id": event.call_id,
            "tool": event.tool,
            "success": event.success,
        }
        if event.output is not None:
            record["result"] = event.output
        if event.refusal is not None:
            record["refusal_kind"] = event.refusal
        return record
    if isinstance(event, AddendumEvent):
        return {"type": "addendum", "content": event.content}
    if isinstance(event, QuestionRequestEvent):
        return question_record(event)
    return None
