"""The tool pipeline's guards, each at and just below its threshold, through whole turns of the loop."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from core_harness import WAIT
from core_harness import assert_ended
from core_harness import assert_verified
from core_harness import kinds
from core_harness import of_type
from core_harness import refused

from hive_core import Agent
from hive_core import AgentSession
from hive_core import Message
from hive_core import Pipeline
from hive_core import Tool
from hive_core import ToolCallPart
from hive_core import ToolResultPart
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.pipeline import ArgumentParseFailureGuard
from hive_core.pipeline import Invocation
from hive_core.pipeline import RepeatedCallGuard
from hive_core.pipeline import RepeatedErrorGuard
from hive_core.pipeline import Timeout
from hive_core.pipeline import call_key
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tools import ToolContext
from hive_protocol import Event
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


def repeat(name: str, arguments: dict[str, Any] | str, times: int, prefix: str = "c") -> list[ScriptedRound]:
    """``times`` rounds, each calling ``name`` once with the same arguments (call ids unique in the turn)."""
    return [call((name, arguments, f"{prefix}{i + 1}")) for i in range(times)]


def allowed_session(client: ScriptedChatClient, *tools: Tool) -> AgentSession:
    """A session of an agent with ``tools``, every call allowed, on a clock that stands still."""
    return Agent(client, tools=list(tools), clock=fixed_clock, policy=ALLOW_ALL).session()


async def turn(session: AgentSession, content: str = "go") -> list[Event]:
    with anyio.fail_after(WAIT):
        return await collect_turn(session, content)


class Counter:
    def __init__(self) -> None:
        self.runs = 0


# -- repeated-call guard ------------------------------------------------------------------------------


def lookup_tool(counter: Counter) -> Any:
    @tool(read_only=True)
    def lookup(key: str) -> str:
        """Look a key up."""
        counter.runs += 1
        return f"value of {key}"

    return lookup


async def test_three_identical_successful_calls_all_run() -> None:
    counter = Counter()
    client = ScriptedChatClient([*repeat("lookup", {"key": "a"}, 3), reply("done")])
    session = allowed_session(client, lookup_tool(counter))

    events = await turn(session)

    assert counter.runs == 3
    assert [e.success for e in of_type(events, ToolEndEvent)] == [True, True, True]
    assert all(e.refusal is None for e in of_type(events, ToolEndEvent))
    assert_ended(events, "completed")


async def test_fourth_identical_call_is_refused_and_the_turn_goes_on() -> None:
    counter = Counter()
    client = ScriptedChatClient([*repeat("lookup", {"key": "a"}, 4), reply("using what I have")])
    session = allowed_session(client, lookup_tool(counter))

    events = await turn(session)

    assert counter.runs == 3
    fourth = of_type(events, ToolEndEvent)[3]
    assert fourth == refused(
        "lookup",
        (
            "'lookup' already ran 3 times in a row with these same arguments. Its result is in the conversation; "
            "do not call it again with these arguments: use that result, call a different tool, or change the "
            "arguments."
        ),
        "repeated_call",
        call_id="c4",
    )
    assert_ended(events, "completed")
    client.assert_consumed()


async def test_fifth_identical_call_ends_the_turn() -> None:
    counter = Counter()
    client = ScriptedChatClient(repeat("lookup", {"key": "a"}, 5))
    session = allowed_session(client, lookup_tool(counter))

    events = await turn(session)

    assert counter.runs == 3
    ends = of_type(events, ToolEndEvent)
    assert [e.refusal for e in ends] == [None, None, None, "repeated_call", "repeated_call"]
    assert ends[4].output == (
        "'lookup' was called again with the same arguments after being refused 1 time(s); "
        "the request was stopped as stuck repeating 'lookup'."
    )
    assert_ended(events, "tool_terminated")
    client.assert_consumed()  # no model round after the termination


async def test_changed_arguments_or_another_call_break_the_streak() -> None:
    counter = Counter()
    client = ScriptedChatClient(
        [
            *repeat("lookup", {"key": "a"}, 3, "a"),
            call(("lookup", {"key": "b"}, "b1")),
            *repeat("lookup", {"key": "a"}, 3, "x"),
            reply("done"),
        ]
    )
    session = allowed_session(client, lookup_tool(counter))

    events = await turn(session)

    assert counter.runs == 7
    assert all(e.success for e in of_type(events, ToolEndEvent))
    assert_verified(events, turns=1)


def test_argument_order_does_not_make_a_different_call() -> None:
    assert call_key("t", {"a": 1, "b": [1, 2]}) == call_key("t", {"b": [1, 2], "a": 1})
    assert call_key("t", {"a": 1}) != call_key("t", {"a": 2})
    assert call_key("t", {"a": 1}) != call_key("u", {"a": 1})


async def test_the_streak_spans_turns() -> None:
    counter = Counter()
    client = ScriptedChatClient(
        [
            *repeat("lookup", {"key": "a"}, 3, "t1-"),
            reply("first"),
            *repeat("lookup", {"key": "a"}, 1, "t2-"),
            reply("x"),
        ]
    )
    session = allowed_session(client, lookup_tool(counter))

    await turn(session, "one")
    events = await turn(session, "two")

    assert counter.runs == 3
    assert of_type(events, ToolEndEvent)[0].refusal == "repeated_call"
    assert_verified(events, turns=1)


async def test_a_failure_resets_the_repeat_streak() -> None:
    outcomes = iter(["ok", "fail", "ok", "ok", "ok"])
    runs: list[str] = []

    @tool
    def flaky(key: str) -> str:
        """Sometimes fails."""
        outcome = next(outcomes)
        runs.append(outcome)
        if outcome == "fail":
            raise OSError("busy")
        return "fine"

    client = ScriptedChatClient([*repeat("flaky", {"key": "a"}, 5), reply("done")])
    events = await turn(allowed_session(client, flaky))

    assert runs == ["ok", "fail", "ok", "ok", "ok"]
    assert [e.refusal for e in of_type(events, ToolEndEvent)] == [None] * 5
    assert_verified(events, turns=1)


# -- repeated-error guard -----------------------------------------------------------------------------


def failing_tool(counter: Counter, messages: list[str] | None = None) -> Any:
    texts = iter(messages) if messages is not None else None

    @tool
    def deploy(target: str) -> str:
        """Deploys, or fails trying."""
        counter.runs += 1
        raise RuntimeError(next(texts) if texts is not None else "disk full")

    return deploy


async def test_the_same_error_twice_still_runs_and_the_model_reads_it() -> None:
    counter = Counter()
    client = ScriptedChatClient([*repeat("deploy", {"target": "prod"}, 2), reply("giving up")])
    events = await turn(allowed_session(client, failing_tool(counter)))

    assert counter.runs == 2
    ends = of_type(events, ToolEndEvent)
    assert [(e.success, e.refusal, e.output) for e in ends] == [(False, None, "RuntimeError: disk full")] * 2
    assert_ended(events, "completed")


async def test_the_same_error_a_third_time_ends_the_turn() -> None:
    counter = Counter()
    client = ScriptedChatClient(repeat("deploy", {"target": "prod"}, 3))
    events = await turn(allowed_session(client, failing_tool(counter)))

    assert counter.runs == 3
    third = of_type(events, ToolEndEvent)[2]
    assert third == refused(
        "deploy",
        "'deploy' failed with the same error 3 times in a row (RuntimeError: disk full); the request was stopped.",
        "repeated_error",
        call_id="c3",
    )
    assert_ended(events, "tool_terminated")
    client.assert_consumed()


async def test_different_errors_do_not_add_up() -> None:
    counter = Counter()
    client = ScriptedChatClient([*repeat("deploy", {"target": "prod"}, 3), reply("hmm")])
    tools = [failing_tool(counter, ["disk full", "network down", "disk full"])]
    events = await turn(allowed_session(client, *tools))

    assert [e.refusal for e in of_type(events, ToolEndEvent)] == [None, None, None]
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)


async def test_same_error_with_other_arguments_still_counts() -> None:
    counter = Counter()
    client = ScriptedChatClient(
        [
            call(("deploy", {"target": "a"}, "c1")),
            call(("deploy", {"target": "b"}, "c2")),
            call(("deploy", {"target": "c"}, "c3")),
        ]
    )
    events = await turn(allowed_session(client, failing_tool(counter)))

    assert of_type(events, ToolEndEvent)[2].refusal == "repeated_error"
    assert events[-1] == TurnEndEvent(stop_reason="tool_terminated", duration_ms=0)


# -- argument parse failure and resilient arguments ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ('{"key": ', "The arguments are not valid JSON"),
        ("[1, 2]", "The arguments must be a JSON object, not list"),
    ],
)
async def test_unparseable_arguments_are_refused_and_the_tool_never_runs(raw: str, reason: str) -> None:
    counter = Counter()
    client = ScriptedChatClient([call(("lookup", raw)), reply("retrying")])
    events = await turn(allowed_session(client, lookup_tool(counter)))

    assert counter.runs == 0
    # tool_start carries the argument text as the model wrote it.
    assert of_type(events, ToolStartEvent) == [ToolStartEvent(tool="lookup", input=raw, call_id="call_1")]
    end = of_type(events, ToolEndEvent)[0]
    assert end.success is False
    assert end.refusal == "invalid_arguments"
    assert end.output is not None
    assert end.output.startswith(reason)
    assert end.output.endswith(
        ". Re-issue the call with complete arguments that are valid JSON matching the tool's schema."
    )
    assert_verified(events, turns=1)


async def test_empty_argument_text_counts_as_an_empty_object() -> None:
    @tool
    def ping() -> str:
        """Pings."""
        return "pong"

    client = ScriptedChatClient([call(("ping", "")), reply("ok")])
    events = await turn(allowed_session(client, ping))
    assert of_type(events, ToolEndEvent)[0].output == "pong"


async def test_a_missing_argument_gets_a_recovery_directive() -> None:
    counter = Counter()
    client = ScriptedChatClient([call(("lookup", {})), reply("which key?")])
    events = await turn(allowed_session(client, lookup_tool(counter)))

    assert counter.runs == 0
    end = of_type(events, ToolEndEvent)[0]
    assert end.success is True  # a directive is a result the model reads, not a refusal
    assert end.refusal is None
    assert end.output == (
        "The call to 'lookup' is missing the required parameter 'key'. Do this:\n"
        "1. Look for the value of 'key' in the user's message and the conversation.\n"
        "2. If you find it, call 'lookup' again with 'key' set to it.\n"
        "3. If it is not there, ask the user for it, or use a different tool.\n"
        "Do not repeat the call with empty or missing arguments."
    )
    assert_verified(events, turns=1)


async def test_a_model_looping_on_empty_arguments_is_stopped_after_three_directives() -> None:
    counter = Counter()
    client = ScriptedChatClient(repeat("lookup", {}, 5))
    events = await turn(allowed_session(client, lookup_tool(counter)))

    assert counter.runs == 0
    assert [e.refusal for e in of_type(events, ToolEndEvent)] == [
        None,
        None,
        None,
        "repeated_call",
        "repeated_call",
    ]
    assert events[-1] == TurnEndEvent(stop_reason="tool_terminated", duration_ms=0)


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [({"key": 5}, "Expected `str`, got `int`"), ({"key": "a", "extra": 1}, "unknown field `extra`")],
)
async def test_arguments_that_do_not_fit_get_a_directive(arguments: dict[str, Any], detail: str) -> None:
    counter = Counter()
    client = ScriptedChatClient([call(("lookup", arguments)), reply("ok")])
    events = await turn(allowed_session(client, lookup_tool(counter)))

    assert counter.runs == 0
    output = of_type(events, ToolEndEvent)[0].output
    assert output is not None
    assert output.startswith("'lookup' rejected the call because the arguments do not fit its parameters: ")
    assert detail in output


# -- timeout --------------------------------------------------------------------------------------------


def slow_tool(started: list[str], *, timeout: float | None = None) -> Any:
    never = anyio.Event()

    @tool(timeout=timeout)
    async def crawl(site: str) -> str:
        """Never finishes."""
        started.append(site)
        await never.wait()
        return "unreachable"

    return crawl


async def test_a_call_over_its_timeout_is_stopped() -> None:
    started: list[str] = []
    client = ScriptedChatClient([call(("crawl", {"site": "x"})), reply("too slow")])
    events = await turn(allowed_session(client, slow_tool(started, timeout=0.05)))

    assert started == ["x"]
    assert of_type(events, ToolEndEvent) == [
        refused("crawl", "'crawl' timed out after 0.05 s", "timed_out", call_id="call_1")
    ]
    assert_ended(events, "completed")


async def test_the_agent_timeout_applies_to_tools_without_their_own() -> None:
    started: list[str] = []
    client = ScriptedChatClient([call(("crawl", {"site": "x"})), reply("too slow")])
    agent = Agent(client, tools=[slow_tool(started)], tool_timeout=0.05, clock=fixed_clock, policy=ALLOW_ALL)
    events = await turn(agent.session())

    assert of_type(events, ToolEndEvent)[0].refusal == "timed_out"


async def test_a_call_within_its_timeout_finishes() -> None:
    @tool(timeout=WAIT)
    async def quick() -> str:
        """Quick."""
        return "done"

    client = ScriptedChatClient([call(("quick", {})), reply("ok")])
    events = await turn(allowed_session(client, quick))
    assert of_type(events, ToolEndEvent)[0] == ToolEndEvent(
        tool="quick", success=True, output="done", call_id="call_1"
    )


async def test_the_same_slow_call_three_times_ends_the_turn() -> None:
    started: list[str] = []
    client = ScriptedChatClient(repeat("crawl", {"site": "x"}, 3))
    events = await turn(allowed_session(client, slow_tool(started, timeout=0.02)))

    assert [e.refusal for e in of_type(events, ToolEndEvent)] == ["timed_out", "timed_out", "repeated_error"]
    assert_ended(events, "tool_terminated")


# -- the pipeline itself ------------------------------------------------------------------------------


async def test_custom_middlewares_run_in_order_outermost_first() -> None:
    order: list[str] = []

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, invocation: Invocation, call_next: Any) -> Any:
            order.append(f"{self.name}>")
            outcome = await call_next(invocation)
            order.append(f"<{self.name}")
            return outcome

    @tool
    def noop() -> str:
        """Nothing."""
        order.append("tool")
        return ""

    client = ScriptedChatClient([call(("noop", {})), reply("ok")])
    agent = Agent(client, tools=[noop], middlewares=[Mark("outer"), Mark("inner")], clock=fixed_clock)
    events = await turn(agent.session())

    assert order == ["outer>", "inner>", "tool", "<inner", "<outer"]
    assert kinds(events) == ["tool_start", "tool_end", "text_delta", "turn_end"]


def test_default_pipeline_order() -> None:
    agent = Agent(ScriptedChatClient([]), policy=ALLOW_ALL)
    assert [type(m).__name__ for m in agent.pipeline.middlewares] == [
        "ArgumentParseFailureGuard",
        "RepeatedCallGuard",
        "RepeatedErrorGuard",
        "ApprovalGate",
        "ResilientArguments",
        "Timeout",
    ]


async def test_guards_work_on_a_bare_pipeline() -> None:
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    def invocation(call_id: str, history: list[Message]) -> Invocation:
        part = ToolCallPart(call_id, "echo", '{"text":"a"}', {"text": "a"})
        context = ToolContext(call_id, "echo", Path(), lambda event: None, tuple(history))
        return Invocation(part, echo, {"text": "a"}, context)

    pipeline = Pipeline(
        [ArgumentParseFailureGuard(), RepeatedCallGuard(max_repeats=1), RepeatedErrorGuard(), Timeout()]
    )
    history: list[Message] = []
    with anyio.fail_after(WAIT):
        first = await pipeline.run(invocation("c1", history))
        history += [
            Message("assistant", [ToolCallPart("c1", "echo", '{"text":"a"}', {"text": "a"})]),
            Message("tool", [ToolResultPart("c1", "echo", first.content)]),
        ]
        second = await pipeline.run(invocation("c2", history))

    assert (first.content, first.refusal) == ("a", None)
    assert second.refusal == "repeated_call"
    assert not second.terminate


async def test_a_sync_tool_over_its_timeout_is_abandoned_not_awaited() -> None:
    release = threading.Event()
    entered = threading.Event()

    @tool(timeout=0.05)
    def blocking() -> str:
        """Blocks its worker thread until released."""
        entered.set()
        release.wait(WAIT)
        return "late"

    client = ScriptedChatClient([call(("blocking", {})), reply("gave up")])
    try:
        with anyio.fail_after(WAIT):
            events = await turn(allowed_session(client, blocking))
    finally:
        release.set()
    assert entered.is_set()
    assert of_type(events, ToolEndEvent)[0].refusal == "timed_out"
    assert_verified(events, turns=1)


async def test_default_call_ids_stay_unique_over_several_tool_rounds() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    client = ScriptedChatClient([call(("ping", {})), call(("ping", {}), ("ping", {"x": 1})), reply("done")])
    events = await turn(allowed_session(client, ping))
    assert [e.call_id for e in of_type(events, ToolStartEvent)] == ["call_1", "call_2", "call_3"]
    assert_verified(events, turns=1)
