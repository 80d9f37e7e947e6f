"""The subagents a turn follows (Claude Code's, Copilot's, OpenCode's), as ``agent_work`` snapshots show them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Generic
from typing import TypeVar

from hive_core.tools import EventSink
from hive_protocol import AgentWorkEvent
from hive_protocol import WorkItem
from hive_protocol import WorkItemStatus

__all__ = ["Subagent", "Subagents", "stop_running", "subagent_work", "work_items"]


@dataclass(kw_only=True)
class Subagent:
    """One subagent: its work item's id, what it shows and when it started."""

    item_id: str
    title: str | None = None
    started: float = field(default_factory=time.monotonic)
    status: WorkItemStatus = "running"
    summary: str | None = None
    tool_calls: int = 0
    ended: float | None = None
    """When it stopped running, for the backends that know (its duration stops there)."""
    input_tokens: int | None = None
    output_tokens: int | None = None


S = TypeVar("S", bound=Subagent)


class Subagents(Generic[S]):
    """A turn's subagents by the CLI's id for each; :meth:`snapshot` shows them all to ``emit`` after a change."""

    def __init__(self, emit: EventSink) -> None:
        self.by_id: dict[str, S] = {}
        """The subagents, by the id the CLI gives each (its tool call's, or its child session's)."""
        self._emit = emit

    def snapshot(self) -> None:
        """Emit the ``agent_work`` snapshot of every subagent."""
        self._emit(subagent_work(self.by_id.values()))

    def stop_running(self) -> None:
        """Mark every subagent still running as stopped (a cancelled or failed turn), and show it if one was."""
        if stop_running(self.by_id.values()):
            self.snapshot()


def subagent_work(subagents: Iterable[Subagent]) -> AgentWorkEvent:
    """The snapshot of every subagent; a running one blocks the turn's completion."""
    return AgentWorkEvent(items=work_items(subagents, blocking=True))


def work_items(subagents: Iterable[Subagent], *, blocking: bool) -> list[WorkItem]:
    """Every subagent as a work item; with ``blocking``, a running one blocks the turn's completion."""
    now = time.monotonic()
    return [
        WorkItem(
            id=subagent.item_id,
            kind="subagent",
            status=subagent.status,
            title=subagent.title,
            summary=subagent.summary,
            blocks_completion=blocking and subagent.status == "running",
            tool_calls=subagent.tool_calls,
            duration_ms=int(((subagent.ended or now) - subagent.started) * 1000),
            input_tokens=subagent.input_tokens,
            output_tokens=subagent.output_tokens,
        )
        for subagent in subagents
    ]


def stop_running(subagents: Iterable[Subagent]) -> bool:
    """Mark every subagent still running as stopped (a cancelled or failed turn); whether there was one."""
    running = [subagent for subagent in subagents if subagent.status == "running"]
    for subagent in running:
        subagent.status = "stopped"
    return bool(running)
