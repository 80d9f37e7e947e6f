"""Declaring tools from typed functions: schema, invocation, context injection, validation."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any
from typing import Literal

import anyio
import anyio.lowlevel
import pytest
from core_harness import WAIT
from core_harness import assert_verified
from core_harness import of_type

from hive_core import Agent
from hive_core import Tool
from hive_core import ToolArgumentError
from hive_core import ToolContext
from hive_core import ToolOutcome
from hive_core import ToolSpec
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import PlanCreatedEvent
from hive_protocol import ToolEndEvent

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


def context(emit: Any = None, call_id: str = "c1", name: str = "t") -> ToolContext:
    return ToolContext(call_id, name, Path("/work"), emit or (lambda event: None))


@tool
def search(
    query: str, limit: int = 10, tags: list[str] | None = None, mode: Literal["fast", "deep"] = "fast"
) -> str:
    """Search the notes for a query.

    Matches are ranked by relevance.

    Args:
        query: What to look for.
        limit: How many results at most,
            counted after ranking.
        tags (list[str]): Only notes with these tags.

    Returns:
        The matches, one per line.
    """
    return f"{query}:{limit}:{tags}:{mode}"


def test_schema_comes_from_the_signature_and_the_docstring() -> None:
    assert search.name == "search"
    assert search.description == "Search the notes for a query. Matches are ranked by relevance."
    assert search.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "default": 10,
                "description": "How many results at most, counted after ranking.",
            },
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
                "description": "Only notes with these tags.",
            },
            "mode": {"enum": ["deep", "fast"], "default": "fast"},
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert search.spec == ToolSpec("search", search.description, search.parameters)
    assert not search.read_only
    assert search.timeout is None


def test_decorator_options() -> None:
    @tool(name="find_things", description="Find.", read_only=True, timeout=5.0)
    def finder(pattern: str) -> str:
        """Ignored summary."""
        return pattern

    assert isinstance(finder, Tool)
    assert (finder.name, finder.description, finder.read_only, finder.timeout) == (
        "find_things",
        "Find.",
        True,
        5.0,
    )
    assert repr(finder) == "Tool('find_things', read_only=True)"


def test_a_tool_without_parameters_or_docstring() -> None:
    @tool
    def now() -> str:
        return "today"

    assert now.description == ""
    assert now.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_star_arguments_cannot_be_described() -> None:
    def spread(*items: str) -> str:
        return ""

    def named(**items: str) -> str:
        return ""

    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):
        tool(spread)
    with pytest.raises(TypeError, match=r"\*args and \*\*kwargs"):
        tool(named)


async def test_sync_tool_runs_in_a_worker_thread() -> None:
    threads: list[int] = []

    @tool
    def where() -> str:
        """Report the thread."""
        threads.append(threading.get_ident())
        return "here"

    with anyio.fail_after(WAIT):
        outcome = await where.invoke({}, context())
    assert outcome == ToolOutcome(content="here")
    assert threads != [threading.get_ident()]


async def test_async_tool_runs_on_the_event_loop() -> None:
    threads: list[int] = []

    @tool
    async def where() -> str:
        """Report the thread."""
        threads.append(threading.get_ident())
        await anyio.lowlevel.checkpoint()
        return "here"

    with anyio.fail_after(WAIT):
        outcome = await where.invoke({}, context())
    assert outcome.content == "here"
    assert threads == [threading.get_ident()]


@pytest.mark.parametrize(
    ("result", "content"),
    [
        ("text", "text"),
        (None, ""),
        ({"b": 1, "a": [1, 2]}, '{"b":1,"a":[1,2]}'),
        (42, "42"),
        ([True], "[true]"),
    ],
)
async def test_results_become_text(result: object, content: str) -> None:
    @tool
    def give() -> Any:
        """Give the result."""
        return result

    with anyio.fail_after(WAIT):
        assert (await give.invoke({}, context())).content == content


async def test_arguments_are_converted_to_the_declared_types() -> None:
    with anyio.fail_after(WAIT):
        outcome = await search.invoke({"query": "q", "tags": ["x"], "mode": "deep"}, context())
    assert outcome.content == "q:10:['x']:deep"


async def test_context_is_injected_and_not_shown_to_the_model() -> None:
    seen: list[ToolContext] = []

    @tool
    async def plan(ctx: ToolContext, title: str) -> str:
        """Make a plan."""
        seen.append(ctx)
        ctx.emit(PlanCreatedEvent(plan_id=ctx.call_id, step_count=1, step_descriptions=[title]))
        return "planned"

    assert list(plan.parameters["properties"]) == ["title"]

    client = ScriptedChatClient([call(("plan", {"title": "ship it"}, "p1")), reply("ok")])
    agent = Agent(client, tools=[plan], working_dir=Path("/project"), clock=fixed_clock, policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        events: list[Event] = await collect_turn(agent.session(), "plan")

    assert len(seen) == 1
    ctx = seen[0]
    assert (ctx.call_id, ctx.tool_name, ctx.working_dir) == ("p1", "plan", Path("/project"))
    assert [m.role for m in ctx.conversation] == ["user", "assistant"]
    assert ctx.conversation[-1].tool_calls[0].id == "p1"
    assert of_type(events, PlanCreatedEvent) == [
        PlanCreatedEvent(plan_id="p1", step_count=1, step_descriptions=["ship it"])
    ]
    assert_verified(events, turns=1)


async def test_a_tool_outcome_is_passed_through_with_its_stats() -> None:
    @tool
    def walk(root: str) -> ToolOutcome:
        """Walk a folder."""
        return ToolOutcome(content="3 matches", stats={"files_visited": 40, "stopped": "budget"})

    client = ScriptedChatClient([call(("walk", {"root": "."})), reply("ok")])
    with anyio.fail_after(WAIT):
        events = await collect_turn(
            Agent(client, tools=[walk], clock=fixed_clock, policy=ALLOW_ALL).session(), "walk"
        )

    assert of_type(events, ToolEndEvent)[0] == ToolEndEvent(
        tool="walk",
        success=True,
        output="3 matches",
        call_id="call_1",
        stats={"files_visited": 40, "stopped": "budget"},
    )
    # The stats are for the client only: the model reads the content.
    assert client.requests[1][0][-1].tool_results[0].content == "3 matches"
    assert_verified(events, turns=1)


@pytest.mark.parametrize(
    ("arguments", "missing", "detail"),
    [
        ({}, "query", "Object missing required field `query`"),
        ({"query": 1}, None, "Expected `str`, got `int` - at `$.query`"),
        ({"query": "q", "limit": "ten"}, None, "Expected `int`, got `str` - at `$.limit`"),
        ({"query": "q", "mode": "slow"}, None, "Invalid enum value 'slow' - at `$.mode`"),
        ({"query": "q", "color": "red"}, None, "Object contains unknown field `color`"),
    ],
)
async def test_arguments_that_do_not_fit_raise_a_tool_argument_error(
    arguments: dict[str, Any], missing: str | None, detail: str
) -> None:
    with anyio.fail_after(WAIT), pytest.raises(ToolArgumentError) as raised:
        await search.invoke(arguments, context())
    assert raised.value.missing == missing
    assert str(raised.value) == detail


async def test_the_function_does_not_run_on_invalid_arguments() -> None:
    ran: list[int] = []

    @tool
    def count(n: int) -> str:
        """Count."""
        ran.append(n)
        return ""

    with anyio.fail_after(WAIT), pytest.raises(ToolArgumentError):
        await count.invoke({"n": "1"}, context())
    assert ran == []
