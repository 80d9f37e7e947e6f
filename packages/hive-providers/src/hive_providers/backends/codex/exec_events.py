"""``codex exec --json`` lines as hive events: :class:`ExecTurn`.

One turn is one process; its stdout is one JSON event per line: ``thread.started``
names the thread (the session id), ``item.started`` / ``item.updated`` / ``item.completed`` carry whole items
(exec streams no text deltas), ``turn.completed`` gives the usage, ``turn.failed`` and ``error`` the failure.
Items map as on the app-server: ``agent_message`` -> ``text_delta``, ``reasoning`` -> ``thinking_delta``,
``command_execution`` -> an ``execute_command`` call, ``file_change`` -> an ``edit_file`` call, ``mcp_tool_call``
-> a call of ``<server>.<tool>`` (each ``tool_start`` when first seen, ``tool_end`` when completed or failed),
``todo_list`` -> ``plan_*`` events, ``collab_tool_call`` -> ``agent_work`` (:mod:`.subagents`); ``error`` items
are Codex's warnings (kept in :attr:`ExecTurn.warnings`, never an ``error`` event).

The usage of ``turn.completed`` is the *thread's* total so far (Codex restores it when it resumes a thread): the
turn's is that less the total after the previous turn, when it is known (:attr:`ExecTurn.usage_before`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, Final

from hive_core.failures import ChatError
from hive_core.tools import EventSink
from hive_protocol import (
    PlanCompletedEvent,
    PlanCreatedEvent,
    PlanStepCompletedEvent,
    PlanStepStartedEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TurnEndEvent,
)
from hive_providers.backends.kit.json_values import as_list, as_mapping
from hive_providers.backends.kit.tool_calls import ToolCallTracker, text_of

from .items import command_line
from .subagents import SubThreads

__all__ = ["ExecTurn", "ExecUsage"]

ExecUsage = tuple[int, int, int]
"""A thread's token total: input, output, cached input."""

_STATUSES: Final = {
    "in_progress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "declined": "failed",
}
_OPEN_AT_END: Final = "Codex ended the turn without reporting this call's result"


class ExecTurn:
    """Maps the lines of one ``codex exec --json`` run onto hive events through ``emit``."""

    def __init__(
        self,
        emit: EventSink,
        tracker: ToolCallTracker,
        subthreads: SubThreads | None = None,
        *,
        usage_before: ExecUsage | None = None,
    ) -> None:
        self._emit = emit
        self.tracker = tracker
        """The turn's tool calls."""
        self.subthreads = subthreads
        """Where collab calls go; ``None`` ignores them."""
        self.usage_before = usage_before
        """The thread's total before this turn: ``(0, 0, 0)`` for a new thread, the previous turn's total for one
        this backend ran, ``None`` when unknown (a thread resumed from an earlier process): no usage then."""
        self.thread_id: str | None = None
        """The thread, once ``thread.started`` named it."""
        self.completed: dict[str, Any] | None = None
        """The ``turn.completed`` event, once it arrived."""
        self.failure: str | None = None
        """The message of ``turn.failed`` (or of the last ``error`` event)."""
        self.failed = False
        """Whether ``turn.failed`` arrived: the turn's end, as an error."""
        self.warnings: list[str] = []
        """Codex's ``error`` items: warnings that did not stop the turn."""
        self.usage_after: ExecUsage | None = None
        """The thread's total after this turn, from ``turn.completed``."""
        self._plan_steps: dict[str, list[bool]] = {}
        self._plans_done: set[str] = set()
        self._started = time.monotonic()

    @property
    def ended(self) -> bool:
        """Whether the turn's end (``turn.completed`` or ``turn.failed``) arrived."""
        return self.completed is not None or self.failed

    def on_event(self, event: Mapping[str, Any]) -> None:
        """Map one line's event; anything unknown is ignored."""
        match text_of(event.get("type")):
            case "thread.started":
                self.thread_id = self.thread_id or text_of(event.get("thread_id"))
            case "item.started" | "item.updated" | "item.completed" as kind:
                self._item(as_mapping(event.get("item")), completed=kind == "item.completed")
            case "turn.completed":
                self.completed = dict(event)
            case "turn.failed":
                self.failed = True
                self.failure = text_of(as_mapping(event.get("error")).get("message")) or self.failure
            case "error":
                self.failure = text_of(event.get("message")) or self.failure
            case _:
                pass

    def finish(self, *, cancelled: bool = False) -> TurnEndEvent:
        """The turn's ``turn_end`` (returned, not emitted), after ending every call still open.

        Raises :class:`~hive_core.failures.ChatError` for a failed turn.
        """
        self.tracker.close_all(_OPEN_AT_END)
        if self.failed and not cancelled:
            raise ChatError(f"codex: {self.failure or 'Codex reported the turn failed'}", code="unknown")
        usage = as_mapping((self.completed or {}).get("usage"))
        total = (_int(usage.get("input_tokens")), _int(usage.get("output_tokens")))
        cached = _int(usage.get("cached_input_tokens")) or 0
        input_tokens = output_tokens = cached_tokens = None
        if total[0] is not None and total[1] is not None:
            self.usage_after = (total[0], total[1], cached)
            before = self.usage_before
            if before is not None:
                input_tokens = max(0, total[0] - before[0])
                output_tokens = max(0, total[1] - before[1])
                cached_tokens = max(0, cached - before[2])
        return TurnEndEvent(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens
            if input_tokens is not None and output_tokens is not None
            else None,
            cached_input_tokens=cached_tokens or None,
            stop_reason="cancelled" if cancelled else "completed",
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )

    # -- items ----------------------------------------------------------------------------------------------

    def _item(self, item: Mapping[str, Any], *, completed: bool) -> None:
        kind = text_of(item.get("type"))
        item_id = text_of(item.get("id"))
        match kind:
            case "agent_message":
                text = text_of(item.get("text"))
                if completed and text:
                    self._emit(TextDeltaEvent(content=text))
            case "reasoning":
                text = text_of(item.get("text"))
                if completed and text:
                    self._emit(ThinkingDeltaEvent(content=text))
            case "command_execution" | "file_change" | "mcp_tool_call" if item_id is not None:
                self._call(item_id, kind, item, completed=completed)
            case "todo_list" if item_id is not None:
                self._plan(item_id, item, completed=completed)
            case "collab_tool_call":
                if self.subthreads is not None:
                    self.subthreads.on_item(item)
            case "error":
                message = text_of(item.get("message"))
                if message:
                    self.warnings.append(message)
            case _:
                pass

    def _call(self, item_id: str, kind: str, item: Mapping[str, Any], *, completed: bool) -> None:
        status = _STATUSES.get(text_of(item.get("status")) or "", "completed" if completed else "in_progress")
        if kind == "command_execution":
            command = command_line(item.get("command"))
            update: dict[str, Any] = {
                "kind": "execute",
                "title": command or "command",
                "rawInput": {"command": command},
            }
            output = text_of(item.get("aggregated_output"))
            code = item.get("exit_code")
            if not output and isinstance(code, int) and not isinstance(code, bool) and code != 0:
                output = f"exit code {code}"
        elif kind == "file_change":
            changes = [as_mapping(change) for change in as_list(item.get("changes"))]
            paths = [path for path in (text_of(change.get("path")) for change in changes) if path]
            arguments: dict[str, Any] = {"path": paths[0]} if paths else {}
            if len(paths) > 1:
                arguments["paths"] = paths
            update = {
                "kind": "edit",
                "title": "edit " + ", ".join(paths) if paths else "edit files",
                "rawInput": arguments,
            }
            output = (
                "\n".join(
                    f"{_CHANGES.get(text_of(c.get('kind')) or '', 'changed')} {text_of(c.get('path'))}"
                    for c in changes
                )
                if status == "completed"
                else None
            )
        else:
            server, tool = text_of(item.get("server")) or "mcp", text_of(item.get("tool")) or "tool"
            arguments = as_mapping(item.get("arguments"))
            update = {"kind": "other", "title": f"{server}.{tool}", "rawInput": arguments}
            error = text_of(as_mapping(item.get("error")).get("message"))
            result = as_mapping(item.get("result"))
            output = error or "\n".join(
                text
                for text in (
                    text_of(as_mapping(block).get("text")) for block in as_list(result.get("content"))
                )
                if text
            )
        update.update(
            {"sessionUpdate": "tool_call_update" if completed else "tool_call", "toolCallId": item_id}
        )
        update["status"] = "in_progress"
        if output:
            update["content"] = [{"type": "content", "content": {"type": "text", "text": output}}]
        call_id = self.tracker.upsert(update)
        if call_id is None or status == "in_progress" or not completed:
            return
        if text_of(item.get("status")) == "declined":
            self.tracker.refuse(call_id, "rejected")
        self.tracker.upsert({"sessionUpdate": "tool_call_update", "toolCallId": item_id, "status": status})

    def _plan(self, plan_id: str, item: Mapping[str, Any], *, completed: bool) -> None:
        entries = [as_mapping(entry) for entry in as_list(item.get("items"))]
        steps = [text_of(entry.get("text")) or "" for entry in entries]
        done = [entry.get("completed") is True for entry in entries]
        if not steps or plan_id in self._plans_done:
            return
        known = self._plan_steps.get(plan_id)
        if known is None or len(known) != len(steps):
            known = self._plan_steps[plan_id] = [False] * len(steps)
            self._emit(PlanCreatedEvent(plan_id=plan_id, step_count=len(steps), step_descriptions=steps))
            if not done[0]:
                self._emit(PlanStepStartedEvent(plan_id=plan_id, step_index=0, description=steps[0]))
        for index, now in enumerate(done):
            if now and not known[index]:
                known[index] = True
                self._emit(PlanStepCompletedEvent(plan_id=plan_id, step_index=index, success=True))
                following = index + 1
                if following < len(steps) and not done[following]:
                    self._emit(
                        PlanStepStartedEvent(
                            plan_id=plan_id, step_index=following, description=steps[following]
                        )
                    )
        if all(known) or completed:
            self._plans_done.add(plan_id)
            self._emit(
                PlanCompletedEvent(
                    plan_id=plan_id,
                    success=all(known),
                    summary=None if all(known) else "the turn ended before every step was done",
                )
            )


_CHANGES: Final = {"add": "created", "delete": "deleted", "update": "edited"}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
