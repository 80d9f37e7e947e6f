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
from dataclasses import dataclass, field
from typing import Any, Final

from hive_core.tools import EventSink
from hive_protocol import AgentWorkEvent, WorkItem, WorkItemStatus, excerpt
from hive_providers.backends.kit.json_values import as_list, as_mapping
from hive_providers.backends.kit.tool_calls import text_of

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
_TOOL_ITEMS: Final = frozenset(
    {"commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall", "webSearch"}
)
_SUMMARY_LIMIT: Final = 2000


@dataclass
class _Child:
    item_id: str
    title: str | None = None
    status: WorkItemStatus = "running"
    summary: str | None = None
    text: str = ""
    tool_calls: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None


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
        """Every sub-agent, as the next snapshot would list it."""
        now = time.monotonic()
        return [
            WorkItem(
                id=child.item_id,
                kind="subagent",
                status=child.status,
                title=child.title,
                summary=child.summary,
                tool_calls=child.tool_calls,
                duration_ms=int(((child.ended or now) - child.started) * 1000),
                input_tokens=child.input_tokens,
                output_tokens=child.output_tokens,
            )
            for child in self._children.values()
        ]

    def knows(self, thread_id: str) -> bool:
        """Whether ``thread_id`` is one of the sub-agents' threads."""
        return thread_id in self._children

    # -- the app-server -------------------------------------------------------------------------------------

    def on_notification(self, method: str, params: Mapping[str, Any]) -> bool:
        """Map one app-server notification; ``True`` when it belonged to a sub-agent's thread (not the main
        thread's turn)."""
        thread_id = text_of(params.get("threadId"))
        if thread_id is None or thread_id == self.main_thread:
            if method in ("item/started", "item/completed"):
                self.on_item(as_mapping(params.get("item")))
            return False
        child = self._children.get(thread_id)
        if child is None:
            turn = as_mapping(params.get("turn"))
            root = text_of(turn.get("rootTurnId"))
            if method != "turn/started" or root is None or root != self.turn_id:
                return False  # another thread's, not a sub-agent of this one
            child = self._child(thread_id)
        self._on_child(child, method, params)
        return True

    def on_item(self, item: Mapping[str, Any]) -> None:
        """Map one item of the main thread (app-server camel case or ``exec --json`` snake case)."""
        kind = text_of(item.get("type"))
        if kind in ("collabAgentToolCall", "collab_tool_call"):
            self._on_collab(item)
        elif kind == "subAgentActivity":
            thread_id = text_of(item.get("agentThreadId"))
            if thread_id is None:
                return
            child = self._child(thread_id, title=text_of(item.get("agentPath")))
            status = _ACTIVITY.get(text_of(item.get("kind")) or "")
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

    def _on_collab(self, item: Mapping[str, Any]) -> None:
        tool = text_of(item.get("tool"))
        status = text_of(item.get("status"))
        receivers = [
            thread
            for thread in (
                text_of(value)
                for value in as_list(item.get("receiverThreadIds", item.get("receiver_thread_ids")))
            )
            if thread
        ]
        states = as_mapping(item.get("agentsStates", item.get("agents_states")))
        spawn = tool in ("spawnAgent", "spawn_agent")
        prompt = text_of(item.get("prompt"))
        if spawn and status == "failed" and not receivers:
            item_id = text_of(item.get("id"))
            if item_id is not None:
                child = self._child(item_id, item_id=f"codex:{item_id}", title=prompt)
                self._set_status(child, "failed")
        for thread_id in receivers:
            if spawn:
                self._child(thread_id, title=prompt)
        for thread_id, state in states.items():
            child = self._child(thread_id, title=prompt if spawn else None)
            state = as_mapping(state)
            mapped = AGENT_STATUSES.get(_camel(text_of(state.get("status")) or ""))
            if mapped is not None:
                self._set_status(child, mapped)
            message = text_of(state.get("message"))
            if message:
                child.summary = excerpt(message, _SUMMARY_LIMIT)
        self._changed()

    def _on_child(self, child: _Child, method: str, params: Mapping[str, Any]) -> None:
        match method:
            case "turn/started":
                self._set_status(child, "running")
                child.text = ""
            case "turn/completed":
                turn = as_mapping(params.get("turn"))
                status = _TURN_STATUSES.get(text_of(turn.get("status")) or "", "completed")
                if status == "failed":
                    error = text_of(as_mapping(turn.get("error")).get("message"))
                    if error:
                        child.summary = excerpt(error, _SUMMARY_LIMIT)
                self._set_status(child, status)
            case "item/agentMessage/delta":
                delta = text_of(params.get("delta"))
                if delta:
                    child.text += delta
                    child.summary = excerpt(child.text, _SUMMARY_LIMIT)
            case "item/completed":
                item = as_mapping(params.get("item"))
                kind = text_of(item.get("type"))
                if kind == "agentMessage":
                    text = text_of(item.get("text"))
                    if text:
                        child.text = text
                        child.summary = excerpt(text, _SUMMARY_LIMIT)
                elif kind in _TOOL_ITEMS:
                    child.tool_calls += 1
                elif kind in ("collabAgentToolCall", "subAgentActivity"):
                    self.on_item(item)  # a sub-agent's own sub-agents
                    return
            case "thread/tokenUsage/updated":
                total = as_mapping(as_mapping(params.get("tokenUsage")).get("total"))
                child.input_tokens = _int(total.get("inputTokens"))
                child.output_tokens = _int(total.get("outputTokens"))
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


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
