"""The HTTP agent runner against a small independent host (tests/agent_host.py): turns, approvals, cancel,
reconnection with ``Last-Event-ID``, a host that restarts or loses its answers, out-of-band events, refusal."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import anyio
import pytest
from agent_host import WAIT
from agent_host import AgentHost

from hive_core import Agent
from hive_core import HitlBridge
from hive_core import Processor
from hive_core import SessionRunner
from hive_core import tool
from hive_core.approvals import Verdict
from hive_core.runners.http import HttpRunner
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tools import EventSink
from hive_protocol import FallbackEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import UserMessageRequest
from hive_protocol import decode_event
from hive_protocol import verify
from hive_protocol.events import Event

pytestmark = pytest.mark.anyio

FAST = (0.01, 0.05)
"""Backoff for tests: a host that is away is tried again within milliseconds."""


class AskForWrites:
    """Rules: ``write_file`` is asked about, everything else allowed."""

    def evaluate(self, tool_name: str, arguments: object) -> Verdict:
        return Verdict.ask("write_file changes files") if tool_name == "write_file" else Verdict.allow()

    def is_read_only(self, tool_name: str) -> bool:
        return False


class Gated:
    """A processor that streams ``before`` deltas, waits for :attr:`gate`, then streams ``after`` deltas."""

    def __init__(self, before: int, after: int) -> None:
        self.before, self.after = before, after
        self.gate = anyio.Event()
        self.started = anyio.Event()

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        for index in range(self.before):
            emit(TextDeltaEvent(content=f"a{index} "))
        self.started.set()
        await self.gate.wait()
        for index in range(self.after):
            emit(TextDeltaEvent(content=f"b{index} "))


@asynccontextmanager
async def running(runner: HttpRunner) -> AsyncGenerator[list[int]]:
    """Run ``runner`` while the block runs; the list gets its exit code."""
    code: list[int] = []

    async def run() -> None:
        code.append(await runner.run())

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            yield code


def runner_for(
    host: AgentHost, processor: Processor, bridge: HitlBridge | None = None, max_failures: int | None = 10
) -> HttpRunner:
    session = SessionRunner(processor, session_id=host.agent_id, bridge=bridge)
    return HttpRunner(session, host.url, backoff=FAST, token="secret", max_failures=max_failures)


def texts(host: AgentHost) -> str:
    return "".join(str(event["content"]) for event in host.decoded() if event["type"] == "text_delta")


def verified(host: AgentHost) -> None:
    events: list[Event] = [decode_event(line) for line in host.events]  # pyright: ignore[reportAssignmentType]
    assert verify(events) == []


async def test_a_turn_is_served_and_shutdown_ends_the_runner() -> None:
    host = AgentHost()
    agent = Agent(ScriptedChatClient([reply("Hello there")]))
    runner = runner_for(host, agent.session())
    async with host.serving(), running(runner) as code:
        await host.wait_until(lambda h: bool(h.ready))
        host.send({"type": "user_message", "content": "hi"})
        await host.wait_for_event("turn_end")
        host.send({"type": "shutdown"})
    assert code == [0]
    assert host.ready == [{"session_id": "agent-1"}]
    assert host.kinds()[0] == "session_started"
    assert texts(host) == "Hello there"
    assert set(host.authorizations) == {"Bearer secret"}
    verified(host)


async def test_an_approval_is_asked_and_answered_over_the_wire() -> None:
    written: list[str] = []

    @tool
    def write_file(path: str) -> str:
        """Write a file."""
        written.append(path)
        return f"wrote {path}"

    bridge = HitlBridge()
    agent = Agent(
        ScriptedChatClient([call(("write_file", {"path": "a.txt"})), reply("done")]),
        tools=[write_file],
        policy=AskForWrites(),
        approvals=bridge,
    )
    host = AgentHost()
    runner = runner_for(host, agent.session(), bridge=bridge)
    async with host.serving(), running(runner):
        host.send({"type": "user_message", "content": "write it"})
        asked = await host.wait_for_event("hitl_request")
        assert written == []
        host.send({"type": "hitl_response", "id": asked["id"], "approved": True})
        await host.wait_for_event("turn_end")
        host.send({"type": "shutdown"})
    assert written == ["a.txt"]
    ends = [event for event in host.decoded() if event["type"] == "tool_end"]
    assert [(end["success"], end["output"]) for end in ends] == [(True, "wrote a.txt")]
    verified(host)


async def test_cancel_stops_the_running_turn() -> None:
    processor = Gated(before=1, after=1)
    host = AgentHost()
    async with host.serving(), running(runner_for(host, processor)):
        host.send({"type": "user_message", "content": "go"})
        await host.wait_for_event("text_delta")
        host.send({"type": "cancel"})
        end = await host.wait_for_event("turn_end")
        host.send({"type": "shutdown"})
    assert end["stop_reason"] == "cancelled"
    assert texts(host) == "a0 "
    verified(host)


async def test_a_host_that_restarts_mid_turn_loses_and_doubles_nothing() -> None:
    processor = Gated(before=3, after=3)
    host = AgentHost()
    runner = runner_for(host, processor, max_failures=None)  # however long the host takes to come back
    code: list[int] = []
    done = anyio.Event()

    async def run() -> None:
        code.append(await runner.run())
        done.set()

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            async with host.serving():
                group.start_soon(run)
                host.send({"type": "user_message", "content": "go"})
                await host.wait_until(lambda h: texts(h) == "a0 a1 a2 ")
            # The host is down: the turn goes on, its events wait in the runner.
            processor.gate.set()
            host.send({"type": "shutdown"})  # queued while the host is away, read once it is back
            async with host.serving():
                await done.wait()
    assert code == [0]
    assert texts(host) == "a0 a1 a2 b0 b1 b2 "
    # The reconnect asked only for what the agent had not read: the user_message (id 1) is not read twice.
    assert host.last_event_ids[0] is None
    assert host.last_event_ids[-1] == "1"
    assert host.kinds().count("turn_end") == 1
    verified(host)


async def test_a_batch_whose_answer_was_lost_is_sent_again_and_kept_once() -> None:
    host = AgentHost()
    host.lose_answers = 2
    agent = Agent(ScriptedChatClient([reply("one two three")]))
    async with host.serving(), running(runner_for(host, agent.session())):
        host.send({"type": "user_message", "content": "hi"})
        await host.wait_for_event("turn_end")
        host.send({"type": "shutdown"})
    assert host.lose_answers == 0
    assert host.kinds().count("session_started") == 1
    assert texts(host) == "one two three"
    verified(host)


async def test_a_broken_inbox_resumes_after_the_last_request_read() -> None:
    host = AgentHost()
    host.end_inbox_after = 1  # the stream breaks after the first request
    agent = Agent(ScriptedChatClient([reply("first"), reply("second")]))
    async with host.serving(), running(runner_for(host, agent.session())):
        host.send({"type": "user_message", "content": "one"})
        host.send({"type": "user_message", "content": "two"})
        await host.wait_for_event("turn_end", 2)
        host.send({"type": "shutdown"})
    assert host.last_event_ids == [None, "1"]
    assert texts(host) == "firstsecond"
    assert host.kinds().count("turn_end") == 2
    verified(host)


async def test_an_out_of_band_event_reaches_the_host_in_order() -> None:
    host = AgentHost()
    agent = Agent(ScriptedChatClient([reply("ok")]))
    runner = runner_for(host, agent.session())
    notice = FallbackEvent(
        kind="fallback",
        provider_index=0,
        total_providers=2,
        category="transient",
        message="switched",
        attempt=1,
        max_attempts=1,
    )
    async with host.serving(), running(runner):
        await host.wait_for_event("session_started")
        runner.publish(notice)
        await host.wait_for_event("fallback")
        host.send({"type": "shutdown"})
    fallback = host.decoded()[1]
    assert (fallback["type"], fallback["message"], fallback["kind"]) == ("fallback", "switched", "fallback")


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_a_host_that_refuses_the_agent_fails_at_once(
    status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    host = AgentHost()
    host.refuse = status
    agent = Agent(ScriptedChatClient([]))
    runner = runner_for(host, agent.session())
    async with host.serving(), running(runner) as code:
        pass
    assert code == [1]
    assert len(host.authorizations) == 1  # no second attempt
    assert runner.failure is not None
    assert f"HTTP {status}" in str(runner.failure)
    assert f"HTTP {status}" in capsys.readouterr().err


async def test_a_host_that_never_answers_is_given_up_after_max_failures() -> None:
    host = AgentHost()  # never served: every attempt is refused by the operating system
    agent = Agent(ScriptedChatClient([]))
    session = SessionRunner(agent.session(), session_id=host.agent_id)
    runner = HttpRunner(session, host.url, backoff=FAST, max_failures=3)
    with anyio.fail_after(WAIT):
        assert await runner.run() == 1
    assert runner.failure is not None
    assert "after 3 attempts" in str(runner.failure)
