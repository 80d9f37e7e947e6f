"""The stdio runner as a real subprocess, driven over its pipes like any client would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncGenerator
from collections.abc import Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from core_harness import WAIT
from core_harness import asked_event
from core_harness import message
from core_harness import stop_process

from hive_protocol import CancelRequest
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import LineTooLong
from hive_protocol import Request
from hive_protocol import SessionStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UnknownEvent
from hive_protocol import decode_event
from hive_protocol import encode
from hive_protocol import iter_lines
from hive_protocol import verify

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

AGENT_SCRIPT = textwrap.dedent(
    '''
    """A scripted agent served over stdio, as a host would start it."""

    import sys

    import anyio

    from hive_core import Agent, HitlBridge, SessionRunner, StdioRunner, TextUpdate, run_stdio, tool
    from hive_core.approvals import Verdict
    from hive_core.context import ContextManager
    from hive_core.testing import Block, ScriptedChatClient, ScriptedRound, call, reply


    @tool
    def write_note(path: str, text: str) -> str:
        """Write a note."""
        return f"wrote {len(text)} characters to {path}"


    class Rules:
        def evaluate(self, tool_name, arguments):
            return Verdict.ask("writes a note", level="high")

        def is_read_only(self, tool_name):
            return False


    scenario = sys.argv[1]
    if scenario == "interactive":
        rounds = [
            ScriptedRound([TextUpdate("thinking about it"), Block()]),
            call(("write_note", {"path": "n.txt", "text": "h\\u00e9llo"}, "w1")),
            reply("saved", usage=(3, 2)),
        ]
    else:
        rounds = [reply(f"answer {i}") for i in range(int(sys.argv[2]))]

    client = ScriptedChatClient(rounds)
    bridge = HitlBridge(timeout=60)
    # The scripted model takes a request of any length: these scenarios are about framing, not the window.
    unbounded = ContextManager(window=1 << 40)
    agent = Agent(client, tools=[write_note], policy=Rules(), approvals=bridge, context=unbounded, clock=lambda: 0.0)
    if scenario == "small-lines":
        runner = StdioRunner(SessionRunner(agent.session(), session_id="s1"), max_line_bytes=1024)
        code = anyio.run(runner.run)
    else:
        code = run_stdio(agent.session(), session_id="s1", bridge=bridge)
    client.assert_consumed()
    sys.exit(code)
    '''
)


class AgentProcess:
    """The agent script running as a child process; every read and write is bounded by ``WAIT``."""

    def __init__(self, script: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        self._lines: Iterator[bytes | LineTooLong] = iter_lines(self.proc.stdout)
        self.received: list[bytes] = []
        """Every line read so far, with its newline, exactly as the child wrote it."""

    def _write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    async def send(self, *requests: Request | bytes) -> None:
        data = b"".join(r if isinstance(r, bytes) else encode(r) for r in requests)
        with anyio.fail_after(WAIT):
            await anyio.to_thread.run_sync(self._write, data, abandon_on_cancel=True)

    async def read(self) -> Event | UnknownEvent | None:
        """The next event, or ``None`` at the end of the output."""
        with anyio.fail_after(WAIT):
            line = await anyio.to_thread.run_sync(next, self._lines, None, abandon_on_cancel=True)
        if line is None:
            return None
        assert isinstance(line, bytes)
        self.received.append(line + b"\n")
        return decode_event(line)

    async def read_until(self, kind: type[Event]) -> list[Event | UnknownEvent]:
        """Events up to and including the next one of ``kind``."""
        events: list[Event | UnknownEvent] = []
        while True:
            event = await self.read()
            assert event is not None, f"the output ended before a {kind.__name__}"
            events.append(event)
            if isinstance(event, kind):
                return events

    async def finish(self) -> int:
        """End the input, read the rest of the output, and wait for the exit code."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        while await self.read() is not None:
            pass
        with anyio.fail_after(WAIT):
            return await anyio.to_thread.run_sync(self.proc.wait, abandon_on_cancel=True)

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode()


@asynccontextmanager
async def agent_process(tmp_path: Path, *args: str) -> AsyncGenerator[AgentProcess, None]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT_SCRIPT)
    process = AgentProcess(script, *args)
    try:
        yield process
    finally:
        stop_process(process.proc)


async def test_cancel_and_approval_over_real_pipes(tmp_path: Path) -> None:
    async with agent_process(tmp_path, "interactive") as agent:
        # session_started comes before any request is written.
        assert await agent.read() == SessionStartedEvent(session_id="s1", protocol_version=1)

        await agent.send(message("first"))
        assert await agent.read_until(TextDeltaEvent) == [TextDeltaEvent(content="thinking about it")]
        await agent.send(CancelRequest())
        assert await agent.read_until(TurnEndEvent) == [TurnEndEvent(stop_reason="cancelled")]

        await agent.send(message("write a note"))
        before = await agent.read_until(HitlRequestEvent)
        start = ToolStartEvent(tool="write_note", input={"path": "n.txt", "text": "héllo"}, call_id="w1")
        assert before == [
            start,
            asked_event(start, action="writes a note", target="n.txt", level="high"),
        ]
        await agent.send(HitlResponseRequest(approved=True, id="hitl-w1"))
        assert await agent.read_until(TurnEndEvent) == [
            ToolEndEvent(tool="write_note", success=True, output="wrote 5 characters to n.txt", call_id="w1"),
            TextDeltaEvent(content="saved"),
            TurnEndEvent(
                input_tokens=3, output_tokens=2, total_tokens=5, stop_reason="completed", duration_ms=0
            ),
        ]

        code = await agent.finish()
        assert (code, agent.stderr()) == (0, "")

    assert verify(agent.received, turns=2) == []
    # Non-ASCII is written raw, one flushed line per event.
    assert (
        agent.received[3]
        == '{"type":"tool_start","tool":"write_note","input":{"path":"n.txt","text":"héllo"},"call_id":"w1"}\n'.encode()
    )


async def test_end_of_input_drains_queued_turns_and_exits_0(tmp_path: Path) -> None:
    async with agent_process(tmp_path, "plain", "3") as agent:
        await agent.send(
            message("a"),
            b"null\n",
            b'{"type":"no_such_request"}\n',
            message("b"),
            message("c"),
        )
        code = await agent.finish()
        assert (code, agent.stderr()) == (0, "")

    events = [decode_event(line) for line in agent.received]
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == [
        "answer 0",
        "answer 1",
        "answer 2",
    ]
    assert [e.stop_reason for e in events if isinstance(e, TurnEndEvent)] == ["completed"] * 3
    assert sum(1 for line in agent.received if b'"code":"unreadable_request"' in line) == 2
    assert verify(agent.received, turns=3) == []


async def test_shutdown_runs_queued_turns_and_ignores_the_rest(tmp_path: Path) -> None:
    async with agent_process(tmp_path, "plain", "3") as agent:
        await agent.send(
            message("a"),
            message("b"),
            message("c"),
            b'{"type":"shutdown"}\n',
            message("never"),
        )
        # The runner exits on shutdown without waiting for the end of its input.
        while await agent.read() is not None:
            pass
        with anyio.fail_after(WAIT):
            code = await anyio.to_thread.run_sync(agent.proc.wait, abandon_on_cancel=True)
        assert (code, agent.stderr()) == (0, "")

    assert sum(1 for line in agent.received if b'"type":"turn_end"' in line) == 3
    assert verify(agent.received, turns=3) == []


async def test_a_line_over_the_cap_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    async with agent_process(tmp_path, "small-lines", "1") as agent:
        long_line = encode(message("x" * 5000))
        await agent.send(long_line, message("short"))
        code = await agent.finish()
        assert (code, agent.stderr()) == (0, "")

    assert agent.received[1] == (
        b'{"type":"error","message":"Unreadable request skipped: line of '
        + str(len(long_line) - 1).encode()
        + b' bytes exceeds the limit of 1024 bytes","code":"unreadable_request"}\n'
    )
    assert agent.received[2:] == [
        b'{"type":"text_delta","content":"answer 0"}\n',
        b'{"type":"turn_end","stop_reason":"completed","duration_ms":0}\n',
    ]
    assert verify(agent.received, turns=1) == []


async def test_a_10_mib_line_over_a_pipe_under_the_default_cap(tmp_path: Path) -> None:
    async with agent_process(tmp_path, "plain", "2") as agent:
        await agent.send(message("y" * (10 * 1024 * 1024)), message("next"))
        code = await agent.finish()
        assert (code, agent.stderr()) == (0, "")

    assert [line for line in agent.received if b"text_delta" in line] == [
        b'{"type":"text_delta","content":"answer 0"}\n',
        b'{"type":"text_delta","content":"answer 1"}\n',
    ]
    assert verify(agent.received, turns=2) == []
