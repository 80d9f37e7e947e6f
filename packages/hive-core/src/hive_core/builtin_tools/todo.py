"""The plan tool: a todo list the agent keeps in ``<working_dir>/.hive/todo.json``, reported as plan events.

The list is the plan: its items, in order, are the steps, and a step's index is its 0-based position in the
list. Each call that changes the list compares it before and after and emits, in this order:

1. ``plan_step_completed`` with ``success=False`` (summary "removed") for each step removed while it was
   pending or in progress, with its index in the list before the removal.
2. ``plan_created`` when the list goes from empty to non-empty, with a new ``plan_id`` (kept in the file until
   the list is empty again, so it is stable across calls and restarts). It is emitted again, with the same
   ``plan_id``, whenever the steps change (added, removed, reordered or reworded): a client replaces the steps
   it knew, and later indices refer to the new list.
3. For each step whose status changed, in list order: ``plan_step_started`` when it became ``in_progress``;
   ``plan_step_completed`` with ``success=True`` when it became ``completed``, or with ``success=False``
   (summary "blocked") when it became ``blocked``. Becoming ``pending`` again emits nothing.
4. ``plan_completed`` with ``success=True`` when every step is completed. It is sent once, and again only
   after a step is added or reopened and everything is completed anew. When the list is emptied (``clear``,
   or removing the last step) before that, ``plan_completed`` with ``success=False`` says the plan was
   dropped.

Calls are serialised, and their events are emitted on the event loop in the order the changes were made.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Literal

import anyio.from_thread
import anyio.to_thread
import msgspec

from hive_core.tool_names import MANAGE_TODO
from hive_core.tools import ToolContext
from hive_core.tools import tool
from hive_protocol import Event
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent

__all__ = ["TODO_FILE", "TodoAction", "TodoItem", "TodoList", "TodoPriority", "TodoStatus", "manage_todo"]

TodoAction = Literal["add", "list", "update", "complete", "remove", "clear"]
"""What ``manage_todo`` does."""
TodoStatus = Literal["pending", "in_progress", "blocked", "completed"]
"""Where a step stands."""
TodoPriority = Literal["low", "medium", "high"]
"""How much a step matters."""

TODO_FILE = Path(".hive") / "todo.json"
"""Where the list is kept, relative to the working directory."""

_LOCK = threading.Lock()
_UNFINISHED: tuple[TodoStatus, ...] = ("pending", "in_progress")


class TodoItem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One step of the plan."""

    id: str
    """Its number, unique within the plan."""
    task: str
    """What the step is."""
    status: TodoStatus = "pending"
    """Where it stands."""
    priority: TodoPriority = "medium"
    """How much it matters."""
    dependencies: list[str] = []
    """Ids of steps to finish first."""
    created_at: str
    """When it was added (ISO 8601, UTC)."""
    updated_at: str | None = None
    """When it last changed."""
    completed_at: str | None = None
    """When it was completed."""


class TodoList(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The file's content: the plan and its steps."""

    plan_id: str | None = None
    """The plan's id while the list is not empty."""
    created_at: str | None = None
    """When the plan was created."""
    next_id: int = 1
    """The id the next step gets."""
    finished: bool = False
    """Whether ``plan_completed`` was sent for the steps as they are."""
    items: list[TodoItem] = []
    """The steps, in order."""


@dataclass(frozen=True)
class _Request:
    action: TodoAction
    task: str | None
    id: str | None
    status: TodoStatus | None
    priority: TodoPriority | None
    dependencies: str | list[str] | None


# Read-only in the sense planning mode needs: the plan is the agent's own notes under .hive/, not the user's work.
@tool(name=MANAGE_TODO, read_only=True)
async def manage_todo(
    ctx: ToolContext,
    action: TodoAction,
    task: str | None = None,
    id: str | int | None = None,
    status: TodoStatus | None = None,
    priority: TodoPriority | None = None,
    dependencies: str | list[str] | None = None,
) -> str:
    """Keep a todo list of the steps of the current work, shown to the user as the plan.

    Write the plan before a task of several steps, mark each step in_progress when starting it and complete it
    when done. Actions: "add" adds task as a new step (several steps at once, one per line); "list" shows the
    list; "update" changes the task text, status, priority or dependencies of step id; "complete" marks step
    id completed (refused while a step it depends on is unfinished); "remove" deletes step id; "clear" empties
    the list to start a new plan. Every change answers with the whole list.

    Args:
        action: One of add, list, update, complete, remove or clear.
        task: For add, the step (or steps, one per line); for update, the step's new text.
        id: The step's number, as shown by list, for update, complete and remove.
        status: For update (or add), the step's status: pending, in_progress, blocked or completed.
        priority: For add or update, the step's priority: low, medium (the default) or high.
        dependencies: For add or update, the ids of steps that must be completed first, comma-separated.
            For update, an empty string removes them.
    """
    step_id = None if id is None else str(id).strip().lstrip("#")
    request = _Request(action, task, step_id, status, priority, dependencies)
    return await anyio.to_thread.run_sync(partial(_run, ctx, request))


def _run(ctx: ToolContext, request: _Request) -> str:
    file = ctx.working_dir / TODO_FILE
    with _LOCK:
        before = _load(file)
        if request.action == "list":
            return _render(before)
        after = msgspec.json.decode(msgspec.json.encode(before), type=TodoList)
        message = _ACTIONS[request.action](after, request)
        if after.items and after.plan_id is None:
            after.plan_id = _new_plan_id()
            after.created_at = _now()
        elif not after.items:
            after.plan_id, after.created_at, after.next_id, after.finished = None, None, 1, False
        events = _events(before, after)
        if after != before:
            _save(file, after)
        for event in events:
            anyio.from_thread.run_sync(ctx.emit, event)
    return f"{message}\n\n{_render(after)}"


def _add(state: TodoList, request: _Request) -> str:
    tasks = [line.strip() for line in (request.task or "").splitlines() if line.strip()]
    if not tasks:
        raise ValueError("add needs task: the step to add (several steps go one per line)")
    dependencies = _dependencies(state, request.dependencies)
    now = _now()
    first = state.next_id
    for text in tasks:
        item = TodoItem(
            id=str(state.next_id),
            task=text,
            status=request.status or "pending",
            priority=request.priority or "medium",
            dependencies=list(dependencies),
            created_at=now,
        )
        if item.status == "completed":
            item.completed_at = now
        state.items.append(item)
        state.next_id += 1
    if len(tasks) == 1:
        return f"Added #{first}: {tasks[0]}"
    return f"Added {len(tasks)} steps, #{first} to #{state.next_id - 1}"


def _update(state: TodoList, request: _Request) -> str:
    item = _find(state, request)
    text = (request.task or "").strip()
    if not (text or request.status or request.priority or request.dependencies is not None):
        raise ValueError("update needs at least one of task, status, priority or dependencies")
    if text:
        item.task = " ".join(text.splitlines())
    if request.priority:
        item.priority = request.priority
    if request.dependencies is not None:
        item.dependencies = _dependencies(state, request.dependencies, owner=item.id)
    if request.status:
        _set_status(item, request.status)
    item.updated_at = _now()
    return f"Updated #{item.id}: {item.task} [{item.status}]"


def _complete(state: TodoList, request: _Request) -> str:
    item = _find(state, request)
    if item.status == "completed":
        return f"#{item.id} was already completed"
    unfinished = [
        other.id for other in state.items if other.id in item.dependencies and other.status != "completed"
    ]
    if unfinished:
        names = ", ".join(f"#{dep}" for dep in unfinished)
        raise ValueError(
            f"#{item.id} depends on {names}, which {'is' if len(unfinished) == 1 else 'are'} not completed; "
            "complete that first, or use update with status completed to mark it done anyway"
        )
    _set_status(item, "completed")
    item.updated_at = item.completed_at
    return f"Completed #{item.id}: {item.task}"


def _remove(state: TodoList, request: _Request) -> str:
    item = _find(state, request)
    state.items.remove(item)
    for other in state.items:
        if item.id in other.dependencies:
            other.dependencies.remove(item.id)
    return f"Removed #{item.id}: {item.task}"


def _clear(state: TodoList, request: _Request) -> str:
    del request
    count = len(state.items)
    if not count:
        return "The todo list was already empty"
    unfinished = sum(item.status != "completed" for item in state.items)
    state.items.clear()
    detail = f", {unfinished} of them unfinished" if unfinished else ""
    return f"Cleared the todo list ({count} {'step' if count == 1 else 'steps'}{detail})"


_ACTIONS: dict[TodoAction, Callable[[TodoList, _Request], str]] = {
    "add": _add,
    "update": _update,
    "complete": _complete,
    "remove": _remove,
    "clear": _clear,
}


def _set_status(item: TodoItem, status: TodoStatus) -> None:
    item.status = status
    item.completed_at = _now() if status == "completed" else None


def _find(state: TodoList, request: _Request) -> TodoItem:
    if not request.id:
        raise ValueError(f"{request.action} needs id: the step's number, as list shows it")
    for item in state.items:
        if item.id == request.id:
            return item
    known = ", ".join(f"#{item.id}" for item in state.items) or "none, the list is empty"
    raise LookupError(f"there is no step #{request.id} (steps: {known})")


def _dependencies(state: TodoList, raw: str | list[str] | None, *, owner: str | None = None) -> list[str]:
    parts = raw.split(",") if isinstance(raw, str) else raw or []
    ids = list(dict.fromkeys(part.strip().lstrip("#") for part in parts if part.strip()))
    if owner in ids:
        raise ValueError(f"step #{owner} cannot depend on itself")
    known = {item.id for item in state.items}
    unknown = [dep for dep in ids if dep not in known]
    if unknown:
        raise ValueError(
            f"dependencies name steps that do not exist: {', '.join('#' + dep for dep in unknown)}"
        )
    return ids


def _events(before: TodoList, after: TodoList) -> list[Event]:
    """The plan events that lead from ``before`` to ``after``; marks ``after`` finished when it is."""
    events: list[Event] = []
    kept = {item.id for item in after.items} if after.plan_id == before.plan_id else set[str]()
    if before.plan_id is not None:
        for index, item in enumerate(before.items):
            if item.id not in kept and item.status in _UNFINISHED:
                events.append(
                    PlanStepCompletedEvent(
                        plan_id=before.plan_id, step_index=index, success=False, summary="removed"
                    )
                )
    if after.plan_id is None:
        if before.plan_id is not None and before.items and not before.finished:
            events.append(
                PlanCompletedEvent(plan_id=before.plan_id, success=False, summary="the plan was dropped")
            )
        return events
    plan_id = after.plan_id
    same_plan = plan_id == before.plan_id
    if not same_plan or _steps(before) != _steps(after):
        steps = [item.task for item in after.items]
        events.append(PlanCreatedEvent(plan_id=plan_id, step_count=len(steps), step_descriptions=steps))
    previous = {item.id: item.status for item in before.items} if same_plan else {}
    for index, item in enumerate(after.items):
        if previous.get(item.id) == item.status:
            continue
        if item.status == "in_progress":
            events.append(PlanStepStartedEvent(plan_id=plan_id, step_index=index, description=item.task))
        elif item.status == "completed":
            events.append(PlanStepCompletedEvent(plan_id=plan_id, step_index=index, success=True))
        elif item.status == "blocked":
            events.append(
                PlanStepCompletedEvent(plan_id=plan_id, step_index=index, success=False, summary="blocked")
            )
    done = all(item.status == "completed" for item in after.items)
    if done and not (same_plan and before.finished):
        count = len(after.items)
        summary = f"all {count} {'step' if count == 1 else 'steps'} completed"
        events.append(PlanCompletedEvent(plan_id=plan_id, success=True, summary=summary))
    after.finished = done
    return events


def _steps(state: TodoList) -> list[tuple[str, str]]:
    return [(item.id, item.task) for item in state.items]


def _render(state: TodoList) -> str:
    if not state.items:
        return "The todo list is empty."
    done = sum(item.status == "completed" for item in state.items)
    lines = [f"Todo list: {done} of {len(state.items)} completed"]
    for item in state.items:
        notes: list[str] = []
        if item.priority != "medium":
            notes.append(f"{item.priority} priority")
        if item.dependencies:
            notes.append("after " + ", ".join(f"#{dep}" for dep in item.dependencies))
        suffix = f" ({'; '.join(notes)})" if notes else ""
        lines.append(f"  #{item.id} [{item.status}] {item.task}{suffix}")
    return "\n".join(lines)


def _load(file: Path) -> TodoList:
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        return TodoList()
    try:
        return msgspec.json.decode(data, type=TodoList)
    except msgspec.DecodeError as exc:
        raise ValueError(
            f"{TODO_FILE.as_posix()} cannot be read ({exc}); fix the file or delete it"
        ) from None


def _save(file: Path, state: TodoList) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    data = msgspec.json.format(msgspec.json.encode(state), indent=2) + b"\n"
    # Written aside and renamed into place, so a crash never leaves half a file.
    handle, temporary = tempfile.mkstemp(dir=file.parent, prefix=".todo-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.replace(temporary, file)
    except BaseException:
        os.unlink(temporary)
        raise


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _new_plan_id() -> str:
    return f"plan-{datetime.now(UTC):%Y%m%d%H%M%S}-{secrets.token_hex(3)}"
