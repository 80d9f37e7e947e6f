"""Pi's event stream (``--mode json`` lines, the events of ``--mode rpc``) as hive events: one
:class:`PiEventMapper` per turn.

What maps to what:

* the ``session`` line gives Pi's session id (:attr:`PiEventMapper.session_id`);
* ``message_update`` ``text_delta`` / ``thinking_delta`` of an assistant message become ``text_delta`` /
  ``thinking_delta``; its ``message_end`` repeats that text, so the end's text is emitted only for a message whose
  deltas never came;
* ``tool_execution_start`` / ``tool_execution_end`` start and end a call through
  :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`. Pi runs its tools without asking anyone: there
  is no permission request to answer, only the calls to report;
* each assistant ``message_end`` adds its ``usage``; the last one's ``stopReason`` is the turn's; ``agent_end``
  (or ``agent_settled``, in builds that send it) ends the run.

Everything else (``turn_start``, ``queue_update``, compaction and retry notices) carries nothing a hive client needs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any, Final

from hive_core.tools import EventSink
from hive_protocol import StopReason, TextDeltaEvent, ThinkingDeltaEvent, TurnEndEvent
from hive_providers.backends.kit.json_values import as_count, as_list, as_mapping
from hive_providers.backends.kit.tool_calls import ToolCallTracker, text_of

__all__ = ["RUN_ENDS", "TOOL_KINDS", "PiEventMapper", "run_failure"]

TOOL_KINDS: Final[Mapping[str, str]] = {
    "bash": "execute",
    "read": "read",
    "edit": "edit",
    "write": "edit",
    "grep": "search",
    "find": "search",
    "ls": "search",
}
"""Pi's built-in tools by the ACP kind whose hive tool name their ``tool_start`` carries (``bash`` ->
``execute_command``); other tools keep their own name."""

RUN_ENDS: Final = frozenset({"agent_end", "agent_settled"})
"""The events that end a run."""

_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": "completed",
    "toolUse": "completed",
    "length": "output_limit",
    "aborted": "cancelled",
}


class PiEventMapper:
    """Maps one turn's Pi events to hive events (see the module)."""

    def __init__(self, emit: EventSink, tracker: ToolCallTracker) -> None:
        self._emit = emit
        self.tracker = tracker
        """The turn's tool calls."""
        self.session_id: str | None = None
        """Pi's session id, from the ``session`` line (rpc mode: from ``get_state``, set by the backend)."""
        self.ended = False
        """Whether the run's end (``agent_end``) came."""
        self.persisted = False
        """Whether an assistant message ended: Pi writes a new session's file only then, so before it the
        session id cannot be resumed."""
        self.stop_reason: str | None = None
        """The ``stopReason`` of the last assistant message."""
        self.error: str | None = None
        """The ``errorMessage`` of the last assistant message that ended in ``error``."""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self._counted = False
        self._streamed = False
        self._started = time.monotonic()

    def on_event(self, event: Mapping[str, Any]) -> None:
        """Map one event (responses and extension requests are the backend's, not this mapper's)."""
        kind = event.get("type")
        if kind == "session":
            self.session_id = text_of(event.get("id")) or self.session_id
        elif kind == "message_start":
            self._streamed = False
        elif kind == "message_update":
            self._on_update(as_mapping(event.get("assistantMessageEvent")))
        elif kind == "message_end":
            self._on_message_end(as_mapping(event.get("message")))
        elif kind == "tool_execution_start":
            name = text_of(event.get("toolName")) or "tool"
            self.tracker.upsert(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": event.get("toolCallId"),
                    "title": name,
                    "kind": TOOL_KINDS.get(name),
                    "rawInput": as_mapping(event.get("args")),
                    "status": "in_progress",
                }
            )
        elif kind == "tool_execution_end":
            output = result_text(event.get("result"))
            self.tracker.upsert(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": event.get("toolCallId"),
                    "status": "failed" if event.get("isError") is True else "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": output}}]
                    if output
                    else [],
                }
            )
        elif kind in RUN_ENDS:
            self.ended = True

    def _on_update(self, update: Mapping[str, Any]) -> None:
        match update.get("type"):
            case "text_delta":
                text = text_of(update.get("delta"))
                if text:
                    self._streamed = True
                    self._emit(TextDeltaEvent(content=text))
            case "thinking_delta":
                thinking = text_of(update.get("delta"))
                if thinking:
                    self._streamed = True
                    self._emit(ThinkingDeltaEvent(content=thinking))
            case _:
                pass

    def _on_message_end(self, message: Mapping[str, Any]) -> None:
        if message.get("role") != "assistant":
            return
        self.persisted = True
        if not self._streamed:
            for block in map(as_mapping, as_list(message.get("content"))):
                if block.get("type") == "text" and (text := text_of(block.get("text"))):
                    self._emit(TextDeltaEvent(content=text))
                elif block.get("type") == "thinking" and (thinking := text_of(block.get("thinking"))):
                    self._emit(ThinkingDeltaEvent(content=thinking))
        self._streamed = False
        usage = as_mapping(message.get("usage"))
        fresh, output = as_count(usage.get("input")), as_count(usage.get("output"))
        cached = (as_count(usage.get("cacheRead")) or 0) + (as_count(usage.get("cacheWrite")) or 0)
        if fresh is not None or output is not None:
            self._counted = True
            self.input_tokens += (fresh or 0) + cached
            self.output_tokens += output or 0
            self.cached_tokens += as_count(usage.get("cacheRead")) or 0
        self.stop_reason = text_of(message.get("stopReason")) or self.stop_reason
        if self.stop_reason == "error":
            self.error = text_of(message.get("errorMessage")) or "no reason given"

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end``; every call still open is ended. Returned, not emitted."""
        self.tracker.close_all("Not finished: the turn ended before this call's outcome was reported.")
        counted = self._counted
        return TurnEndEvent(
            input_tokens=self.input_tokens if counted else None,
            output_tokens=self.output_tokens if counted else None,
            total_tokens=self.input_tokens + self.output_tokens if counted else None,
            cached_input_tokens=self.cached_tokens or None,
            stop_reason=_STOP_REASONS.get(self.stop_reason or "stop", "completed"),
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )


def run_failure(mapper: PiEventMapper) -> str | None:
    """Why the run failed (its last assistant message ended in ``error``), or ``None``."""
    if mapper.stop_reason != "error":
        return None
    return f"Pi ended the turn with an error: {mapper.error}"


def result_text(result: object) -> str:
    """The text of a tool result's ``content`` blocks (other blocks as JSON)."""
    parts: list[str] = []
    for block in map(as_mapping, as_list(as_mapping(result).get("content"))):
        text = text_of(block.get("text"))
        if text is not None:
            parts.append(text)
        elif block:
            parts.append(json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)
