"""Turn scenarios of the agent loop, run through the in-process runner.

Each scenario is checked twice: its events against what the scenario must produce, and the whole stream
through ``hive_protocol.verify`` (as structs and as canonical wire lines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from core_harness import WAIT
from core_harness import Rules
from core_harness import assert_ended
from core_harness import assert_verified
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from core_harness import recording_tool
from core_harness import refused

from hive_core import Agent
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import Message
from hive_core import TextPart
from hive_core import TextUpdate
from hive_core import ThinkingPart
from hive_core import ToolCallPart
from hive_core import ToolResultPart
from hive_core import UsageUpdate
from hive_core import collect_turn
from hive_core import open_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.approvals import Verdict
from hive_core.chat import FinishReason
from hive_core.chat import RequiredTool
from hive_core.testing import Block
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import ScriptError
from hive_core.testing import call
from hive_core.testing import fail
from hive_core.testing import reply
from hive_core.tool_round import TOOL_OUTPUT_EVENT_CAP
from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(read_only=True)
def read_note(name: str) -> str:
    """Read a note."""
    return f"contents of {name}"


@tool
def write_note(name: str, text: str) -> str:
    """Write a note."""
    return f"wrote {name}"


async def run(agent: Agent, content: str | UserMessageRequest) -> list[Event]:
    session = agent.session()
    with anyio.fail_after(WAIT):
        return await collect_turn(session, content)


async def test_plain_text() -> None:
    client = ScriptedChatClient([reply("Hel", "lo", usage=(10, 2))])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()

    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "hi")

    assert events == [
        TextDeltaEvent(content="Hel"),
        TextDeltaEvent(content="lo"),
        TurnEndEvent(
            input_tokens=10, output_tokens=2, total_tokens=12, stop_reason="completed", duration_ms=0
        ),
    ]
    assert_verified(events, turns=1)
    assert session.conversation == [
        Message("user", [TextPart("hi")]),
        Message("assistant", [TextPart("Hello")]),
    ]
    client.assert_consumed()


async def test_without_usage_the_turn_end_carries_no_token_counts() -> None:
    client = ScriptedChatClient([reply("ok")])
    events = await run(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), "hi")

    assert_ended(events, "completed")


async def test_duration_comes_from_the_clock() -> None:
    ticks = iter([10.0, 12.5])
    client = ScriptedChatClient([reply("ok")])
    events = await run(Agent(client, clock=lambda: next(ticks), policy=ALLOW_ALL), "hi")

    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=2500)


async def test_thinking_is_streamed_and_kept_with_its_signature() -> None:
    client = ScriptedChatClient(
        [reply("42", thinking=["let me", " think"], signature="sig-1"), reply("again")]
    )
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()

    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "question")
        await collect_turn(session, "next")

    assert events == [
        ThinkingDeltaEvent(content="let me"),
        ThinkingDeltaEvent(content=" think"),
        TextDeltaEvent(content="42"),
        TurnEndEvent(stop_reason="completed", duration_ms=0),
    ]
    assert_verified(events, turns=1)
    expected = Message("assistant", [ThinkingPart("let me think", "sig-1", "scripted"), TextPart("42")])
    assert session.conversation[1] == expected
    # The signature goes back to the model on the next request, unchanged.
    second_request = client.requests[1][0]
    assert second_request[1] == expected


async def test_one_tool_call_then_text() -> None:
    client = ScriptedChatClient([call(("add", {"a": 2, "b": 3}), usage=(7, 3)), reply("5", usage=(20, 1))])
    session = Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL).session()

    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "2+3?")

    assert events == [
        ToolStartEvent(tool="add", input={"a": 2, "b": 3}, call_id="call_1"),
        ToolEndEvent(tool="add", success=True, output="5", call_id="call_1"),
        TextDeltaEvent(content="5"),
        TurnEndEvent(
            input_tokens=27, output_tokens=4, total_tokens=31, stop_reason="completed", duration_ms=0
        ),
    ]
    assert_verified(events, turns=1)
    # The model's second request carries the call and its result.
    sent = client.requests[1][0]
    assert sent[-2].tool_calls == [ToolCallPart("call_1", "add", '{"a":2,"b":3}', {"a": 2, "b": 3})]
    assert sent[-1] == Message("tool", [ToolResultPart("call_1", "add", "5")])
    # Both rounds were offered the tool.
    assert [spec.name for spec in client.requests[0][1].tools] == ["add"]


async def test_arguments_streamed_in_pieces_are_joined() -> None:
    client = ScriptedChatClient([call(("add", {"a": 10, "b": 32}), split=3), reply("42")])
    events = await run(Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL), "sum")

    assert of_type(events, ToolStartEvent) == [
        ToolStartEvent(tool="add", input={"a": 10, "b": 32}, call_id="call_1")
    ]
    assert of_type(events, ToolEndEvent)[0].output == "42"
    assert_verified(events, turns=1)


async def test_parallel_calls_run_concurrently_and_are_recorded_in_call_order() -> None:
    second_done = anyio.Event()
    order: list[str] = []

    @tool
    async def first() -> str:
        """Waits for the second call: only finishes when both run at the same time."""
        await second_done.wait()
        order.append("first")
        return "one"

    @tool
    async def second() -> str:
        """Finishes at once."""
        order.append("second")
        second_done.set()
        return "two"

    client = ScriptedChatClient([call(("first", {}, "c1"), ("second", {}, "c2")), reply("both")])
    session = Agent(client, tools=[first, second], clock=fixed_clock, policy=ALLOW_ALL).session()

    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "go")

    assert kinds(events) == ["tool_start", "tool_start", "tool_end", "tool_end", "text_delta", "turn_end"]
    assert [e.call_id for e in of_type(events, ToolStartEvent)] == ["c1", "c2"]
    # tool_end comes as each call finishes: the second one first.
    assert [(e.call_id, e.output) for e in of_type(events, ToolEndEvent)] == [("c2", "two"), ("c1", "one")]
    assert order == ["second", "first"]
    assert_verified(events, turns=1)
    results = session.conversation[-2]
    assert [(r.call_id, r.content) for r in results.tool_results] == [("c1", "one"), ("c2", "two")]


async def test_a_tool_that_raises_is_reported_and_the_model_reads_the_failure() -> None:
    @tool
    def explode(path: str) -> str:
        """Always fails."""
        raise ValueError(f"cannot open {path}")

    client = ScriptedChatClient([call(("explode", {"path": "a.txt"})), reply("sorry")])
    session = Agent(client, tools=[explode], clock=fixed_clock, policy=ALLOW_ALL).session()

    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "open it")

    assert events[:2] == [
        ToolStartEvent(tool="explode", input={"path": "a.txt"}, call_id="call_1"),
        ToolEndEvent(tool="explode", success=False, output="ValueError: cannot open a.txt", call_id="call_1"),
    ]
    assert_ended(events, "completed")
    result = client.requests[1][0][-1].tool_results[0]
    assert result.is_error
    assert result.content == "ValueError: cannot open a.txt"
    assert result.error == "ValueError: cannot open a.txt"


async def test_a_call_to_an_unknown_tool_is_answered_without_running_anything() -> None:
    client = ScriptedChatClient([call(("nope", {"x": 1})), reply("ok")])
    events = await run(Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL), "hi")

    end = of_type(events, ToolEndEvent)[0]
    assert end.success is False
    assert end.refusal is None
    assert end.output == "There is no tool named 'nope' this turn. Available tools: add."
    assert_verified(events, turns=1)


async def test_a_tool_not_offered_this_turn_is_unknown_to_the_model() -> None:
    client = ScriptedChatClient([call(("write_note", {"name": "a", "text": "b"})), reply("ok")])
    agent = Agent(client, tools=[read_note, write_note], clock=fixed_clock, policy=ALLOW_ALL)
    events = await run(agent, message("hi", tool_names=["read_note"]))

    end = of_type(events, ToolEndEvent)[0]
    assert end.success is False
    assert end.output == "There is no tool named 'write_note' this turn. Available tools: read_note."


async def test_long_tool_output_is_capped_on_the_wire_but_whole_for_the_model() -> None:
    @tool
    def big() -> str:
        """A lot of text."""
        return "x" * (TOOL_OUTPUT_EVENT_CAP + 100)

    client = ScriptedChatClient([call(("big", {})), reply("done")])
    events = await run(Agent(client, tools=[big], clock=fixed_clock, policy=ALLOW_ALL), "go")

    output = of_type(events, ToolEndEvent)[0].output
    assert output == "x" * TOOL_OUTPUT_EVENT_CAP + "\n[... 100 more characters]"
    assert client.requests[1][0][-1].tool_results[0].content == "x" * (TOOL_OUTPUT_EVENT_CAP + 100)
    assert_verified(events, turns=1)


@pytest.mark.parametrize(
    ("finish", "end"),
    [
        ("stop", TurnEndEvent(stop_reason="completed", duration_ms=0)),
        ("length", TurnEndEvent(stop_reason="output_limit", duration_ms=0)),
        ("content_filter", TurnEndEvent(stop_reason="content_filter", duration_ms=0)),
    ],
)
async def test_finish_reason_sets_the_stop_reason(finish: FinishReason, end: TurnEndEvent) -> None:
    client = ScriptedChatClient([reply("partial", finish=finish)])
    events = await run(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), "hi")

    assert events[-1] == end
    assert_verified(events, turns=1)


async def test_step_limit_makes_a_last_request_without_tools() -> None:
    client = ScriptedChatClient(
        [
            call(("add", {"a": 1, "b": 1}, "c1")),
            call(("add", {"a": 2, "b": 2}, "c2")),
            reply("I ran out of steps"),
        ]
    )
    agent = Agent(client, tools=[add], max_iterations=2, clock=fixed_clock, policy=ALLOW_ALL)
    events = await run(agent, "loop")

    assert kinds(events) == ["tool_start", "tool_end", "tool_start", "tool_end", "text_delta", "turn_end"]
    assert events[-1] == TurnEndEvent(stop_reason="step_limit", duration_ms=0)
    last_options = client.requests[2][1]
    assert last_options.tools == []
    assert last_options.tool_choice == "none"
    assert_verified(events, turns=1)


async def test_calls_made_in_the_last_round_anyway_are_not_run() -> None:
    count, ran = recording_tool("count", "ok")
    client = ScriptedChatClient([call(("count", {"path": "a"}, "c1")), call(("count", {"path": "b"}, "c2"))])
    session = Agent(client, tools=[count], max_iterations=1, clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "go")

    assert ran == ["a"]
    assert kinds(events) == ["tool_start", "tool_end", "turn_end"]
    assert_ended(events, "step_limit")
    # Every call in the history has its result (the conversation stays well formed).
    last = session.conversation[-1]
    assert last.role == "tool"
    assert last.tool_results[0].content == "Not run: the turn reached its limit of tool rounds."


async def test_a_model_failure_is_an_error_then_a_bare_turn_end() -> None:
    client = ScriptedChatClient([fail(ChatError("slow down", code="rate_limit"), "par", "tial")])
    events = await run(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), "hi")

    assert events == [
        TextDeltaEvent(content="par"),
        TextDeltaEvent(content="tial"),
        ErrorEvent(message="slow down", code="rate_limit"),
        TurnEndEvent(),
    ]
    assert_verified(events, turns=1)


async def test_an_unexpected_model_request_fails_the_turn_loudly() -> None:
    client = ScriptedChatClient([call(("add", {"a": 1, "b": 1}))])
    events = await run(Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL), "hi")

    error = of_type(events, ErrorEvent)[0]
    assert error.code == "internal"
    assert "was not expected" in error.message
    assert kinds(events)[-2:] == ["error", "turn_end"]
    assert_verified(events, turns=1)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (
            {"tool_names": ["add", "nope", "zap"]},
            "Turn options name tool(s) that are not registered on this agent: nope, zap. "
            "Registered tools: add, read_note.",
        ),
        ({"tool_mode": "sometimes"}, "Unknown tool mode 'sometimes'"),
        ({"tool_mode": "require:nope"}, "Turn options require tool 'nope'"),
        ({"reasoning_effort": "maximal"}, "Unknown reasoning effort 'maximal'"),
        ({"temperature": -1.0}, "temperature must be a finite number"),
        ({"max_output_tokens": 0}, "max_output_tokens must be at least 1"),
    ],
)
async def test_invalid_turn_options_are_rejected_before_the_model_is_asked(
    options: dict[str, Any], expected: str
) -> None:
    client = ScriptedChatClient([])
    session = Agent(client, tools=[add, read_note], clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        events = await collect_turn(session, message("hi", **options))

    assert kinds(events) == ["error", "turn_end"]
    error = events[0]
    assert isinstance(error, ErrorEvent)
    assert error.code == "request_rejected"
    assert expected in error.message
    assert events[1] == TurnEndEvent()
    assert_verified(events, turns=1)
    assert client.requests == []
    assert session.conversation == []


async def test_turn_options_override_the_agent_for_one_turn_only() -> None:
    client = ScriptedChatClient([reply("a"), reply("b")])
    agent = Agent(
        client,
        tools=[add, read_note],
        instructions="Be brief.",
        temperature=0.7,
        max_output_tokens=4096,
        reasoning_effort="low",
        clock=fixed_clock,
        policy=ALLOW_ALL,
    )
    session = agent.session()
    request = message(
        "one",
        model="m-1",
        tool_names=["read_note", "read_note"],
        temperature=0.0,
        max_output_tokens=256,
        reasoning_effort="high",
        instructions="Answer in French.",
    )
    with anyio.fail_after(WAIT):
        await collect_turn(session, request)
        await collect_turn(session, "two")

    first, second = client.requests[0][1], client.requests[1][1]
    assert first == ChatOptions(
        tools=[read_note.spec],
        tool_choice="auto",
        temperature=0.0,
        max_output_tokens=256,
        reasoning_effort="high",
        instructions="Be brief.\n\nAnswer in French.",
        model="m-1",
    )
    assert second == ChatOptions(
        tools=[add.spec, read_note.spec],
        tool_choice="auto",
        temperature=0.7,
        max_output_tokens=4096,
        reasoning_effort="low",
        instructions="Be brief.",
    )
    # Turn instructions stay out of the history.
    assert all("French" not in m.text for m in session.conversation)


async def test_tool_mode_none_offers_no_tools() -> None:
    client = ScriptedChatClient([reply("no tools")])
    await run(
        Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL),
        message("hi", tool_mode="none"),
    )
    assert client.requests[0][1].tools == []
    assert client.requests[0][1].tool_choice == "none"


async def test_require_a_tool_forces_only_the_first_round() -> None:
    client = ScriptedChatClient([call(("read_note", {"name": "n"})), reply("done")])
    events = await run(
        Agent(client, tools=[add, read_note], clock=fixed_clock, policy=ALLOW_ALL),
        message("hi", tool_mode="require:read_note"),
    )
    assert client.requests[0][1].tool_choice == RequiredTool("read_note")
    assert client.requests[1][1].tool_choice == "auto"
    assert_verified(events, turns=1)


async def test_require_any_maps_to_required() -> None:
    client = ScriptedChatClient([reply("x")])
    await run(
        Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL),
        message("hi", tool_mode="require_any"),
    )
    assert client.requests[0][1].tool_choice == "required"


async def test_planning_mode_refuses_a_write_tool_and_runs_a_read_only_one() -> None:
    save, written = recording_tool("save", "saved")
    client = ScriptedChatClient(
        [call(("save", {"path": "a"}, "w1"), ("read_note", {"name": "a"}, "r1")), reply("planned")]
    )
    agent = Agent(client, tools=[save, read_note], planning=True, clock=fixed_clock, policy=ALLOW_ALL)
    events = await run(agent, "make a plan")

    ends = {e.call_id: e for e in of_type(events, ToolEndEvent)}
    assert ends["w1"] == refused(
        "save",
        "Permission denied: planning mode runs only read-only tools; 'save' may change things.",
        "denied",
        call_id="w1",
    )
    assert ends["r1"] == ToolEndEvent(tool="read_note", success=True, output="contents of a", call_id="r1")
    assert written == []
    assert_ended(events, "completed")


async def test_planning_can_be_switched_per_session() -> None:
    client = ScriptedChatClient([call(("write_note", {"name": "a", "text": "t"})), reply("ok")])
    session = Agent(client, tools=[write_note], clock=fixed_clock, policy=ALLOW_ALL).session()
    session.planning = True
    with anyio.fail_after(WAIT):
        events = await collect_turn(session, "go")
    assert of_type(events, ToolEndEvent)[0].refusal == "denied"


async def test_cached_input_tokens_and_usage_sum_over_rounds() -> None:
    client = ScriptedChatClient(
        [
            call(("add", {"a": 1, "b": 2}), usage=(100, 10)),
            ScriptedRound(
                [TextUpdate("3"), UsageUpdate(50, 5, cached_input_tokens=40), FinishUpdate("stop")]
            ),
        ]
    )
    events = await run(Agent(client, tools=[add], clock=fixed_clock, policy=ALLOW_ALL), "sum")

    assert events[-1] == TurnEndEvent(
        input_tokens=150,
        output_tokens=15,
        total_tokens=165,
        cached_input_tokens=40,
        stop_reason="completed",
        duration_ms=0,
    )
    assert_verified(events, turns=1)


async def test_history_continues_across_turns() -> None:
    seen: list[list[str]] = []

    def record(messages: Sequence[Message], options: ChatOptions) -> None:
        seen.append([m.text for m in messages])

    client = ScriptedChatClient(
        [ScriptedRound(reply("A").updates, check=record), ScriptedRound(reply("B").updates, check=record)]
    )
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session(
        [Message("system", [TextPart("sys")])]
    )
    with anyio.fail_after(WAIT):
        await collect_turn(session, "one")
        await collect_turn(session, "two")

    assert seen == [["sys", "one"], ["sys", "one", "A", "two"]]


async def test_open_turn_streams_events_and_leaving_early_cancels_the_turn() -> None:
    client = ScriptedChatClient([ScriptedRound([TextUpdate("first"), Block()])])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()

    received: list[object] = []
    with anyio.fail_after(WAIT):
        async with open_turn(session, "hi") as events:
            async for event in events:
                received.append(event)
                break

    assert received == [TextDeltaEvent(content="first")]
    # The partial answer the user saw is kept.
    assert session.conversation[-1] == Message("assistant", [TextPart("first")])


async def test_open_turn_yields_the_whole_turn() -> None:
    client = ScriptedChatClient([reply("a", "b")])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        async with open_turn(session, "hi") as stream:
            events = [event async for event in stream]
    assert kinds(events) == ["text_delta", "text_delta", "turn_end"]
    assert_verified(events, turns=1)


def test_agent_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError, match="max_iterations"):
        Agent(ScriptedChatClient([]), max_iterations=0, policy=ALLOW_ALL)
    with pytest.raises(ValueError, match="two tools are named 'add'"):
        Agent(ScriptedChatClient([]), tools=[add, add], policy=ALLOW_ALL)


def test_scripted_client_reports_unplayed_rounds() -> None:
    client = ScriptedChatClient([reply("a")])
    with pytest.raises(ScriptError, match="1 scripted round"):
        client.assert_consumed()


# -- consecutive tool failures ---------------------------------------------------------------------------------


@tool
def explode(path: str) -> str:
    """Always fails."""
    raise ValueError(f"cannot open {path}")


async def test_failed_calls_in_a_row_are_counted_in_call_order_across_rounds() -> None:
    client = ScriptedChatClient(
        [
            call(
                ("explode", {"path": "a"}, "a"),
                ("add", {"a": 1, "b": 2}, "add"),
                ("explode", {"path": "b"}, "b"),
            ),
            call(("explode", {"path": "c"}, "c")),
        ]
    )
    agent = Agent(client, tools=[explode, add], clock=fixed_clock, policy=ALLOW_ALL, max_consecutive_errors=2)

    events = await run(agent, "go")

    # a fails, add succeeds (the count starts again), b and then c fail: two in a row end the request.
    # The calls of one round run at once, so their tool_end events may come in any order: compare by call.
    assert {e.call_id: e.success for e in of_type(events, ToolEndEvent)} == {
        "a": False,
        "add": True,
        "b": False,
        "c": False,
    }
    assert events[-2] == AddendumEvent(content="The request was stopped after 2 failed tool calls in a row.")
    assert_ended(events, "tool_terminated")
    client.assert_consumed()
    assert_verified(events, turns=1)


async def test_calls_the_rules_refuse_neither_count_nor_start_the_count_again() -> None:
    client = ScriptedChatClient(
        [
            call(("explode", {"path": "a"})),
            call(("write_note", {"name": "n", "text": "t"})),
            call(("explode", {"path": "b"})),
        ]
    )
    rules = Rules(write_note=Verdict.deny("notes are read-only"))
    agent = Agent(
        client, tools=[explode, write_note], clock=fixed_clock, policy=rules, max_consecutive_errors=2
    )

    events = await run(agent, "go")

    assert [e.refusal for e in of_type(events, ToolEndEvent)] == [None, "denied", None]
    assert_ended(events, "tool_terminated")
    client.assert_consumed()


async def test_without_a_limit_failures_go_on_until_the_model_stops() -> None:
    client = ScriptedChatClient(
        [call(("explode", {"path": str(n)})) for n in range(4)] + [reply("giving up")]
    )
    events = await run(Agent(client, tools=[explode], clock=fixed_clock, policy=ALLOW_ALL), "go")
    assert len(of_type(events, ToolEndEvent)) == 4
    assert of_type(events, AddendumEvent) == []
    assert_ended(events, "completed")
    with pytest.raises(ValueError, match="max_consecutive_errors"):
        Agent(client, max_consecutive_errors=0)
