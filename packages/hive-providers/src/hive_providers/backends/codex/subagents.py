"""Codex's sub-agents (its collab tools and the child threads they start) as ``agent_work`` snapshots.

A ``spawn_agent`` call of the model shows as a ``collabAgentToolCall`` item of the main thread (``tool:
"spawnAgent"``, the task as ``prompt``, the child's thread in ``receiverThreadIds`` once it completes); every
later collab call (``wait``, ``sendInput``, ``closeAgent``...) carries the children's last known state in
``agentsStates`` (``{status, message}``). The child threads run on the same app-server: their ``turn/started``
(``rootTurnId`` names the main thread's turn), ``item/*`` and ``turn/completed`` notifications arrive beside the
main thread's, with their own ``threadId``. ``subAgentActivity`` items (``multi_agent_v2``) name a child's thread
and what happened to it. ``codex exec --json`` reports the same calls as ``collab_tool_call`` items in snake
case, and no child-thread events.

:class:`SubThreads` keeps one :class:`~hive_protocol.WorkItem` per child thread, id ``codex:<threadId>`` (a spawn
that failed before it had a thread: ``codex:<itemId>``), with the task, the status, the child's latest text, its
finished tool calls and its token usage, and emits the whole list whenever one of them changes.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from hive_core.tools import EventSink
from hive_protocol import AgentWorkEvent
from hive_protocol import WorkItem
from hive_protocol import WorkItemStatus
from hive_protocol import excerpt
from hive_providers.backends.kit.subagent_work import Subagent
from hive_providers.backends.kit.subagent_work import work_items

from .wire import AgentMessage
from .wire import AgentMessageDelta
from .wire import AppServerNotification
from .wire import CollabAgentToolCall
from .wire import CommandExecution
from .wire import FileChange
from .wire import Item
from .wire import ItemNotification
from .wire import SubAgentActivity
from .wire import TokenBreakdown
from .wire import TokenUsageUpdated
from .wire import Turn
from .wire import TurnNotification
from .wire import UnknownItem
from .wire import camel_case

__all__ = ["AGENT_STATUSES", "SubThreads"]

AGENT_STATUSES: Final[Mapping[str, WorkItemStatus]] = {
    "pendingInit": "running",
    "running": "running",
    "completed": "completed",
    "errored": "failed",
    "notFound": "failed",
    "interrupted": "stopped",
    "shutdown": "stopped",
}
"""A collab agent's status (``CollabAgentStatus``, camel or snake case) to the work item's."""

_ACTIVITY: Final[Mapping[str, WorkItemStatus]] = {
    "started": "running",
    "interacted": "running",
    "interrupted": "stopped",
    "completed": "completed",
}
_TURN_STATUSES: Final[Mapping[str, WorkItemStatus]] = {
    "completed": "completed",
    "failed": "failed",
    "interrupted": "stopped",
    "inProgress": "running",
}
_TOOL_ITEMS: Final = frozenset({"mcpToolCall", "dynamicToolCall", "webSearch"})
"""The tool-call items beside commands and file changes, counted as a sub-agent's calls."""
_SUMMARY_LIMIT: Final = 2000


@dataclass(kw_only=True)
class _Child(Subagent):
    text: str = ""
    """Its latest message, as it streams."""


class SubThreads:
    """The sub-agents of one Codex thread, across its turns; snapshots go to :attr:`emit`."""

    def __init__(self, main_thread: str | None = None) -> None:
        self.main_thread = main_thread
        """The thread whose sub-agents these are (notifications of other unknown threads are ignored)."""
        self.emit: EventSink | None = None
        """Where snapshots go: the running turn's sink; ``None`` between turns (changes are kept, not sent)."""
        self.turn_id: str | None = None
        """The main thread's running turn: a thread whose turn has it as ``rootTurnId`` is a sub-agent."""
        self._children: dict[str, _Child] = {}
        self._last: list[WorkItem] | None = None

    @property
    def items(self) -> list[WorkItem]:
        """Every sub-agent, as the next snapshot would list it (a running one does not block the turn's end)."""
        return work_items(self._children.values(), blocking=False)

    def knows(self, thread_id: str) -> bool:
        """Whether ``thread_id`` is one of the sub-agents' threads."""
        return thread_id in self._children

    # -- the app-server -------------------------------------------------------------------------------------

    def on_notification(self, notification: AppServerNotification) -> bool:
        """Map one decoded app-server notification; ``True`` when it belonged to a sub-agent's thread (not the
        main thread's turn)."""
        thread_id = notification.thread_id or None
        if thread_id is None or thread_id == self.main_thread:
            if isinstance(notification, ItemNotification):
                self.on_item(notification.item)
            return False
        child = self._children.get(thread_id)
        if child is None:
            if not isinstance(notification, TurnNotification) or notification.completed:
                return False
            root = notification.turn.root_turn_id if notification.turn is not None else None
            if not root or root != self.turn_id:
                return False  # another thread's, not a sub-agent of this one
            child = self._child(thread_id)
        self._on_child(child, notification)
        return True

    def on_item(self, item: Item) -> None:
        """Map one item of the main thread (the app-server's, or ``exec --json``'s collab calls decoded as the
        app-server's)."""
        if isinstance(item, CollabAgentToolCall):
            self._on_collab(item)
        elif isinstance(item, SubAgentActivity):
            thread_id = item.agent_thread_id or None
            if thread_id is None:
                return
            child = self._child(thread_id, title=item.agent_path or None)
            status = _ACTIVITY.get(item.kind or "")
            if status is not None:
                self._set_status(child, status)
            self._changed()

    def stop_running(self) -> None:
        """Mark every sub-agent still running as stopped (the main turn was cancelled)."""
        for child in self._children.values():
            if child.status == "running":
                self._set_status(child, "stopped")
        self._changed()

    def flush(self) -> None:
        """Send a snapshot if something changed since the last one was sent (changes between turns)."""
        self._changed()

    # -- internals ------------------------------------------------------------------------------------------

    def _on_collab(self, item: CollabAgentToolCall) -> None:
        tool, status, prompt = item.tool, item.status, item.prompt or None
        receivers = [thread for thread in item.receiver_thread_ids if thread]
        spawn = tool in ("spawnAgent", "spawn_agent")
        if spawn and status == "failed" and not receivers and item.id:
            child = self._child(item.id, item_id=f"codex:{item.id}", title=prompt)
            self._set_status(child, "failed")
        for thread_id in receivers:
            if spawn:
                self._child(thread_id, title=prompt)
        for thread_id, state in item.agents_states.items():
            child = self._child(thread_id, title=prompt if spawn else None)
            mapped = AGENT_STATUSES.get(camel_case(state.status or ""))
            if mapped is not None:
                self._set_status(child, mapped)
            if state.message:
                child.summary = excerpt(state.message, _SUMMARY_LIMIT)
        self._changed()

    def _on_child(self, child: _Child, notification: AppServerNotification) -> None:
        match notification:
            case TurnNotification(completed=False):
                self._set_status(child, "running")
                child.text = ""
            case TurnNotification(turn=turn):
                turn = turn or Turn()
                status = _TURN_STATUSES.get(turn.status or "", "completed")
                if status == "failed" and turn.error is not None and turn.error.message:
                    child.summary = excerpt(turn.error.message, _SUMMARY_LIMIT)
                self._set_status(child, status)
            case AgentMessageDelta(delta=delta):
                if delta:
                    child.text += delta
                    child.summary = excerpt(child.text, _SUMMARY_LIMIT)
            case ItemNotification(item=item, completed=True):
                if isinstance(item, AgentMessage):
                    if item.text:
                        child.text = item.text
                        child.summary = excerpt(item.text, _SUMMARY_LIMIT)
                elif isinstance(item, CommandExecution | FileChange) or (
                    isinstance(item, UnknownItem) and item.type in _TOOL_ITEMS
                ):
                    child.tool_calls += 1
                elif isinstance(item, CollabAgentToolCall | SubAgentActivity):
                    self.on_item(item)  # a sub-agent's own sub-agents
                    return
            case TokenUsageUpdated(token_usage=usage):
                total = (usage.total if usage is not None else None) or TokenBreakdown()
                child.input_tokens = total.input_tokens
                child.output_tokens = total.output_tokens
            case _:
                return
        self._changed()

    def _child(self, thread_id: str, *, item_id: str | None = None, title: str | None = None) -> _Child:
        child = self._children.get(thread_id)
        if child is None:
            child = self._children[thread_id] = _Child(item_id=item_id or f"codex:{thread_id}")
        if title and child.title is None:
            child.title = excerpt(title, _SUMMARY_LIMIT)
        return child

    def _set_status(self, child: _Child, status: WorkItemStatus) -> None:
        if child.status == status:
            return
        child.status = status
        child.ended = None if status == "running" else time.monotonic()

    def _changed(self) -> None:
        if self.emit is None or not self._children:
            return
        items = self.items
        if self._last is not None and _without_time(items) == _without_time(self._last):
            return
        self._last = items
        self.emit(AgentWorkEvent(items=items))


def _without_time(items: list[WorkItem]) -> list[tuple[Any, ...]]:
    return [
        (i.id, i.status, i.title, i.summary, i.tool_calls, i.input_tokens, i.output_tokens) for i in items
    ]
