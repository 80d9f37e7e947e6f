"""Real processes: two writers on one database at once, and SIGKILL in the middle of a turn."""

from __future__ import annotations

import signal
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from core_postgres import PostgresServer
from sessions_harness import Child
from sessions_harness import cut_short
from sessions_harness import open_store
from sessions_harness import restart_and_resume

from hive_core import Agent
from hive_core import ChatOptions
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.sessions import INTERRUPTED_NOTE
from hive_core.sessions import RESUMED_NOTE
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions import replay
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import SessionStartedEvent
from hive_protocol import ToolEndEvent
from hive_protocol import decode_event
from hive_protocol import encode

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def database(home: Path) -> Path:
    """The session database the child processes share, in the temporary hive home."""
    return home / "sessions.db"


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_database(request: pytest.FixtureRequest, database: Path) -> str:
    """Where the writers meet: the SQLite file, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(database)
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.new_database()


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        (result,) = conn.execute("PRAGMA integrity_check").fetchone()
    return str(result)


def seen(lines: Sequence[bytes], marker: bytes) -> bool:
    return any(marker in line for line in lines)


async def test_two_processes_write_to_one_database_at_once_without_losing_a_row(
    shared_database: str, project: Path
) -> None:
    count = 500
    children = [Child("append", shared_database, "shared", str(count), cwd=project) for _ in range(2)]
    try:
        # Both open the fresh database (and race to create its schema and the shared session) before "go".
        for child in children:
            assert await child.read() == b"ready", children[0].stderr() + children[1].stderr()
        for child in children:
            await child.send(b"go\n")
        own_ids: list[str] = []
        for child in children:
            done = await child.read()
            assert done is not None
            assert done.startswith(b"done ")
            own_ids.append(done.removeprefix(b"done ").decode())
        assert [await child.wait() for child in children] == [0, 0]
    finally:
        for child in children:
            child.close()

    if not shared_database.startswith("postgresql://"):
        assert integrity(Path(shared_database)) == "ok"
    with open_store(shared_database) as store:
        shared = store.entries("shared")
        assert [e.seq for e in shared] == list(range(1, 2 * count + 1))
        texts = [e.payload.text for e in shared if isinstance(e.payload, Message)]
        assert len(texts) == 2 * count
        for own in own_ids:
            # Every row of each writer is there, in the order it wrote them.
            assert [t for t in texts if t.startswith(f"{own} ")] == [f"{own} {i}" for i in range(count)]
            assert store.restore(own) == [user(f"own {i}") for i in range(count)]
        info = store.get("shared")
        assert info is not None
        assert info.message_count == 2 * count
        assert len(store.list_sessions()) == 3


async def test_kill_9_while_a_tool_runs_keeps_everything_written_and_marks_the_turn(
    database: Path, project: Path
) -> None:
    child = Child("tool", str(database), "crash-1", cwd=project)
    try:
        # Wait until the quick call's outcome reached the client (so it is written) and the stuck call runs.
        await child.read_until(lambda lines: seen(lines, b"STUCK") and seen(lines, b'"tool_end"'))
        assert await child.kill() == -signal.SIGKILL
    finally:
        child.close()

    assert integrity(database) == "ok"
    with SqliteSessionStore(database) as store:
        calls = Message(
            "assistant",
            [
                ThinkingPart("let me look", "sig-1", "scripted"),
                TextPart("Checking both."),
                ToolCallPart("q1", "quick", '{"note": "a"}', {"note": "a"}),
                ToolCallPart("s1", "stuck", '{"note": "b"}', {"note": "b"}),
            ],
        )
        expected = cut_short(
            "check both", calls, ToolResultPart("q1", "quick", "quick saw a"), ("s1", "stuck")
        )
        assert store.restore("crash-1") == expected
        entries = store.entries("crash-1")
        assert [e.kind for e in entries] == [
            "turn_start",
            "message",
            "model_request",
            "message",
            "tool",
            "tool_end",
        ]
        assert replay(entries).last_turn == "interrupted"

        # Resumed in a new process: the model is sent the whole conversation, the note included.
        def check(messages: Sequence[Message], options: ChatOptions) -> None:
            assert list(messages) == [*expected, user("did it work?")]

        client = ScriptedChatClient([ScriptedRound(reply("Partly.").updates, check=check)])
        agent = Agent(client, policy=ALLOW_ALL)
        recorder = TranscriptRecorder(agent.session(store.restore("crash-1")), store, "crash-1")
        await collect_turn(recorder, "did it work?")
        client.assert_consumed()
        assert store.restore("crash-1") == recorder.session.conversation
        assert replay(store.entries("crash-1")).last_turn == "ended"


async def test_kill_9_while_the_model_streams_keeps_the_finished_rounds(
    database: Path, project: Path
) -> None:
    child = Child("stream", str(database), "crash-2", cwd=project)
    try:
        await child.read_until(lambda lines: seen(lines, b'"partial"'))
        assert await child.kill() == -signal.SIGKILL
    finally:
        child.close()

    with SqliteSessionStore(database) as store:
        restored = store.restore("crash-2")
    # The streaming round was not written yet; everything before it was.
    assert [m.role for m in restored] == ["user", "assistant", "tool", "user"]
    assert restored[1].tool_calls[0].id == "q1"
    assert restored[2] == Message("tool", [ToolResultPart("q1", "quick", "quick saw a")])
    assert restored[3] == user(INTERRUPTED_NOTE)


async def test_an_approval_wait_survives_kill_9_and_the_next_server_asks_again_with_the_same_id(
    database: Path, project: Path
) -> None:
    child = Child("approval", str(database), "srv-1", cwd=project)
    try:
        assert decode_event(await child.read() or b"") == SessionStartedEvent(
            session_id="srv-1", protocol_version=1
        )
        await child.send(encode(message("ship it")))
        lines = await child.read_until(lambda lines: seen(lines, b'"hitl_request"'))
        assert await child.kill() == -signal.SIGKILL
    finally:
        child.close()
    sent_line = lines[-1]
    sent = decode_event(sent_line)
    assert isinstance(sent, HitlRequestEvent)
    assert sent.id == "hitl-d1"

    with SqliteSessionStore(database) as store:
        (pending,) = store.pending_approvals("srv-1")
        assert pending.request == sent
        assert pending.call == ToolCallPart("d1", "deploy", '{"target":"prod"}', {"target": "prod"})
        assert pending.timeout == 60
        assert replay(store.entries("srv-1")).last_turn == "suspended"

        # The restarted server: restore, re-send before reading, answer, finish the turn.
        def check(messages: Sequence[Message], options: ChatOptions) -> None:
            assert messages[-2] == Message("tool", [ToolResultPart("d1", "deploy", "deployed prod")])
            assert messages[-1] == user(RESUMED_NOTE)

        def started(events: list[Event]) -> None:
            resent = of_type(events, HitlRequestEvent)
            assert [encode(e) for e in resent] == [sent_line + b"\n"]  # the very same bytes

        resumed = await restart_and_resume(
            store,
            "srv-1",
            [ScriptedRound(reply("Shipped.").updates, check=check)],
            answer=HitlResponseRequest(approved=True, id="hitl-d1"),
            now=time.time(),
            on_started=started,
        )
        events = resumed.events[1:]  # after session_started
        assert kinds(events) == ["tool_start", "hitl_request", "tool_end", "text_delta", "turn_end"]
        assert of_type(events, ToolEndEvent)[0].output == "deployed prod"
        resumed.client.assert_consumed()
        assert store.pending_approvals("srv-1") == []
