"""ACP ``session/update`` notifications as hive events, and the prompt result as the turn's ``turn_end``.

:class:`TurnMapper` reads the raw ``params.update`` dicts of one turn, in the order they arrived. Every field is
read tolerantly: a field of the wrong type is ignored, an unknown ``sessionUpdate`` kind is skipped, nothing
raises.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hive_core.tools import EventSink
from hive_protocol import (
    PlanCompletedEvent,
    PlanCreatedEvent,
    PlanStepCompletedEvent,
    PlanStepStartedEvent,
    StopReason,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TurnEndEvent,
)
from hive_providers.backends.kit.tool_calls import ToolCallTracker, text_of

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

_INPUT_KEYS: Final = ("inputTokens", "input_tokens", "promptTokens", "prompt_tokens")
_OUTPUT_KEYS: Final = ("outputTokens", "output_tokens", "completionTokens", "completion_tokens")
_CACHED_KEYS: Final = ("cachedReadTokens", "cached_read_tokens", "cachedInputTokens", "cached_input_tokens")
_TEXT_KEYS: Final = ("text", "content", "message", "result", "output")
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

    def on_update(self, update: Mapping[str, Any]) -> None:
        """Map one raw ``params.update`` dict."""
        if not isinstance(update, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
            return
        match update.get("sessionUpdate"):
            case "agent_message_chunk":
                text = _chunk_text(update.get("content"))
                if text:
                    self.streamed_text = True
                    self._emit(TextDeltaEvent(content=text))
            case "agent_thought_chunk":
                text = _chunk_text(update.get("content"))
                if text:
                    self._emit(ThinkingDeltaEvent(content=text))
            case "tool_call" | "tool_call_update":
                self.tracker.upsert(update)
            case "plan":
                entries = update.get("entries")
                if isinstance(entries, list):
                    self._on_plan(entries)  # pyright: ignore[reportUnknownArgumentType]
            case "usage_update":
                used = _count(update.get("used"))
                if used is not None:
                    self.usage_update = Usage(input_tokens=used)
                size = _count(update.get("size"))
                if size is not None:
                    self.context_size = size
            case _:
                # user_message_chunk (a replay of the prompt), available_commands_update, current_mode_update,
                # config_option_update, session_info_update, and kinds of later versions: nothing to show.
                pass

    def finish(self, result: Mapping[str, Any] | None, *, cancelled: bool) -> TurnEndEvent:
        """The turn's ``turn_end`` for the raw PromptResponse ``result`` (``None``: the prompt failed).

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
            reason = result.get("stopReason")
            stop_reason = STOP_REASONS.get(reason, "completed") if isinstance(reason, str) else "completed"
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

    def _on_plan(self, entries: list[Any]) -> None:
        steps: list[str] = []
        statuses: list[str] = []
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            fields: dict[str, Any] = entry  # pyright: ignore[reportUnknownVariableType]
            steps.append(text_of(fields.get("content")) or "")
            status = fields.get("status")
            statuses.append(status if status in ("pending", "in_progress", "completed") else "pending")
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


def result_text(result: Mapping[str, Any]) -> str | None:
    """Text a prompt result carries beside its stop reason (some agents answer there and stream nothing):
    ``text``, ``content`` blocks, or the same under ``_meta``."""
    for source in (result, result.get("_meta")):
        if not isinstance(source, Mapping):
            continue
        fields: Mapping[str, Any] = source  # pyright: ignore[reportUnknownVariableType]
        for key in _TEXT_KEYS:
            text = _chunk_text(fields.get(key))
            if text:
                return text
    return None


def result_usage(result: Mapping[str, Any]) -> Usage | None:
    """The token counts of a prompt result's non-standard ``usage`` (camelCase or snake_case; also under
    ``_meta``, and Gemini's ``_meta.quota.token_count``); ``None`` when it has none."""
    meta = _field(result, "_meta")
    for usage in (result.get("usage"), _field(meta, "usage"), _field(_field(meta, "quota"), "token_count")):
        found = _usage(usage)
        if found is not None:
            return found
    return None


def _field(value: object, key: str) -> object:
    """``value[key]`` when ``value`` is a mapping, else ``None``."""
    if not isinstance(value, Mapping):
        return None
    fields: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
    return fields.get(key)


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, Mapping):
        return None
    fields: Mapping[str, Any] = usage  # pyright: ignore[reportUnknownVariableType]
    found = Usage(
        input_tokens=_first_count(fields, _INPUT_KEYS),
        output_tokens=_first_count(fields, _OUTPUT_KEYS),
        cached_input_tokens=_first_count(fields, _CACHED_KEYS),
    )
    return found if found.input_tokens is not None or found.output_tokens is not None else None


def _chunk_text(content: object) -> str | None:
    """The text of a content block, of a list of them, or of plain text."""
    if isinstance(content, str):
        return content or None
    if isinstance(content, list):
        items: list[object] = content  # pyright: ignore[reportUnknownVariableType]
        texts = [_chunk_text(item) for item in items]
        joined = "".join(text for text in texts if text)
        return joined or None
    if isinstance(content, dict):
        block: dict[str, Any] = content  # pyright: ignore[reportUnknownVariableType]
        if block.get("type", "text") == "text":
            return text_of(block.get("text"))
    return None


def _count(value: object) -> int | None:
    """A token count: a non-negative integer (a float with no fraction passes), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _first_count(fields: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    for key in keys:
        count = _count(fields.get(key))
        if count is not None:
            return count
    return None
