"""ACP ``session/update`` notifications as hive events, and the prompt result as the turn's ``turn_end``.

:class:`TurnMapper` reads the updates of one turn, in the order they arrived, decoded by
:func:`~.update_types.decode_update` (a field of the wrong type reads as absent, an unknown ``sessionUpdate``
kind is an :class:`~..kit.wire.Unknown`, skipped); nothing raises.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from hive_core.tools import EventSink
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent
from hive_protocol import StopReason
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.wire import Unknown

from .update_types import MessageChunk
from .update_types import Plan
from .update_types import PlanEntry
from .update_types import PromptResult
from .update_types import SessionUpdate
from .update_types import ThoughtChunk
from .update_types import ToolCallReport
from .update_types import UsageUpdate
from .update_types import chunk_text
from .update_types import count

__all__ = ["STOP_REASONS", "TurnMapper", "Usage", "result_text", "result_usage"]

STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": "completed",
    "max_tokens": "output_limit",
    "max_turn_requests": "step_limit",
    "refusal": "content_filter",
    "cancelled": "cancelled",
}
"""ACP ``stopReason`` to hive's ``stop_reason``; any other value (``completed``, ``success``...) is
``completed``."""

_OPEN_AT_END: Final = "the agent ended the turn without reporting this call's result"
_CANCELLED: Final = "the turn was cancelled before the call finished"


@dataclass(frozen=True)
class Usage:
    """Token counts read from a prompt result or a ``usage_update``."""

    input_tokens: int | None = None
    """Input tokens (for a ``usage_update``: the context tokens in use)."""
    output_tokens: int | None = None
    """Output tokens."""
    cached_input_tokens: int | None = None
    """Input tokens served from the cache."""


@dataclass
class _Plan:
    plan_id: str
    steps: list[str]
    statuses: list[str]
    completed: bool = False


class TurnMapper:
    """Maps the ``session/update`` dicts of one turn to hive events, and its prompt result to ``turn_end``.

    ``plan_id`` names the turn's first plan (a fresh id when not given); a plan whose steps change is ended and
    the new one gets ``<plan_id>-2``, ``-3``...
    """

    def __init__(self, emit: EventSink, tracker: ToolCallTracker, *, plan_id: str | None = None) -> None:
        self._emit = emit
        self.tracker = tracker
        """The turn's tool calls."""
        self.streamed_text = False
        """Whether any ``text_delta`` was emitted from the agent's message chunks."""
        self.usage_update: Usage | None = None
        """The latest ``usage_update`` (``used`` as input tokens)."""
        self.context_size: int | None = None
        """The context window the latest ``usage_update`` reported (``size``)."""
        self._plan_base = plan_id or f"plan-{uuid.uuid4().hex[:12]}"
        self._plans = 0
        self._plan: _Plan | None = None
        self._started = time.monotonic()

    def on_update(self, update: SessionUpdate) -> None:
        """Map one decoded ``params.update`` (:func:`~.update_types.decode_update`)."""
        match update:
            case MessageChunk(content=content):
                text = chunk_text(content)
                if text:
                    self.streamed_text = True
                    self._emit(TextDeltaEvent(content=text))
            case ThoughtChunk(content=content):
                text = chunk_text(content)
                if text:
                    self._emit(ThinkingDeltaEvent(content=text))
            case ToolCallReport(fields=fields):
                self.tracker.upsert(fields)
            case Plan(entries=entries):
                self._on_plan(entries)
            case UsageUpdate(used=used, size=size):
                if (tokens := count(used)) is not None:
                    self.usage_update = Usage(input_tokens=tokens)
                if (window := count(size)) is not None:
                    self.context_size = window
            case Unknown():
                # user_message_chunk (a replay of the prompt), available_commands_update, current_mode_update,
                # config_option_update, session_info_update, and kinds of later versions: nothing to show.
                pass

    def finish(self, result: PromptResult | None, *, cancelled: bool) -> TurnEndEvent:
        """The turn's ``turn_end`` for the decoded prompt ``result`` (``None``: the prompt failed).

        Emits the result's text as one ``text_delta`` first when the agent streamed none, and ends every call
        still running. The ``turn_end`` is returned, not emitted.
        """
        if result is not None and not self.streamed_text:
            text = result_text(result)
            if text:
                self._emit(TextDeltaEvent(content=text))
        self.tracker.close_all(_CANCELLED if cancelled else _OPEN_AT_END)
        stop_reason: StopReason | None
        if cancelled:
            stop_reason = "cancelled"
        elif result is None:
            stop_reason = None
        else:
            stop_reason = STOP_REASONS.get(result.stop_reason or "", "completed")
        usage = (result_usage(result) if result is not None else None) or self.usage_update or Usage()
        total = (
            usage.input_tokens + usage.output_tokens
            if usage.input_tokens is not None and usage.output_tokens is not None
            else None
        )
        return TurnEndEvent(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=total,
            cached_input_tokens=usage.cached_input_tokens or None,
            stop_reason=stop_reason,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )

    # -- plans --------------------------------------------------------------------------------------------------

    def _on_plan(self, entries: list[PlanEntry]) -> None:
        steps = [entry.content or "" for entry in entries]
        statuses = [
            entry.status if entry.status in ("pending", "in_progress", "completed") else "pending"
            for entry in entries
        ]
        if not steps:
            return
        plan = self._plan
        if plan is None or plan.steps != steps:
            if plan is not None and not plan.completed:
                self._emit(
                    PlanCompletedEvent(
                        plan_id=plan.plan_id, success=False, summary="the agent replaced the plan"
                    )
                )
            self._plans += 1
            plan_id = self._plan_base if self._plans == 1 else f"{self._plan_base}-{self._plans}"
            plan = _Plan(plan_id=plan_id, steps=steps, statuses=["pending"] * len(steps))
            self._plan = plan
            self._emit(PlanCreatedEvent(plan_id=plan_id, step_count=len(steps), step_descriptions=steps))
        for index, (old, new) in enumerate(zip(plan.statuses, statuses, strict=True)):
            if old == new or old == "completed":
                continue
            if old == "pending":
                self._emit(
                    PlanStepStartedEvent(plan_id=plan.plan_id, step_index=index, description=steps[index])
                )
            if new == "completed":
                self._emit(PlanStepCompletedEvent(plan_id=plan.plan_id, step_index=index, success=True))
            plan.statuses[index] = new if new != "pending" else old
        if not plan.completed and all(status == "completed" for status in plan.statuses):
            plan.completed = True
            self._emit(PlanCompletedEvent(plan_id=plan.plan_id, success=True))


def result_text(result: PromptResult) -> str | None:
    """Text a prompt result carries beside its stop reason (some agents answer there and stream nothing):
    ``text``, ``content`` blocks, or the same under ``_meta``."""
    for source in (result, result.meta):
        if source is None:
            continue
        for content in (source.text, source.content, source.message, source.result, source.output):
            text = chunk_text(content)
            if text:
                return text
    return None


def result_usage(result: PromptResult) -> Usage | None:
    """The token counts of a prompt result's non-standard ``usage`` (camelCase or snake_case; also under
    ``_meta``, and Gemini's ``_meta.quota.token_count``); ``None`` when it has none."""
    meta = result.meta
    quota = meta.quota if meta is not None else None
    for usage in (
        result.usage,
        meta.usage if meta is not None else None,
        quota.token_count if quota else None,
    ):
        if usage is not None and (usage.input is not None or usage.output is not None):
            return Usage(
                input_tokens=usage.input, output_tokens=usage.output, cached_input_tokens=usage.cached
            )
    return None
