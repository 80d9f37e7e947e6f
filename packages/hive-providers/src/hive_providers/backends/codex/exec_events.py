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
from typing import Any
from typing import Final

from hive_core.failures import ChatError
from hive_core.tools import EventSink
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_updates import text_content
from hive_providers.backends.kit.wire import Unknown

from .exec_wire import ExecAgentMessage
from .exec_wire import ExecCommand
from .exec_wire import ExecErrorEvent
from .exec_wire import ExecEvent
from .exec_wire import ExecFileChange
from .exec_wire import ExecItem
from .exec_wire import ExecItemEvent
from .exec_wire import ExecMcpCall
from .exec_wire import ExecReasoning
from .exec_wire import ExecTodoList
from .exec_wire import ExecWarning
from .exec_wire import ThreadStarted
from .exec_wire import ThreadUsage
from .exec_wire import TurnCompleted
from .exec_wire import TurnFailed
from .items import CHANGE_KINDS
from .items import command_line
from .items import turn_end
from .subagents import SubThreads
from .wire import CollabAgentToolCall

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
        self.completed: TurnCompleted | None = None
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

    def on_event(self, event: ExecEvent) -> None:
        """Map one line's decoded event (:func:`~.exec_wire.decode_exec_event`); anything unknown is ignored."""
        match event:
            case ThreadStarted(thread_id=thread_id):
                self.thread_id = self.thread_id or thread_id or None
            case ExecItemEvent(item=item, completed=completed):
                self._item(item, completed=completed)
            case TurnCompleted():
                self.completed = event
            case TurnFailed(error=error):
                self.failed = True
                self.failure = (error.message if error is not None else None) or self.failure
            case ExecErrorEvent(message=message):
                self.failure = message or self.failure
            case Unknown():
                pass

    def finish(self, *, cancelled: bool = False) -> TurnEndEvent:
        """The turn's ``turn_end`` (returned, not emitted), after ending every call still open.

        Raises :class:`~hive_core.failures.ChatError` for a failed turn.
        """
        self.tracker.close_all(_OPEN_AT_END)
        if self.failed and not cancelled:
            raise ChatError(f"codex: {self.failure or 'Codex reported the turn failed'}", code="unknown")
        usage = (self.completed.usage if self.completed is not None else None) or ThreadUsage()
        total = (usage.input_tokens, usage.output_tokens)
        cached = usage.cached_input_tokens or 0
        input_tokens = output_tokens = cached_tokens = None
        if total[0] is not None and total[1] is not None:
            self.usage_after = (total[0], total[1], cached)
            before = self.usage_before
            if before is not None:
                input_tokens = max(0, total[0] - before[0])
                output_tokens = max(0, total[1] - before[1])
                cached_tokens = max(0, cached - before[2])
        elapsed = int((time.monotonic() - self._started) * 1000)
        return turn_end(input_tokens, output_tokens, cached_tokens, cancelled=cancelled, duration_ms=elapsed)

    # -- items ----------------------------------------------------------------------------------------------

    def _item(self, item: ExecItem, *, completed: bool) -> None:
        match item:
            case ExecAgentMessage(text=text):
                if completed and text:
                    self._emit(TextDeltaEvent(content=text))
            case ExecReasoning(text=text):
                if completed and text:
                    self._emit(ThinkingDeltaEvent(content=text))
            case ExecCommand() | ExecFileChange() | ExecMcpCall() if item.id:
                self._call(item.id, item, completed=completed)
            case ExecTodoList() if item.id:
                self._plan(item.id, item, completed=completed)
            case CollabAgentToolCall():
                if self.subthreads is not None:
                    self.subthreads.on_item(item)
            case ExecWarning(message=message):
                if message:
                    self.warnings.append(message)
            case _:
                pass

    def _call(
        self, item_id: str, item: ExecCommand | ExecFileChange | ExecMcpCall, *, completed: bool
    ) -> None:
        status = _STATUSES.get(item.status or "", "completed" if completed else "in_progress")
        update: dict[str, Any]
        if isinstance(item, ExecCommand):
            command = command_line(item.command)
            update = {"kind": "execute", "title": command or "command", "rawInput": {"command": command}}
            output = item.aggregated_output or None
            if not output and item.exit_code is not None and item.exit_code != 0:
                output = f"exit code {item.exit_code}"
        elif isinstance(item, ExecFileChange):
            paths = [change.path for change in item.changes if change.path]
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
                    f"{CHANGE_KINDS.get(change.kind or '', 'changed')} {change.path}"
                    for change in item.changes
                )
                if status == "completed"
                else None
            )
        else:
            server, tool = item.server or "mcp", item.tool or "tool"
            update = {"kind": "other", "title": f"{server}.{tool}", "rawInput": item.arguments}
            blocks = item.result.content if item.result is not None else []
            output = (item.error.message if item.error is not None else None) or "\n".join(
                block.text for block in blocks if block.text
            )
        update["sessionUpdate"] = "tool_call_update" if completed else "tool_call"
        update["toolCallId"] = item_id
        update["status"] = "in_progress"
        if output:
            update["content"] = text_content(output)
        call_id = self.tracker.upsert(update)
        if call_id is None or status == "in_progress" or not completed:
            return
        if item.status == "declined":
            self.tracker.refuse(call_id, "rejected")
        self.tracker.upsert({"sessionUpdate": "tool_call_update", "toolCallId": item_id, "status": status})

    def _plan(self, plan_id: str, item: ExecTodoList, *, completed: bool) -> None:
        steps = [entry.text or "" for entry in item.items]
        done = [entry.completed is True for entry in item.items]
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
