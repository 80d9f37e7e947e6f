"""The execution log: what a session's turns did and how long it took, one typed record at a time.

A turn yields :class:`TurnStartRecord`, then a :class:`ModelRequestRecord` per request sent to the model (measured
by the loop around the chat client's stream), a :class:`ToolRecord` per tool call (measured by the tool round), a
:class:`FallbackRecord` per retry or provider switch, a :class:`CompactionRecord` per compaction, and a
:class:`TurnEndRecord`. The loop and the tool round hand the records they measure to the session's
:data:`ExecutionObserver`; a host keeps them (hive's session store writes them into the session's log, one
short transaction a record, never one a streamed delta) and derives the others from the turn's events.

Every record is one JSON object with ``kind`` (its type) and ``time`` (Unix seconds: when it was written, which
for a measured request or call is when it ended), as ``hive logs -o json`` prints it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import msgspec

from hive_protocol import FallbackCategory
from hive_protocol import FallbackEvent
from hive_protocol import FallbackKind
from hive_protocol import RefusalKind
from hive_protocol import StopReason

from .context import CompactionReport
from .tools import ToolOutcome

__all__ = [
    "CompactionRecord",
    "ExecutionObserver",
    "ExecutionRecord",
    "FallbackRecord",
    "LogRecord",
    "ModelRequestRecord",
    "ToolOutcomeKind",
    "ToolRecord",
    "TurnEndRecord",
    "TurnStartRecord",
    "record_kind",
    "tool_outcome_kind",
]

ToolOutcomeKind = Literal["ok", "error", "cancelled"] | RefusalKind
"""How a call ended: ``ok``, ``error`` (it ran and failed), ``cancelled`` (its turn was), or the pipeline's
refusal kind (``denied``, ``timed_out``...)."""


class _Record(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", omit_defaults=True):
    time: float
    """When it was written, in Unix seconds (for a request or a call: when it ended)."""


class TurnStartRecord(_Record, frozen=True, kw_only=True, tag="turn_start"):
    """A turn started (the user's message reached the session)."""


class ModelRequestRecord(_Record, frozen=True, kw_only=True, tag="model_request"):
    """One request to the model, from sending it to the end of its streamed reply (or its failure)."""

    duration_ms: int
    """How long the request took, in milliseconds."""
    request_bytes: int
    """The size of what was sent: the request's messages, instructions and tool definitions as JSON (the
    provider's own encoding of them differs by a few percent)."""
    input_tokens: int | None = None
    """Input tokens the provider reported for this request; absent when it reported none."""
    output_tokens: int | None = None
    """Output tokens the provider reported for this request; absent when it reported none."""
    model: str | None = None
    """The model asked, when known."""
    error: str | None = None
    """Why the request failed; absent when it succeeded."""


class ToolRecord(_Record, frozen=True, kw_only=True, tag="tool"):
    """One tool call, from entering the pipeline (approval included) to its result."""

    name: str
    """The tool called."""
    call_id: str
    """The call's id (``tool_start.call_id``)."""
    duration_ms: int
    """How long the call took, in milliseconds."""
    outcome: ToolOutcomeKind
    """How it ended."""


class FallbackRecord(_Record, frozen=True, kw_only=True, tag="fallback"):
    """A model provider failed and the client retried, switched provider, or gave up (a ``fallback`` event)."""

    step: FallbackKind
    """What happened next: ``retry``, ``fallback`` or ``exhausted`` (the event's ``kind``)."""
    provider_index: int
    """The 0-based index of the provider that failed."""
    category: FallbackCategory
    """How the failure was classified."""
    message: str
    """The failure, for humans."""
    attempt: int
    """Which attempt on this provider failed (1-based)."""

    @classmethod
    def of(cls, event: FallbackEvent, time: float) -> FallbackRecord:
        """The record of ``event``, written at ``time``."""
        return cls(
            time=time,
            step=event.kind,
            provider_index=event.provider_index,
            category=event.category,
            message=event.message,
            attempt=event.attempt,
        )


class CompactionRecord(_Record, frozen=True, kw_only=True, tag="compaction"):
    """The conversation was compacted to fit what is sent into the model's window."""

    messages_before: int
    """Messages in the request before."""
    messages_after: int
    """Messages left after."""
    tokens_before: int
    """Estimated tokens before."""
    tokens_after: int
    """Estimated tokens after."""
    summarized: bool
    """Whether the model wrote a summary (else a marker stands in for what was left out)."""

    @classmethod
    def of(cls, report: CompactionReport, time: float) -> CompactionRecord:
        """The record of ``report``, written at ``time``."""
        return cls(time=time, **msgspec.structs.asdict(report))


class TurnEndRecord(_Record, frozen=True, kw_only=True, tag="turn_end"):
    """The turn ended (its ``turn_end`` event)."""

    stop_reason: StopReason | None = None
    """Why it ended, when the turn said (``completed``, ``cancelled``...)."""
    duration_ms: int | None = None
    """How long the turn took, in milliseconds, when measured."""
    input_tokens: int | None = None
    """Input tokens of the whole turn, when reported."""
    output_tokens: int | None = None
    """Output tokens of the whole turn, when reported."""
    error: str | None = None
    """The error the turn failed with, if it did."""


ExecutionRecord = ModelRequestRecord | ToolRecord | CompactionRecord
"""What the loop and the tool round measure and hand to an :data:`ExecutionObserver`."""

LogRecord = (
    TurnStartRecord | ModelRequestRecord | ToolRecord | FallbackRecord | CompactionRecord | TurnEndRecord
)
"""Any record of the execution log."""

ExecutionObserver = Callable[[ExecutionRecord], None]
"""Told each record as it is measured, on the event loop; it must return quickly (a local write at most)."""


def tool_outcome_kind(outcome: ToolOutcome) -> ToolOutcomeKind:
    """How ``outcome`` ended, as a :class:`ToolRecord` says it."""
    if outcome.refusal is not None:
        return outcome.refusal
    return "ok" if outcome.success else "error"


def record_kind(record: LogRecord) -> str:
    """The record's ``kind`` (``model_request``, ``tool``...)."""
    return str(record.__struct_config__.tag)
