"""The subagents a turn follows (Claude Code's, Copilot's, OpenCode's), as ``agent_work`` snapshots show them."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from hive_protocol import AgentWorkEvent, WorkItem, WorkItemStatus

__all__ = ["Subagent", "stop_running", "subagent_work", "work_items"]


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
