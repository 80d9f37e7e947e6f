"""The request loop every transport shares (SessionRunner.serve), driven in memory, and the stdio runner on
in-memory byte streams."""

from __future__ import annotations

import io
import re
from typing import Any

import anyio
import pytest
from core_harness import WAIT
from core_harness import Rules
from core_harness import Wire
from core_harness import assert_verified
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from core_harness import recording_tool
from core_harness import wire_bytes

from hive_core import Agent
from hive_core import ChatError
from hive_core import FallbackChatClient
from hive_core import HitlBridge
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core import TextUpdate
from hive_core import open_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.approvals import Verdict
from hive_core.testing import Block
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import fail
from hive_core.testing import reply
from hive_core.tools import EventSink
from hive_protocol import PROTOCOL_VERSION
from hive_protocol import CancelRequest
from hive_protocol import ContextUpdateRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import QuestionResponseRequest
from hive_protocol import SessionStartedEvent
from hive_protocol import ShutdownRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import encode
from hive_protocol import verify

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


def wire_for(
    rounds: list[ScriptedRound],
    *,
    tools: list[Any] | None = None,
    policy: Rules | None = None,
    bridge: HitlBridge | None = None,
    **runner: Any,
) -> tuple[Wire, ScriptedChatClient]:
    client = ScriptedChatClient(rounds)
    agent = Agent(
        client,
        tools=tools or [],
        policy=ALLOW_ALL if policy is None else policy,
        approvals=bridge,
        clock=fixed_clock,
    )
    return Wire(SessionRunner(agent.session(), session_id="s1", bridge=bridge, **runner)), client


def cancelled(tool: str, call_id: str) -> ToolEndEvent:
    """The ``tool_end`` of a call whose turn was cancelled while it ran."""
    return ToolEndEvent(
        tool=tool,
        success=False,
        output="Cancelled: the turn was cancelled before this call finished.",
        call_id=call_id,
    )


def sent_texts(client: ScriptedChatClient, request: int) -> list[str]:
    """The text of every message of one model request."""
    return [m.text for m in client.requests[request][0]]


# -- session start, plain turns, ordering ------------------------------------------------------------------


async def test_session_started_comes_first_before_any_request_is_read() -> None:
    wire, _ = wire_for([reply("hi")])
    async with wire.running():
        first = await wire.wait_for(SessionStartedEvent)
        assert wire.events == [first]  # nothing was sent yet
        wire.send(message("hello"))
        await wire.wait_for(TurnEndEvent)

    assert first == SessionStartedEvent(session_id="s1", protocol_version=PROTOCOL_VERSION)
    assert kinds(wire.events) == ["session_started", "text_delta", "turn_end"]
    assert_verified(wire.events, turns=1)


async def test_a_session_with_no_requests_only_starts() -> None:
    wire, _ = wire_for([])
    assert await wire.run() == [SessionStartedEvent(session_id="s1", protocol_version=PROTOCOL_VERSION)]


def test_the_default_session_id_is_new_and_sorts_by_creation() -> None:
    async def noop(request: UserMessageRequest, emit: EventSink) -> None:
        return None

    first, second = SessionRunner(noop).session_id, SessionRunner(noop).session_id
    assert first != second
    assert re.fullmatch(r"[0-9a-f]+-[0-9a-f]{8}", first)
    assert first.split("-")[0] <= second.split("-")[0]


async def test_turns_run_one_at_a_time_in_order() -> None:
    log: list[str] = []
    first_may_end = anyio.Event()

    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        log.append(f"start {request.content}")
        emit(TextDeltaEvent(content=request.content))
        if request.content == "one":
            await first_may_end.wait()
        log.append(f"end {request.content}")
        emit(TurnEndEvent(stop_reason="completed"))

    wire = Wire(SessionRunner(processor, session_id="s1"))
    async with wire.running():
        wire.send(message("one"))
        wire.send(message("two"))
        # Requests are handled in order: once the line after "two" is answered, "two" is queued.
        wire.send(b"null")
        await wire.wait_for(ErrorEvent)
        first_may_end.set()
        await wire.wait_for(TurnEndEvent, count=2)

    assert log == ["start one", "end one", "start two", "end two"]
    # The unreadable line is answered while the first turn still runs.
    assert kinds(wire.events)[:4] == ["session_started", "text_delta", "error", "turn_end"]
    assert kinds(wire.events)[4:] == ["text_delta", "turn_end"]
    assert_verified(wire.events, turns=2)


async def test_each_turn_sees_the_conversation_so_far() -> None:
    wire, client = wire_for([reply("A"), reply("B")])
    events = await wire.run(message("one"), message("two"))

    assert sent_texts(client, 1) == ["one", "A", "two"]
    assert [e.stop_reason for e in of_type(events, TurnEndEvent)] == ["completed", "completed"]
    assert_verified(events, turns=2)


# -- cancel ---------------------------------------------------------------------------------------------


async def test_cancel_during_streaming() -> None:
    wire, client = wire_for([ScriptedRound([TextUpdate("partial"), Block()]), reply("second")])

    async with wire.running():
        wire.send(message("one"))
        await wire.wait_for(TextDeltaEvent)
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent)
        wire.send(message("two"))
        await wire.wait_for(TurnEndEvent, count=2)

    assert wire.events == [
        SessionStartedEvent(session_id="s1", protocol_version=PROTOCOL_VERSION),
        TextDeltaEvent(content="partial"),
        TurnEndEvent(stop_reason="cancelled"),
        TextDeltaEvent(content="second"),
        TurnEndEvent(stop_reason="completed", duration_ms=0),
    ]
    # What the user saw of the cancelled answer stays in the history.
    assert sent_texts(client, 1) == ["one", "partial", "two"]
    assert_verified(wire.events, turns=2)


async def test_cancel_during_a_tool() -> None:
    entered, never = anyio.Event(), anyio.Event()
    finished: list[str] = []

    @tool
    async def crawl(site: str) -> str:
        """Takes forever."""
        entered.set()
        await never.wait()
        finished.append(site)
        return "unreachable"

    wire, client = wire_for([call(("crawl", {"site": "x"}, "c1")), reply("after")], tools=[crawl])
    async with wire.running():
        wire.send(message("crawl it"))
        with anyio.fail_after(WAIT):
            await entered.wait()
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent)
        wire.send(message("next"))
        await wire.wait_for(TurnEndEvent, count=2)

    assert wire.events[1:4] == [
        ToolStartEvent(tool="crawl", input={"site": "x"}, call_id="c1"),
        cancelled("crawl", "c1"),
        TurnEndEvent(stop_reason="cancelled"),
    ]
    assert finished == []
    # The history stays well formed: the cancelled call has its result when the next turn is sent.
    results = client.requests[1][0][-2].tool_results
    assert [(r.call_id, r.content, r.is_error) for r in results] == [
        ("c1", "Cancelled: the turn was cancelled before this call finished.", True)
    ]
    assert_verified(wire.events, turns=2)


async def test_cancel_with_parallel_calls_keeps_the_finished_ones() -> None:
    entered, never = anyio.Event(), anyio.Event()

    @tool
    def quick() -> str:
        """Quick."""
        return "fast"

    @tool
    async def slow() -> str:
        """Slow."""
        entered.set()
        await never.wait()
        return "never"

    wire, _ = wire_for([call(("quick", {}, "q"), ("slow", {}, "s"))], tools=[quick, slow])
    async with wire.running():
        wire.send(message("both"))
        await wire.wait_for(ToolEndEvent)
        with anyio.fail_after(WAIT):
            await entered.wait()
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent)

    ends = of_type(wire.events, ToolEndEvent)
    assert [(e.call_id, e.success, e.output) for e in ends] == [
        ("q", True, "fast"),
        ("s", False, "Cancelled: the turn was cancelled before this call finished."),
    ]
    assert wire.events[-1] == TurnEndEvent(stop_reason="cancelled")
    assert_verified(wire.events, turns=1)


async def test_cancel_during_an_approval_wait() -> None:
    write_file, ran = recording_tool("write_file", "written")
    bridge = HitlBridge(timeout=WAIT)
    rounds = [call(("write_file", {"path": "a"}, "w1")), reply("later")]
    wire, _ = wire_for(rounds, tools=[write_file], policy=Rules(Verdict.ask("writes")), bridge=bridge)

    async with wire.running():
        wire.send(message("write"))
        await wire.wait_for(HitlRequestEvent)
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent)
        assert bridge.waiting == []
        # A late answer to the cancelled request changes nothing.
        wire.send(HitlResponseRequest(approved=True, id="hitl-w1"))
        wire.send(message("again"))
        await wire.wait_for(TurnEndEvent, count=2)

    assert kinds(wire.events)[:5] == ["session_started", "tool_start", "hitl_request", "tool_end", "turn_end"]
    assert kinds(wire.events)[5:] == ["text_delta", "turn_end"]
    end = of_type(wire.events, ToolEndEvent)[0]
    assert (end.success, end.refusal) == (False, None)
    assert of_type(wire.events, TurnEndEvent)[0].stop_reason == "cancelled"
    assert ran == []
    assert_verified(wire.events, turns=2)


async def test_cancel_with_nothing_running_is_ignored() -> None:
    wire, _ = wire_for([reply("fine")])
    events = await wire.run(CancelRequest(), message("hi"))

    assert kinds(events) == ["session_started", "text_delta", "turn_end"]
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)


async def test_cancel_ends_only_the_running_turn() -> None:
    wire, client = wire_for([ScriptedRound([TextUpdate("one"), Block()]), reply("two"), reply("three")])
    async with wire.running():
        wire.send(message("first"))
        wire.send(message("second"))
        wire.send(message("third"))
        await wire.wait_for(TextDeltaEvent)
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent, count=3)

    assert [e.stop_reason for e in of_type(wire.events, TurnEndEvent)] == [
        "cancelled",
        "completed",
        "completed",
    ]
    client.assert_consumed()
    assert_verified(wire.events, turns=3)


# -- shutdown and end of input --------------------------------------------------------------------------


async def test_shutdown_runs_the_queued_turns_then_the_session_ends() -> None:
    write_file, ran = recording_tool("write_file", "written")
    bridge = HitlBridge(timeout=WAIT)
    rounds = [call(("write_file", {"path": "a"}, "w1")), reply("first"), reply("second"), reply("third")]
    wire, client = wire_for(rounds, tools=[write_file], policy=Rules(Verdict.ask("writes")), bridge=bridge)

    async with wire.running():
        wire.send(message("one"))
        # The first turn cannot end before the shutdown is read: it waits for an approval.
        await wire.wait_for(HitlRequestEvent)
        wire.send(message("two"))
        wire.send(message("three"))
        wire.send(ShutdownRequest())
        wire.send(message("never read"))
        await wire.wait_for(TurnEndEvent, count=3)

    assert wire.served
    assert [e.stop_reason for e in of_type(wire.events, TurnEndEvent)] == ["completed"] * 3
    # Nobody is left to answer the approval: it fails closed.
    assert of_type(wire.events, ToolEndEvent)[0].output == (
        "Approval rejected: the client connection closed before answering"
    )
    assert ran == []
    assert [sent_texts(client, i)[-1] for i in (2, 3)] == ["two", "three"]
    client.assert_consumed()
    assert all("never read" not in text for i in range(4) for text in sent_texts(client, i))
    assert_verified(wire.events, turns=3)


async def test_requests_after_shutdown_are_not_read() -> None:
    wire, client = wire_for([reply("a"), reply("b")])
    events = await wire.run(
        message("one"), message("two"), ShutdownRequest(), message("three"), CancelRequest()
    )

    assert [e.stop_reason for e in of_type(events, TurnEndEvent)] == ["completed", "completed"]
    assert len(client.requests) == 2
    assert_verified(events, turns=2)


async def test_end_of_input_runs_the_queued_turns() -> None:
    wire, client = wire_for([reply("a"), reply("b"), reply("c")])
    events = await wire.run(message("one"), message("two"), message("three"))

    assert kinds(events) == ["session_started"] + ["text_delta", "turn_end"] * 3
    client.assert_consumed()
    assert wire.served
    assert_verified(events, turns=3)


# -- unreadable requests ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message_start"),
    [
        (b"{not json", "Unreadable request skipped: malformed JSON: "),
        (
            b'{"type":"bogus","x":1}',
            "Unreadable request skipped: unknown request type 'bogus'; expected one of cancel, context_update, "
            "hitl_response, question_response, shutdown, user_message",
        ),
        (b"null", "Unreadable request skipped: expected a JSON object, got null"),
        (b"[1,2]", "Unreadable request skipped: expected a JSON object, got list"),
        (b'{"content":"no type"}', "Unreadable request skipped: the request has no 'type'"),
        (b'{"type":"user_message","content":5}', "Unreadable request skipped: invalid user_message: "),
    ],
)
async def test_an_unreadable_line_is_answered_and_the_session_goes_on(
    line: bytes, message_start: str
) -> None:
    wire, client = wire_for([reply("still here")])
    events = await wire.run(line, encode(message("hello"))[:-1])

    assert kinds(events) == ["session_started", "error", "text_delta", "turn_end"]
    error = events[1]
    assert isinstance(error, ErrorEvent)
    assert error.code == "unreadable_request"
    assert error.message.startswith(message_start)
    assert sent_texts(client, 0) == ["hello"]
    assert_verified(events, turns=1)


async def test_unreadable_lines_during_a_turn_do_not_disturb_it() -> None:
    release = anyio.Event()
    wire, _ = wire_for([ScriptedRound([TextUpdate("a"), Block(release), TextUpdate("b")]), reply("c")])

    async with wire.running():
        wire.send(message("one"))
        await wire.wait_for(TextDeltaEvent)
        wire.send(b"null")
        wire.send(b'{"type":"mystery"}')
        await wire.wait_for(ErrorEvent, count=2)
        release.set()
        wire.send(message("two"))
        await wire.wait_for(TurnEndEvent, count=2)

    # Both unreadable lines are answered while the first turn runs.
    assert kinds(wire.events)[:4] == ["session_started", "text_delta", "error", "error"]
    assert kinds(wire.events)[4:] == ["text_delta", "turn_end", "text_delta", "turn_end"]
    assert [e.stop_reason for e in of_type(wire.events, TurnEndEvent)] == ["completed", "completed"]
    assert_verified(wire.events, turns=2)


async def test_a_10_mib_line_is_read_whole() -> None:
    content = "x" * (10 * 1024 * 1024)
    wire, client = wire_for([reply("that was long")])
    events = await wire.run(encode(message(content))[:-1])

    assert kinds(events) == ["session_started", "text_delta", "turn_end"]
    assert client.requests[0][0][-1].text == content
    assert_verified(events, turns=1)


# -- TurnOptions, context, questions ----------------------------------------------------------------------


async def test_invalid_turn_options_are_rejected_and_the_session_goes_on() -> None:
    wire, client = wire_for([reply("fine")])
    events = await wire.run(message("bad", tool_names=["missing"]), message("good"))

    assert kinds(events) == ["session_started", "error", "turn_end", "text_delta", "turn_end"]
    error = events[1]
    assert isinstance(error, ErrorEvent)
    assert error.code == "request_rejected"
    assert error.message == (
        "Turn options name tool(s) that are not registered on this agent: missing. Registered tools: (none)."
    )
    assert events[2] == TurnEndEvent()
    assert sent_texts(client, 0) == ["good"]
    assert_verified(events, turns=2)


async def test_context_update_prefixes_later_messages() -> None:
    updates: list[ContextUpdateRequest] = []
    wire, client = wire_for([reply("a"), reply("b"), reply("c")], on_context=updates.append)
    events = await wire.run(
        message("before"),
        ContextUpdateRequest(working_path="/home/user/project", selected_items=["a.py", "b.py"]),
        message("after"),
        ContextUpdateRequest(selected_items=["c.py"]),
        message("still"),
    )

    assert [client.requests[i][0][-1].text for i in range(3)] == [
        "before",
        "[WorkingPath: /home/user/project]\n\nafter",
        "[WorkingPath: /home/user/project]\n\nstill",
    ]
    assert [u.selected_items for u in updates] == [["a.py", "b.py"], ["c.py"]]
    assert wire.runner.working_path == "/home/user/project"
    assert_verified(events, turns=3)


async def test_context_enrichment_can_be_switched_off() -> None:
    wire, client = wire_for([reply("a")], enrich_context=False)
    await wire.run(ContextUpdateRequest(working_path="/p"), message("plain"))
    assert client.requests[0][0][-1].text == "plain"


async def test_prefixed_message_keeps_its_model_and_options() -> None:
    wire, client = wire_for([reply("a")])
    request = message("x", model="m-2", temperature=0.25)
    await wire.run(ContextUpdateRequest(working_path="/p"), request)

    options = client.requests[0][1]
    assert (options.model, options.temperature) == ("m-2", 0.25)


async def test_question_responses_go_to_the_callback() -> None:
    answers: list[QuestionResponseRequest] = []
    wire, _ = wire_for([], on_question=answers.append)
    response = QuestionResponseRequest(id="q1", answers={"Which?": ["A"]})
    events = await wire.run(response)

    assert answers == [response]
    assert kinds(events) == ["session_started"]


# -- what the runner guarantees whatever the processor does -------------------------------------------


async def test_a_failing_processor_gets_error_then_a_bare_turn_end() -> None:
    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        emit(TextDeltaEvent(content="working"))
        emit(ToolStartEvent(tool="t", input={}, call_id="c1"))
        raise RuntimeError("it broke")

    wire = Wire(SessionRunner(processor, session_id="s1"))
    events = await wire.run(message("go"), message("again"))

    turn = [
        TextDeltaEvent(content="working"),
        ToolStartEvent(tool="t", input={}, call_id="c1"),
        ToolEndEvent(tool="t", success=False, output="Not finished: the turn failed.", call_id="c1"),
        ErrorEvent(message="it broke", code="internal"),
        TurnEndEvent(),
    ]
    assert events == [SessionStartedEvent(session_id="s1", protocol_version=PROTOCOL_VERSION), *turn, *turn]
    assert_verified(events, turns=2)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (TimeoutError(), "timeout"),
        (ConnectionError("reset"), "network"),
        (FileNotFoundError("gone"), "file_system"),
        (ValueError("bad"), "request_rejected"),
        (ChatError("too long", code="context_limit"), "context_limit"),
    ],
)
async def test_failures_are_classified(error: Exception, code: str) -> None:
    wire, _ = wire_for([fail(error)])
    events = await wire.run(message("go"))

    failure = of_type(events, ErrorEvent)[0]
    assert failure.code == code
    assert failure.message == (str(error) or type(error).__name__)
    assert kinds(events)[-2:] == ["error", "turn_end"]
    assert_verified(events, turns=1)


async def test_a_processor_that_forgets_its_turn_end_gets_one() -> None:
    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        emit(TextDeltaEvent(content="done"))

    events = await Wire(SessionRunner(processor, session_id="s1")).run(message("go"))
    assert events[1:] == [TextDeltaEvent(content="done"), TurnEndEvent()]
    assert_verified(events, turns=1)


async def test_a_cancelled_processor_has_its_open_calls_closed() -> None:
    never = anyio.Event()

    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        emit(ToolStartEvent(tool="t", input={"a": 1}, call_id="c1"))
        await never.wait()

    wire = Wire(SessionRunner(processor, session_id="s1"))
    async with wire.running():
        wire.send(message("go"))
        await wire.wait_for(ToolStartEvent)
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent)

    assert wire.events[1:] == [
        ToolStartEvent(tool="t", input={"a": 1}, call_id="c1"),
        cancelled("t", "c1"),
        TurnEndEvent(stop_reason="cancelled"),
    ]
    assert_verified(wire.events, turns=1)


async def test_nothing_of_a_turn_follows_its_turn_end() -> None:
    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        emit(ToolStartEvent(tool="t", input=None, call_id="c1"))
        emit(TurnEndEvent(stop_reason="completed"))
        emit(TextDeltaEvent(content="too late"))
        raise RuntimeError("also too late")

    events = await Wire(SessionRunner(processor, session_id="s1")).run(message("go"))
    assert events[1:] == [
        ToolStartEvent(tool="t", input=None, call_id="c1"),
        ToolEndEvent(
            tool="t",
            success=False,
            output="Not finished: the turn ended before this call's outcome was reported.",
            call_id="c1",
        ),
        TurnEndEvent(stop_reason="completed"),
    ]
    assert_verified(events, turns=1)


# -- the stdio runner on in-memory streams ------------------------------------------------------------------


async def stdio(
    data: bytes, rounds: list[ScriptedRound], **options: Any
) -> tuple[bytes, int, ScriptedChatClient]:
    client = ScriptedChatClient(rounds)
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()
    stdout = io.BytesIO()
    runner = StdioRunner(
        SessionRunner(session, session_id="s1"), stdin=io.BytesIO(data), stdout=stdout, **options
    )
    with anyio.fail_after(WAIT):
        code = await runner.run()
    return stdout.getvalue(), code, client


async def test_stdio_runner_serves_lines_and_exits_0() -> None:
    data = b'\n  \n{"type":"user_message","content":"hi"}\r\n\n{"type":"shutdown"}\n{"type":"user_message","content":"no"}\n'
    out, code, client = await stdio(data, [reply("hello")])

    assert code == 0
    assert out == (
        b'{"type":"session_started","session_id":"s1","protocol_version":1}\n'
        b'{"type":"text_delta","content":"hello"}\n'
        b'{"type":"turn_end","stop_reason":"completed","duration_ms":0}\n'
    )
    assert verify(out.splitlines(keepends=True), turns=1) == []
    client.assert_consumed()


async def test_stdio_runner_reads_the_last_line_without_newline() -> None:
    out, code, _ = await stdio(b'{"type":"user_message","content":"hi"}', [reply("ok")])
    assert code == 0
    assert out.count(b'"type":"turn_end"') == 1


async def test_stdio_runner_answers_a_line_over_its_cap_and_goes_on() -> None:
    big = encode(message("x" * (10 * 1024 * 1024)))
    small = encode(message("small"))
    out, code, client = await stdio(big + small, [reply("ok")], max_line_bytes=1024 * 1024)

    lines = out.splitlines(keepends=True)
    assert code == 0
    assert lines[1] == encode(
        ErrorEvent(
            message=f"Unreadable request skipped: line of {len(big) - 1} bytes exceeds the limit of 1048576 bytes",
            code="unreadable_request",
        )
    )
    assert [line[:20] for line in lines[2:]] == [b'{"type":"text_delta"', b'{"type":"turn_end","']
    assert client.requests[0][0][-1].text == "small"
    assert verify(lines, turns=1) == []


async def test_stdio_runner_reads_a_10_mib_line_under_the_default_cap() -> None:
    content = "é" * (5 * 1024 * 1024)  # 10 MiB of UTF-8
    out, code, client = await stdio(encode(message(content)), [reply("ok")])

    assert code == 0
    assert client.requests[0][0][-1].text == content
    assert verify(out.splitlines(keepends=True), turns=1) == []


# -- determinism ------------------------------------------------------------------------------------------


async def scripted_session() -> bytes:
    """A session with thinking, a streamed tool call, an approval, a retry and a cancelled turn."""

    # Async tools: sync ones run in worker threads, whose timing would order parallel results by chance.
    @tool(read_only=True)
    async def read_file(path: str) -> str:
        """Read a file."""
        return f"contents of {path}"

    @tool
    async def write_file(path: str, content: str) -> str:
        """Write a file."""
        return f"wrote {path}"

    async def no_sleep(delay: float) -> None:
        return None

    client = ScriptedChatClient(
        [
            fail(ChatError("busy", code="rate_limit", retry_after=1.0)),
            call(
                ("read_file", {"path": "a.txt"}, "r1"),
                ("write_file", {"path": "b.txt", "content": "é"}, "w1"),
                split=4,
            ),
            reply("done", thinking=["plan"], signature="s", usage=(12, 3)),
            ScriptedRound([TextUpdate("partial"), Block()]),
            reply("bye"),
        ]
    )
    bridge = HitlBridge(timeout=WAIT)
    agent = Agent(
        FallbackChatClient([client], sleep=no_sleep),
        tools=[read_file, write_file],
        policy=Rules(write_file=Verdict.ask("writes a file")),
        approvals=bridge,
        clock=fixed_clock,
    )

    def react(event: Event, wire: Wire) -> None:
        if isinstance(event, HitlRequestEvent):
            wire.send(HitlResponseRequest(approved=True, id=event.id))

    wire = Wire(SessionRunner(agent.session(), session_id="fixed", bridge=bridge), react=react)
    async with wire.running():
        wire.send(message("one"))
        await wire.wait_for(TurnEndEvent)
        wire.send(message("two"))
        await wire.wait_for(TextDeltaEvent, where=lambda e: e.content == "partial")
        wire.send(CancelRequest())
        await wire.wait_for(TurnEndEvent, count=2)
        wire.send(message("three"))
        await wire.wait_for(TurnEndEvent, count=3)
    assert_verified(wire.events, turns=3)
    return wire_bytes(wire.events)


async def test_the_same_scripted_session_gives_the_same_bytes() -> None:
    first = await scripted_session()
    second = await scripted_session()

    assert first == second
    lines = first.splitlines()
    assert lines[0] == b'{"type":"session_started","session_id":"fixed","protocol_version":1}'
    assert b'{"type":"hitl_request","id":"hitl-w1"' in first
    assert b'"stop_reason":"cancelled"' in first
    assert first.count(b'"type":"fallback"') == 1


async def test_the_stdio_runner_output_is_byte_identical_across_runs() -> None:
    data = encode(message("a")) + b"null\n" + encode(message("b")) + encode(ShutdownRequest())

    def rounds() -> list[ScriptedRound]:
        return [reply("x", thinking=["t"], usage=(1, 2)), reply("y", "z")]

    first, _, _ = await stdio(data, rounds())
    second, _, _ = await stdio(data, rounds())
    assert first == second
    assert b'"code":"unreadable_request"' in first
    assert verify(first.splitlines(keepends=True), turns=2) == []


class _ClosedPipe(io.RawIOBase):
    """A stdout whose reader has gone away after ``lines`` lines."""

    def __init__(self, lines: int) -> None:
        self.lines: list[bytes] = []
        self.left = lines

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.left == 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= 1
        self.lines.append(bytes(data))
        return len(data)


async def test_stdio_runner_stops_writing_once_the_client_closed_its_end() -> None:
    client = ScriptedChatClient([reply("a", "b", "c"), reply("second")])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()
    stdout = _ClosedPipe(lines=2)
    data = encode(message("one")) + encode(message("two"))
    runner = StdioRunner(SessionRunner(session, session_id="s1"), stdin=io.BytesIO(data), stdout=stdout)  # type: ignore[arg-type]
    with anyio.fail_after(WAIT):
        code = await runner.run()
    assert code == 0
    assert runner.closed
    assert stdout.lines == [
        b'{"type":"session_started","session_id":"s1","protocol_version":1}\n',
        b'{"type":"text_delta","content":"a"}\n',
    ]
    client.assert_consumed()


async def test_a_turn_past_its_timeout_fails_with_code_timeout() -> None:
    client = ScriptedChatClient([ScriptedRound([TextUpdate("partial"), Block()])])
    runner = SessionRunner(Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session())
    events: list[Event] = []
    with anyio.fail_after(WAIT):
        await runner.run_turn(message("go"), events.append, timeout=0.05)
    assert events == [
        TextDeltaEvent(content="partial"),
        ErrorEvent(message="the turn did not finish within 0.05 s", code="timeout"),
        TurnEndEvent(),
    ]
    assert_verified(events, turns=1)


async def test_cancel_method_ends_the_running_turn_as_cancelled() -> None:
    client = ScriptedChatClient([ScriptedRound([TextUpdate("partial"), Block()])])
    runner = SessionRunner(Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session())
    events: list[Event] = []

    def sink(event: Event) -> None:
        events.append(event)
        if isinstance(event, TextDeltaEvent):
            assert runner.cancel()

    with anyio.fail_after(WAIT):
        await runner.run_turn(message("go"), sink)
    assert events == [TextDeltaEvent(content="partial"), TurnEndEvent(stop_reason="cancelled")]
    assert not runner.cancel()


async def test_a_resumed_turn_runs_first_and_requests_wait_until_it_started() -> None:
    client = ScriptedChatClient([reply("queued turn")])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()
    seen_when_started: list[int] = []

    async def resume(emit: EventSink, *, task_status: Any) -> None:
        emit(TextDeltaEvent(content="resumed"))
        seen_when_started.append(client.remaining)
        task_status.started()
        emit(TurnEndEvent(stop_reason="completed"))

    wire = Wire(SessionRunner(session, session_id="s1", resume=resume))
    events = await wire.run(message("next"))
    assert kinds(events) == ["session_started", "text_delta", "turn_end", "text_delta", "turn_end"]
    assert events[1] == TextDeltaEvent(content="resumed")
    assert events[3] == TextDeltaEvent(content="queued turn")
    assert seen_when_started == [1]
    assert_verified(events[1:], turns=2)


async def test_a_failing_resume_still_ends_its_turn_and_the_session_goes_on() -> None:
    client = ScriptedChatClient([reply("after")])
    session = Agent(client, clock=fixed_clock, policy=ALLOW_ALL).session()

    async def resume(emit: EventSink, *, task_status: Any) -> None:
        raise ChatError("the suspended call could not be restored", code="internal")

    wire = Wire(SessionRunner(session, session_id="s1", resume=resume))
    events = await wire.run(message("next"))
    assert kinds(events) == ["session_started", "error", "turn_end", "text_delta", "turn_end"]
    assert_verified(events[1:], turns=2)


async def test_leaving_open_turn_early_while_a_tool_runs_cancels_cleanly() -> None:
    release = anyio.Event()

    @tool
    async def wait_forever() -> str:
        """Waits."""
        await release.wait()
        return "never"

    client = ScriptedChatClient([call(("wait_forever", {}))])
    session = Agent(client, tools=[wait_forever], clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        async with open_turn(session, "go") as events:
            async for event in events:
                if isinstance(event, ToolStartEvent):
                    break
    assert session.conversation[-1].role == "tool"
    assert session.conversation[-1].tool_results[0].content.startswith("Cancelled")
