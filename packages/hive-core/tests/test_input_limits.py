"""Input a session must survive: nesting of any depth in requests and in a model's tool arguments, huge bad lines,
exception texts that carry what was sent, and more queued turns than it will hold (reading pauses, nothing is
dropped)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from core_harness import WAIT
from core_harness import Wire
from core_harness import assert_verified
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from protocol_strategies import depth_of

from hive_core import Agent
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.context import ContextManager
from hive_core.runners.session import Incoming
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tools import EventSink
from hive_protocol import DEFAULT_MAX_LINE_BYTES
from hive_protocol import MAX_NESTING_DEPTH
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import decode_event
from hive_protocol import encode
from hive_protocol import verify

pytestmark = pytest.mark.anyio

DEPTHS = [1_000, 10_000, 100_000]
MIB = 1024 * 1024


def arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def fixed_clock() -> float:
    return 0.0


# -- deep requests ---------------------------------------------------------------------------------------------


async def test_deep_request_lines_are_answered_and_the_next_turn_runs() -> None:
    client = ScriptedChatClient([reply("still here")])
    wire = Wire(SessionRunner(Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session(), session_id="s1"))
    lines = [
        shape.format(deep=arrays(depth)).encode()
        for depth in DEPTHS
        for shape in (
            "{deep}",
            '{{"type":"user_message","content":{deep}}}',
            '{{"type":"user_message","content":"x","options":{{"tool_names":{deep}}}}}',
            '{{"type":"hitl_response","approved":true,"modified_arguments":{{"a":{deep}}}}}',
            '{{"type":"cancel","ignored":{deep}}}',
        )
    ]
    events = await wire.run(*lines, message("hello"))

    errors = of_type(events, ErrorEvent)
    assert len(errors) == len(lines)
    assert {e.code for e in errors} == {"unreadable_request"}
    assert all(len(e.message) < 500 for e in errors)
    assert kinds(events)[-2:] == ["text_delta", "turn_end"]
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)
    assert [m.text for m in client.requests[0][0]] == ["hello"]
    assert_verified(events, turns=1)


# -- deep tool arguments from the model ------------------------------------------------------------------------


def deep_tool() -> tuple[Any, list[int]]:
    ran: list[int] = []

    @tool
    def keep(value: Any) -> str:
        """Keep a value."""
        ran.append(depth_of(value))
        return "kept"

    return keep, ran


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, *DEPTHS])
async def test_deep_tool_arguments_are_refused_and_the_turn_goes_on(depth: int) -> None:
    # The arguments object is level 1, so "value" holds depth - 1 levels.
    raw = '{"value":' + arrays(depth - 1) + "}"
    keep, ran = deep_tool()
    client = ScriptedChatClient([call(("keep", raw), split=4096), reply("flatter next time")])
    # The scripted model takes a request of any length: the arguments are what is tested, not the window.
    agent = Agent(
        client, tools=[keep], context=ContextManager(window=1 << 40), clock=fixed_clock, policy=ALLOW_ALL
    )
    wire = Wire(SessionRunner(agent.session(), session_id="s1"))
    events = await wire.run(message("go"))

    assert ran == []
    [start] = of_type(events, ToolStartEvent)
    assert start.input == raw  # the text as the model wrote it: it was never parsed into a value
    [end] = of_type(events, ToolEndEvent)
    assert (end.success, end.refusal) == (False, "invalid_arguments")
    assert end.output is not None
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in end.output
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)
    assert not of_type(events, ErrorEvent)
    # The model read the refusal as the call's result and answered it.
    assert len(client.requests) == 2
    assert_verified(events, turns=1)
    # Every line the runner wrote reads back (the deep text travels as a string).
    assert verify([encode(e) for e in events], turns=1) == []


async def test_tool_arguments_at_the_limit_run() -> None:
    keep, ran = deep_tool()
    raw = '{"value":' + arrays(MAX_NESTING_DEPTH - 1) + "}"
    client = ScriptedChatClient([call(("keep", raw)), reply("done")])
    wire = Wire(
        SessionRunner(
            Agent(client, tools=[keep], clock=fixed_clock, policy=ALLOW_ALL).session(), session_id="s1"
        )
    )
    events = await wire.run(message("go"))

    assert ran == [MAX_NESTING_DEPTH - 1]
    [end] = of_type(events, ToolEndEvent)
    assert end.success
    # Its tool_start line, the deepest hive writes, still reads back.
    [start] = of_type(events, ToolStartEvent)
    assert decode_event(encode(start)) == start


# -- huge lines and long exception texts -----------------------------------------------------------------------


async def test_a_15_mib_bad_request_over_stdio_gets_a_short_error_and_the_session_goes_on() -> None:
    client = ScriptedChatClient([reply("ok")])
    runner = SessionRunner(Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session(), session_id="s1")
    bad = b'{"type":"' + b"\x01x" * (15 * MIB // 2) + b'"}\n'
    bad_type = b'{"type":"' + b"y" * (15 * MIB) + b'"}\n'
    stdin = io.BytesIO(bad + bad_type + encode(message("next")))
    stdout = io.BytesIO()
    with anyio.fail_after(WAIT):
        assert await StdioRunner(runner, stdin=stdin, stdout=stdout).run() == 0

    lines = stdout.getvalue().splitlines(keepends=True)
    assert [decode_event(line).__struct_config__.tag for line in lines] == [
        "session_started",
        "error",
        "error",
        "text_delta",
        "turn_end",
    ]
    for line in lines[1:3]:
        assert len(line) < 1_000, line[:300]
    assert max(map(len, lines)) < DEFAULT_MAX_LINE_BYTES
    assert verify(lines, turns=1) == []


async def test_a_failure_quotes_at_most_an_excerpt_of_its_exception() -> None:
    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        raise ValueError(f"unknown model {request.content!r}")

    stdout = io.BytesIO()
    stdin = io.BytesIO(encode(message("m" * (12 * MIB))))
    with anyio.fail_after(WAIT):
        await StdioRunner(SessionRunner(processor, session_id="s1"), stdin=stdin, stdout=stdout).run()
    lines = stdout.getvalue().splitlines(keepends=True)
    error = decode_event(lines[1])
    assert isinstance(error, ErrorEvent)
    assert error.message.startswith("unknown model 'mmm")
    assert len(lines[1]) < 5_000
    assert verify(lines, turns=1) == []


async def test_text_that_is_not_valid_unicode_does_not_silence_the_runner() -> None:
    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        emit(
            TextDeltaEvent(content="file caf\udce9.txt")
        )  # a name that is not UTF-8, as os.listdir returns it
        emit(TextDeltaEvent(content="and more"))

    stdout = io.BytesIO()
    stdio = StdioRunner(
        SessionRunner(processor, session_id="s1"), stdin=io.BytesIO(encode(message("ls"))), stdout=stdout
    )
    with anyio.fail_after(WAIT):
        await stdio.run()
    assert not stdio.closed
    lines = stdout.getvalue().splitlines(keepends=True)
    assert [decode_event(line) for line in lines[1:]] == [
        TextDeltaEvent(content="file caf\ufffd.txt"),
        TextDeltaEvent(content="and more"),
        TurnEndEvent(),
    ]


# -- the bounded queue -----------------------------------------------------------------------------------------


class Feed:
    """Requests handed to the runner one at a time; counts how many it has taken."""

    def __init__(self, requests: list[Incoming]) -> None:
        self.requests = requests
        self.taken = 0

    async def __call__(self) -> AsyncIterator[Incoming]:
        for request in self.requests:
            self.taken += 1
            yield request


class Gate:
    """A processor whose turn ``block`` waits for :attr:`release`; every turn says its content."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.started = anyio.Event()

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        if request.content == "block":
            self.started.set()
            await self.release.wait()
        emit(TextDeltaEvent(content=request.content))


async def settle() -> None:
    """Let every other task run until it waits on something outside the session."""
    for _ in range(200):
        await anyio.lowlevel.checkpoint()


async def serve(runner: SessionRunner, feed: Feed, events: list[Event]) -> None:
    with anyio.fail_after(WAIT):
        await runner.serve(feed(), events.append)


async def served_past_a_blocked_turn(requests: list[Incoming], **limits: int) -> tuple[int, list[Event]]:
    """Serve ``block`` then ``requests`` through a runner with ``limits``: how many requests the runner had
    read once everything settled while ``block`` ran, and every event after its release."""
    gate = Gate()
    runner = SessionRunner(gate, session_id="s1", **limits)
    feed = Feed([message("block"), *requests])
    events: list[Event] = []
    async with anyio.create_task_group() as group:
        group.start_soon(serve, runner, feed, events)
        with anyio.fail_after(WAIT):
            await gate.started.wait()
        await settle()
        taken = feed.taken
        gate.release.set()
    return taken, events


async def test_reading_pauses_while_the_queue_is_full_and_nothing_is_dropped() -> None:
    requests = [message(f"turn {i}") for i in range(100)]
    taken, events = await served_past_a_blocked_turn(requests, max_queued_turns=8)
    # The running turn, 8 waiting, and the one the reader holds while it waits for room.
    assert taken == 1 + 8 + 1
    texts = [e.content for e in of_type(events, TextDeltaEvent)]
    assert texts == ["block", *(f"turn {i}" for i in range(100))]
    assert len(of_type(events, TurnEndEvent)) == 101
    assert_verified(events, turns=101)


async def test_queued_text_is_bounded_too_but_one_large_message_still_runs() -> None:
    large = "L" * 1_000
    requests = [message("abcd"), message("efgh"), message("ijkl"), message(large)]
    taken, events = await served_past_a_blocked_turn(requests, max_queued_turns=100, max_queued_text=10)
    # 8 characters wait; the third message (12 > 10) is held until room is made.
    assert taken == 1 + 2 + 1
    assert [e.content for e in of_type(events, TextDeltaEvent)] == ["block", "abcd", "efgh", "ijkl", large]


async def test_control_requests_are_read_while_turns_wait_in_a_queue_with_room() -> None:
    gate = Gate()
    runner = SessionRunner(gate, session_id="s1", max_queued_turns=8)

    async def feed() -> AsyncIterator[Incoming]:
        yield message("block")
        yield message("one")
        yield message("two")
        await gate.started.wait()
        yield b'{"type":"cancel"}'
        yield message("three")

    events: list[Event] = []
    with anyio.fail_after(WAIT):
        await runner.serve(feed(), events.append)

    # The cancel reached the running turn at once; the queued turns ran after it.
    ends = of_type(events, TurnEndEvent)
    assert [e.stop_reason for e in ends] == ["cancelled", None, None, None]
    assert [e.content for e in of_type(events, TextDeltaEvent)] == ["one", "two", "three"]
