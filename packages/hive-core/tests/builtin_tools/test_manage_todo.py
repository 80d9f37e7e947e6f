from __future__ import annotations

import json
from typing import TYPE_CHECKING
from typing import Any

import anyio
import pytest

from hive_core.builtin_tools import manage_todo
from hive_protocol import Event
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = pytest.mark.anyio


async def todo(project: Project, action: str, **arguments: Any) -> str:
    return await project.call(manage_todo, action=action, **arguments)


def taken(project: Project) -> list[Event]:
    """The events emitted since the last look."""
    events = list(project.events)
    project.events.clear()
    return events


def plan_id_of(project: Project) -> str:
    return json.loads((project.root / ".hive" / "todo.json").read_text())["plan_id"]


def the_one_step_completed(plan_id: str) -> list[Event]:
    """What completing the one unfinished step of a plan sends: the step's end, then the plan's."""
    return [
        PlanStepCompletedEvent(plan_id=plan_id, step_index=0, success=True),
        PlanCompletedEvent(plan_id=plan_id, success=True, summary="all 1 step completed"),
    ]


async def test_adding_the_first_steps_creates_a_plan(project: Project) -> None:
    reply = await todo(project, "add", task="Read the code\nWrite the fix\n\nRun the tests")
    assert reply == (
        "Added 3 steps, #1 to #3\n\nTodo list: 0 of 3 completed\n"
        "  #1 [pending] Read the code\n  #2 [pending] Write the fix\n  #3 [pending] Run the tests"
    )
    plan_id = plan_id_of(project)
    assert taken(project) == [
        PlanCreatedEvent(
            plan_id=plan_id,
            step_count=3,
            step_descriptions=["Read the code", "Write the fix", "Run the tests"],
        )
    ]


async def test_a_plan_runs_to_completion(project: Project) -> None:
    await todo(project, "add", task="one\ntwo")
    plan_id = plan_id_of(project)
    taken(project)
    await todo(project, "update", id="1", status="in_progress")
    assert taken(project) == [PlanStepStartedEvent(plan_id=plan_id, step_index=0, description="one")]
    await todo(project, "update", id=1, status="in_progress")
    assert taken(project) == []
    await todo(project, "complete", id="#1")
    assert taken(project) == [PlanStepCompletedEvent(plan_id=plan_id, step_index=0, success=True)]
    await todo(project, "update", id="2", status="in_progress")
    reply = await todo(project, "complete", id="2")
    assert reply.startswith("Completed #2: two\n\nTodo list: 2 of 2 completed")
    assert taken(project) == [
        PlanStepStartedEvent(plan_id=plan_id, step_index=1, description="two"),
        PlanStepCompletedEvent(plan_id=plan_id, step_index=1, success=True),
        PlanCompletedEvent(plan_id=plan_id, success=True, summary="all 2 steps completed"),
    ]
    assert (await todo(project, "complete", id="2")).startswith("#2 was already completed")
    assert taken(project) == []


async def test_more_steps_reannounce_the_same_plan(project: Project) -> None:
    await todo(project, "add", task="one")
    plan_id = plan_id_of(project)
    await todo(project, "add", task="two", priority="high")
    assert taken(project) == [
        PlanCreatedEvent(plan_id=plan_id, step_count=1, step_descriptions=["one"]),
        PlanCreatedEvent(plan_id=plan_id, step_count=2, step_descriptions=["one", "two"]),
    ]
    await todo(project, "update", id="2", task="two, reworded")
    assert taken(project) == [
        PlanCreatedEvent(plan_id=plan_id, step_count=2, step_descriptions=["one", "two, reworded"])
    ]
    await todo(project, "update", id="2", priority="low")
    assert taken(project) == []


async def test_blocked_and_removed_steps_end_unsuccessfully(project: Project) -> None:
    await todo(project, "add", task="a\nb\nc")
    plan_id = plan_id_of(project)
    taken(project)
    await todo(project, "update", id="3", status="blocked")
    assert taken(project) == [
        PlanStepCompletedEvent(plan_id=plan_id, step_index=2, success=False, summary="blocked")
    ]
    await todo(project, "remove", id="1")
    assert taken(project) == [
        PlanStepCompletedEvent(plan_id=plan_id, step_index=0, success=False, summary="removed"),
        PlanCreatedEvent(plan_id=plan_id, step_count=2, step_descriptions=["b", "c"]),
    ]
    await todo(project, "remove", id="3")  # already ended when it was blocked
    assert taken(project) == [PlanCreatedEvent(plan_id=plan_id, step_count=1, step_descriptions=["b"])]
    await todo(project, "complete", id="2")
    assert taken(project) == the_one_step_completed(plan_id)


async def test_removing_the_last_unfinished_step_completes_the_plan(project: Project) -> None:
    await todo(project, "add", task="done\nabandoned")
    plan_id = plan_id_of(project)
    await todo(project, "complete", id="1")
    taken(project)
    await todo(project, "remove", id="2")
    assert taken(project) == [
        PlanStepCompletedEvent(plan_id=plan_id, step_index=1, success=False, summary="removed"),
        PlanCreatedEvent(plan_id=plan_id, step_count=1, step_descriptions=["done"]),
        PlanCompletedEvent(plan_id=plan_id, success=True, summary="all 1 step completed"),
    ]


async def test_clearing_an_unfinished_plan_drops_it_and_the_next_add_starts_a_new_one(
    project: Project,
) -> None:
    await todo(project, "add", task="a\nb")
    first = plan_id_of(project)
    await todo(project, "complete", id="1")
    taken(project)
    reply = await todo(project, "clear")
    assert reply == "Cleared the todo list (2 steps, 1 of them unfinished)\n\nThe todo list is empty."
    assert taken(project) == [
        PlanStepCompletedEvent(plan_id=first, step_index=1, success=False, summary="removed"),
        PlanCompletedEvent(plan_id=first, success=False, summary="the plan was dropped"),
    ]
    assert (await todo(project, "add", task="fresh")).startswith("Added #1: fresh")
    second = plan_id_of(project)
    assert second != first
    assert taken(project) == [PlanCreatedEvent(plan_id=second, step_count=1, step_descriptions=["fresh"])]


async def test_clearing_a_finished_plan_sends_nothing_more(project: Project) -> None:
    await todo(project, "add", task="a")
    await todo(project, "complete", id="1")
    taken(project)
    await todo(project, "clear")
    assert taken(project) == []
    assert await todo(project, "clear") == "The todo list was already empty\n\nThe todo list is empty."


async def test_a_reopened_plan_completes_again(project: Project) -> None:
    await todo(project, "add", task="a")
    plan_id = plan_id_of(project)
    await todo(project, "complete", id="1")
    taken(project)
    await todo(project, "update", id="1", status="pending")
    assert taken(project) == []
    await todo(project, "complete", id="1")
    assert taken(project) == the_one_step_completed(plan_id)


async def test_the_plan_survives_between_calls(project: Project) -> None:
    await todo(project, "add", task="a\nb")
    plan_id = plan_id_of(project)
    taken(project)
    stored = json.loads((project.root / ".hive" / "todo.json").read_text())
    assert [item["task"] for item in stored["items"]] == ["a", "b"]
    await todo(project, "update", id="2", status="in_progress")
    assert taken(project) == [PlanStepStartedEvent(plan_id=plan_id, step_index=1, description="b")]


async def test_dependencies_hold_back_completion(project: Project) -> None:
    await todo(project, "add", task="build")
    await todo(project, "add", task="ship", dependencies="1")
    listing = await todo(project, "list")
    assert listing == "Todo list: 0 of 2 completed\n  #1 [pending] build\n  #2 [pending] ship (after #1)"
    with pytest.raises(ValueError, match="depends on #1, which is not completed"):
        await todo(project, "complete", id="2")
    await todo(project, "update", id="2", status="completed")
    assert "#2 [completed] ship" in await todo(project, "list")
    with pytest.raises(ValueError, match="do not exist: #9"):
        await todo(project, "add", task="x", dependencies=["1", "9"])
    with pytest.raises(ValueError, match="itself"):
        await todo(project, "update", id="1", dependencies="1")
    await todo(project, "remove", id="1")
    assert "(after" not in await todo(project, "list")


async def test_mistakes_are_explained(project: Project) -> None:
    with pytest.raises(ValueError, match="add needs task"):
        await todo(project, "add")
    with pytest.raises(ValueError, match="update needs id"):
        await todo(project, "update", status="completed")
    await todo(project, "add", task="a")
    with pytest.raises(LookupError, match=r"no step #7 \(steps: #1\)"):
        await todo(project, "complete", id="7")
    with pytest.raises(ValueError, match="at least one of"):
        await todo(project, "update", id="1")
    assert await todo(project, "list") == "Todo list: 0 of 1 completed\n  #1 [pending] a"


async def test_a_damaged_file_is_reported_not_replaced(project: Project) -> None:
    path = project.write(".hive/todo.json", "{not json")
    with pytest.raises(ValueError, match="fix the file or delete it"):
        await todo(project, "add", task="a")
    assert path.read_text() == "{not json"


async def test_an_empty_list(project: Project) -> None:
    assert await todo(project, "list") == "The todo list is empty."
    assert not (project.root / ".hive").exists()


async def test_concurrent_calls_are_serialised_and_their_events_ordered(project: Project) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            for n in range(8):
                tasks.start_soon(lambda n=n: todo(project, "add", task=f"step {n}"))
    events = taken(project)
    assert [event.step_count for event in events if isinstance(event, PlanCreatedEvent)] == list(range(1, 9))
    assert len({event.plan_id for event in events if isinstance(event, PlanCreatedEvent)}) == 1
    listing = await todo(project, "list")
    assert [line.split()[0] for line in listing.splitlines()[1:]] == [f"#{n}" for n in range(1, 9)]
