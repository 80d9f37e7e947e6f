"""The subagents a turn follows (Claude Code's, Copilot's, OpenCode's), as ``agent_work`` snapshots show them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from hive_protocol import AgentWorkEvent, WorkItem, WorkItemStatus

__all__ = ["Subagent", "stop_running", "subagent_work"]


@dataclass(kw_only=True)
class Subagent:
    """One subagent: its work item's id, what it shows and when it started."""

    item_id: str
    title: str | None = None
    started: float = field(default_factory=time.monotonic)
    status: WorkItemStatus = "running"
    summary: str | None = None
    tool_calls: int = 0


def subagent_work(subagents: Iterable[Subagent]) -> AgentWorkEvent:
    """The snapshot of every subagent; a running one blocks the turn's completion."""
    now = time.monotonic()
    return AgentWorkEvent(
        items=[
            WorkItem(
                id=subagent.item_id,
                kind="subagent",
                status=subagent.status,
                title=subagent.title,
                summary=subagent.summary,
                blocks_completion=subagent.status == "running",
                tool_calls=subagent.tool_calls,
                duration_ms=int((now - subagent.started) * 1000),
            )
            for subagent in subagents
        ]
    )


def stop_running(subagents: Iterable[Subagent]) -> bool:
    """Mark every subagent still running as stopped (a cancelled or failed turn); whether there was one."""
    running = [subagent for subagent in subagents if subagent.status == "running"]
    for subagent in running:
        subagent.status = "stopped"
    return bool(running)
