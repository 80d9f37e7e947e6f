"""Helpers for the session tests: child processes driven over pipes, rules that ask about deploys, and a
restarted server resuming a turn left waiting for approval."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import closing
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import anyio.to_thread
from core_harness import WAIT
from core_harness import Rules
from core_harness import assert_verified
from core_harness import stop_process

from hive_core import Agent
from hive_core import tool
from hive_core.approvals import Verdict
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.chat import ThinkingUpdate
from hive_core.chat import ToolCallUpdate
from hive_core.messages import Message
from hive_core.messages import Part
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.runners import TurnRecorder
from hive_core.sessions import INTERRUPTED_NOTE
from hive_core.sessions import NOT_FINISHED_TEXT
from hive_core.sessions import SCHEMA_VERSION
from hive_core.sessions import DurableHitlBridge
from hive_core.sessions import SessionInfo
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import SuspendedTurn
from hive_core.sessions import TranscriptRecorder
from hive_core.testing import Block
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_protocol import Event
from hive_protocol import HitlResponseRequest
from hive_protocol import LineTooLong
from hive_protocol import SessionStartedEvent
from hive_protocol import iter_lines

CHILD = Path(__file__).with_name("sessions_child.py")

SENT_AT: Final = 1_800_000_000.0
"""When the tests' approval waits are sent, in Unix seconds (their stores' clocks stop there)."""


def cut_short(prompt: str, calls: Message, *results: ToolResultPart | tuple[str, str]) -> list[Message]:
    """What a restore makes of a turn that died in its tool round: ``calls`` answered by ``results`` (a pair
    ``(call id, tool)`` for a call that never reported its outcome), then the interrupted note."""
    parts: list[Part] = [
        ToolResultPart(*result, NOT_FINISHED_TEXT, is_error=True) if isinstance(result, tuple) else result
        for result in results
    ]
    return [user(prompt), calls, Message("tool", parts), user(INTERRUPTED_NOTE)]


def thinking_round(
    thinking: tuple[str, str], text: tuple[str, str], *calls: ToolCallUpdate, signature: str, provider: str
) -> ScriptedRound:
    """A round that thinks in two pieces (the second signed), writes ``text`` in two pieces, then calls tools."""
    first, signed = thinking
    steps: list[ChatUpdate | Block] = [
        ThinkingUpdate(first),
        ThinkingUpdate(signed, signature=signature, provider=provider),
        *(TextUpdate(piece) for piece in text),
        *calls,
        FinishUpdate("tool_calls"),
    ]
    return ScriptedRound(steps)


def ask_about_deploys() -> Rules:
    """Rules that send ``deploy`` calls for approval and allow everything else."""
    return Rules(deploy=Verdict.ask("deploys to production", level="high"))


class Deploys:
    """The ``deploy`` tool, recording the targets it really deployed to."""

    def __init__(self) -> None:
        self.done: list[str] = []

        @tool
        def deploy(target: str) -> str:
            """Deploy."""
            self.done.append(target)
            return f"deployed {target}"

        self.tool = deploy


@tool
async def status() -> str:
    """Report the status."""
    return "all green"


def agent_with(
    rounds: Sequence[ScriptedRound], bridge: DurableHitlBridge, deploys: Deploys, policy: Any = None
) -> tuple[Agent, ScriptedChatClient]:
    client = ScriptedChatClient(rounds)
    agent = Agent(
        client,
        tools=[deploys.tool, status],
        policy=policy or ask_about_deploys(),
        approvals=bridge,
        clock=lambda: 0.0,
    )
    return agent, client


class Resumed:
    """A restarted server: its events, its tool, its model."""

    def __init__(
        self, events: list[Event], deploys: Deploys, client: ScriptedChatClient, recorder: TranscriptRecorder
    ) -> None:
        self.events = events
        self.deploys = deploys
        self.client = client
        self.recorder = recorder


async def restart_and_resume(
    store: SqliteSessionStore,
    session_id: str,
    rounds: Sequence[ScriptedRound],
    *,
    answer: HitlResponseRequest | None = None,
    now: float = SENT_AT + 1,
    policy: Any = None,
    on_started: Callable[[list[Event]], None] | None = None,
) -> Resumed:
    """What ``run --server --session-id`` does on start: re-send the waits, then read (here: ``answer``)."""
    deploys = Deploys()
    bridge = DurableHitlBridge(store, session_id, timeout=60, clock=lambda: now)
    agent, client = agent_with(rounds, bridge, deploys, policy)
    recorder = TranscriptRecorder(agent.session(store.restore(session_id)), store, session_id)
    suspended = SuspendedTurn.load(store, session_id)
    assert suspended is not None
    events: list[Event] = [SessionStartedEvent(session_id=session_id)]
    bridge.attach(events.append)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            await group.start(partial(suspended.resume, recorder, bridge, TurnRecorder(events.append)))
            if on_started is not None:
                on_started(events)
            if answer is not None:
                assert bridge.answer(answer)
    assert_verified(events, turns=1)
    assert store.restore(session_id) == recorder.session.conversation
    return Resumed(events, deploys, client, recorder)


class Child:
    """``sessions_child.py`` running as a real process; every read is bounded by ``WAIT``."""

    def __init__(self, *args: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CHILD), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
        )
        assert self.proc.stdout is not None
        self._lines: Iterator[bytes | LineTooLong] = iter_lines(self.proc.stdout)
        self.lines: list[bytes] = []
        """Every line read so far, without its newline."""

    async def read(self) -> bytes | None:
        """The next line of output, or ``None`` once it ended."""
        with anyio.fail_after(WAIT):
            line = await anyio.to_thread.run_sync(next, self._lines, None, abandon_on_cancel=True)
        if line is None:
            return None
        assert isinstance(line, bytes)
        self.lines.append(line)
        return line

    async def read_until(self, done: Callable[[list[bytes]], bool]) -> list[bytes]:
        """Read lines until ``done`` holds for the lines read so far."""
        while not done(self.lines):
            line = await self.read()
            assert line is not None, f"the child's output ended early: {self.lines!r}\n{self.stderr()}"
        return self.lines

    async def send(self, data: bytes) -> None:
        def write() -> None:
            assert self.proc.stdin is not None
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

        with anyio.fail_after(WAIT):
            await anyio.to_thread.run_sync(write, abandon_on_cancel=True)

    async def kill(self) -> int:
        """SIGKILL: no cleanup of any kind runs in the child."""
        self.proc.kill()
        return await self.wait()

    async def wait(self) -> int:
        with anyio.fail_after(WAIT):
            return await anyio.to_thread.run_sync(self.proc.wait, abandon_on_cancel=True)

    def stderr(self) -> str:
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read().decode(errors="replace")

    def close(self) -> None:
        stop_process(self.proc)


@contextmanager
def older_database(
    db: Path, project: Path, version: int, *dropped: str
) -> Generator[tuple[SqliteSessionStore, SessionInfo]]:
    """A session database set back to schema ``version`` (one session in it, the ``dropped`` tables gone), then
    opened again: the reopened store and the session. Once closed, it must be at today's version."""
    with SqliteSessionStore(db) as store:
        info = store.create(project_path=project)
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        for table in dropped:
            conn.execute(f"DROP TABLE {table}")
        conn.execute(f"PRAGMA user_version = {version}")
    with SqliteSessionStore(db) as store:
        yield store, info
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def open_store(location: str) -> SharedSessionStore:
    """The store at ``location``: a PostgreSQL URL, or a SQLite file's path."""
    if location.startswith("postgresql://"):
        from hive_core.sessions.postgres import PostgresSessionStore

        return PostgresSessionStore(location)
    return SqliteSessionStore(location)


def reopen(store: SharedSessionStore) -> SharedSessionStore:
    """A new store on the same database as ``store`` (what another process, or a restart, opens)."""
    if isinstance(store, SqliteSessionStore):
        return open_store(str(store.path))
    from hive_core.sessions.postgres import PostgresSessionStore

    assert isinstance(store, PostgresSessionStore)
    return open_store(store.url)
