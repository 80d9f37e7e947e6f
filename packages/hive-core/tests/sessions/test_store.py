"""The SQLite store: where it lives, its schema, and every operation on sessions and their logs."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from core_harness import WAIT

from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.sessions import SCHEMA_VERSION
from hive_core.sessions import TITLE_CHARS
from hive_core.sessions import InvalidSessionId
from hive_core.sessions import SessionExists
from hive_core.sessions import SessionInfo
from hive_core.sessions import SessionNotFound
from hive_core.sessions import SessionStore
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import UnsupportedSchema
from hive_core.sessions import cut_title
from hive_core.turn_request import TurnRequest
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent


class Ticks:
    """A clock that moves one second per reading."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        self.now += 1
        return self.now


@pytest.fixture
def ticking(home: Path) -> Iterator[SqliteSessionStore]:
    with SqliteSessionStore(home / "ticking.db", clock=Ticks()) as opened:
        yield opened


def row(store: SharedSessionStore, session_id: str) -> SessionInfo:
    found = store.get(session_id)
    assert found is not None
    return found


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path)


def assistant(text: str) -> Message:
    return Message("assistant", [TextPart(text)])


# -- where and how ----------------------------------------------------------------------------------------


def test_the_database_is_created_on_first_use(home: Path, project: Path) -> None:
    with SqliteSessionStore(home / "sessions.db") as store:
        assert not home.exists()  # opening a store touches nothing
        store.create(project_path=project)
        assert (home / "sessions.db").is_file()
    with raw(home / "sessions.db") as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"sessions", "entries"} <= tables


def test_a_store_waits_for_a_busy_database_and_is_a_session_store(
    sqlite_store: SqliteSessionStore, project: Path
) -> None:
    store = sqlite_store
    assert isinstance(store, SessionStore)
    store.create(project_path=project)
    conn = store._connection()  # pyright: ignore[reportPrivateUsage]
    assert conn.execute("PRAGMA busy_timeout").fetchone() == (30_000,)
    assert conn.execute("PRAGMA foreign_keys").fetchone() == (1,)


def test_opening_a_fresh_database_waits_for_another_process_creating_it(home: Path, project: Path) -> None:
    # While another connection holds the write lock of a fresh database (as a store creating its schema does),
    # switching to WAL fails at once unless retried.
    home.mkdir()
    other = sqlite3.connect(home / "sessions.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE elsewhere (x)")
    release = threading.Timer(0.2, lambda: other.execute("COMMIT"))
    release.start()
    try:
        with SqliteSessionStore(home / "sessions.db", busy_timeout=WAIT) as store:
            store.create(project_path=project)
    finally:
        release.join()
        other.close()


def test_a_database_from_a_newer_hive_is_refused(home: Path, project: Path) -> None:
    home.mkdir()
    with raw(home / "sessions.db") as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with (
        SqliteSessionStore(home / "sessions.db") as store,
        pytest.raises(UnsupportedSchema, match="newer hive"),
    ):
        store.create(project_path=project)


def test_reopening_keeps_everything(home: Path, project: Path) -> None:
    with SqliteSessionStore(home / "s.db") as store:
        info = store.create(project_path=project, model="m1", provider="p1")
        store.append(info.id, user("hello"))
    with SqliteSessionStore(home / "s.db") as store:
        reopened = row(store, info.id)
        assert reopened == msgspec.structs.replace(
            info, updated=reopened.updated, message_count=1, first_message="hello"
        )
        assert store.restore(info.id) == [user("hello")]


# -- sessions ---------------------------------------------------------------------------------------------


def test_create_generates_a_sortable_id_and_records_the_session(
    ticking: SqliteSessionStore, project: Path
) -> None:
    info = ticking.create(project_path=project / "." / "sub" / "..", model="gpt", provider="openai")
    assert info.project_path == str(project.resolve())
    assert (info.model, info.provider, info.status, info.forked_from) == ("gpt", "openai", "active", None)
    assert (info.message_count, info.first_message) == (0, None)
    assert info.created == info.updated == 1_800_000_001.0
    assert info.id.startswith(f"{1_800_000_001_000:x}-")
    assert ticking.get(info.id) == info
    assert ticking.get("nope") is None


def test_explicit_ids_are_validated_and_unique(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project, session_id="server-1")
    assert info.id == "server-1"
    with pytest.raises(SessionExists, match="'server-1' already exists"):
        store.create(project_path=project, session_id="server-1")
    assert store.create(project_path=project, session_id="server-1", exist_ok=True) == info
    with pytest.raises(InvalidSessionId):
        store.create(project_path=project, session_id="bad id")
    assert [s.id for s in store.list_sessions()] == ["server-1"]


def test_list_is_newest_activity_first_with_project_filter_and_limit(
    store: SharedSessionStore, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    a = store.create(project_path=one, session_id="a")
    b = store.create(project_path=two, session_id="b")
    c = store.create(project_path=one, session_id="c")
    assert [s.id for s in store.list_sessions()] == ["c", "b", "a"]
    store.append(a.id, user("back to a"))  # activity moves a session to the front
    assert [s.id for s in store.list_sessions()] == ["a", "c", "b"]
    assert [s.id for s in store.list_sessions(project_path=one)] == ["a", "c"]
    assert [s.id for s in store.list_sessions(project_path=str(two))] == ["b"]
    assert [s.id for s in store.list_sessions(limit=2)] == ["a", "c"]
    assert store.list_sessions(limit=0) == []
    assert store.list_sessions(project_path=tmp_path / "none") == []
    with pytest.raises(ValueError, match="negative"):
        store.list_sessions(limit=-1)
    assert store.latest(one) == store.get("a")
    store.append(c.id, user("now c"))
    assert store.latest(one) == store.get("c")
    assert store.latest(two) == store.get(b.id)
    assert store.latest(tmp_path / "none") is None


def test_delete_removes_the_session_and_its_log(
    home: Path, sqlite_store: SqliteSessionStore, project: Path
) -> None:
    store = sqlite_store
    keep = store.create(project_path=project, session_id="keep")
    gone = store.create(project_path=project, session_id="gone")
    for info in (keep, gone):
        store.append(info.id, user(f"hi {info.id}"))
        store.append(info.id, assistant("hello"))
    assert store.delete("gone") is True
    assert store.get("gone") is None
    assert store.delete("gone") is False
    with pytest.raises(SessionNotFound, match="no session with id 'gone'"):
        store.restore("gone")
    with raw(home / "sessions.db") as conn:
        assert conn.execute("SELECT DISTINCT session_id FROM entries").fetchall() == [("keep",)]
    assert store.restore("keep") == [user("hi keep"), assistant("hello")]


def test_fork_copies_the_log_and_marks_the_original(ticking: SqliteSessionStore, project: Path) -> None:
    source = ticking.create(project_path=project, model="m", provider="p", session_id="src")
    ticking.append("src", TurnRequest(content="first question"))
    ticking.append("src", user("first question"))
    ticking.append("src", assistant("first answer"))
    ticking.append("src", TurnEndEvent(stop_reason="completed"))
    fork = ticking.fork("src")
    assert fork.id != "src"
    assert (fork.forked_from, fork.project_path, fork.model, fork.provider) == (
        "src",
        source.project_path,
        "m",
        "p",
    )
    assert (fork.status, fork.message_count, fork.first_message) == ("active", 2, "first question")
    assert row(ticking, "src").status == "forked"
    assert [(e.seq, e.kind, e.payload) for e in ticking.entries(fork.id)] == [
        (e.seq, e.kind, e.payload) for e in ticking.entries("src")
    ]
    assert ticking.restore(fork.id) == ticking.restore("src")
    assert ticking.list_sessions()[0].id == fork.id  # -c continues the fork

    # The copies are independent.
    ticking.append(fork.id, user("only in the fork"))
    assert ticking.restore("src") == [user("first question"), assistant("first answer")]
    assert ticking.restore(fork.id)[-1] == user("only in the fork")


def test_fork_up_to_an_entry_and_with_an_explicit_id(store: SharedSessionStore, project: Path) -> None:
    store.create(project_path=project, session_id="src")
    store.append("src", user("one"))
    seq = store.append("src", assistant("two"))
    store.append("src", user("three"))
    fork = store.fork("src", upto=seq, new_id="early")
    assert fork.id == "early"
    assert fork.message_count == 2
    assert store.restore("early") == [user("one"), assistant("two")]
    with pytest.raises(SessionExists):
        store.fork("src", new_id="early")
    with pytest.raises(SessionNotFound):
        store.fork("missing")
    with pytest.raises(InvalidSessionId):
        store.fork("src", new_id="no/slashes")


def test_set_status(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    store.set_status(info.id, "ended")
    assert row(store, info.id).status == "ended"
    store.set_status(info.id, "error")
    assert row(store, info.id).status == "error"
    with pytest.raises(SessionNotFound):
        store.set_status("missing", "ended")


# -- the log ----------------------------------------------------------------------------------------------


def test_append_numbers_entries_and_keeps_their_payloads(ticking: SqliteSessionStore, project: Path) -> None:
    info = ticking.create(project_path=project)
    call = ToolCallPart("c1", "read", '{"path": "a"}', {"path": "a"})
    payloads = [
        TurnRequest(content="read a"),
        user("read a"),
        Message("assistant", [call]),
        ToolEndEvent(tool="read", success=True, output="A", call_id="c1"),
        Message("tool", [ToolResultPart("c1", "read", "A")]),
        TurnEndEvent(stop_reason="completed", input_tokens=1, output_tokens=2, total_tokens=3),
    ]
    assert [ticking.append(info.id, payload) for payload in payloads] == [1, 2, 3, 4, 5, 6]
    entries = ticking.entries(info.id)
    assert [e.payload for e in entries] == payloads
    assert [e.kind for e in entries] == [
        "turn_start",
        "message",
        "message",
        "tool_end",
        "message",
        "turn_end",
    ]
    assert [e.ts for e in entries] == sorted(e.ts for e in entries)
    after = row(ticking, info.id)
    assert after.updated == entries[-1].ts
    assert (after.message_count, after.first_message) == (2, "read a")


def test_appending_to_a_missing_session_fails(store: SharedSessionStore) -> None:
    with pytest.raises(SessionNotFound):
        store.append("missing", user("x"))
    with pytest.raises(SessionNotFound):
        store.entries("missing")
    with pytest.raises(SessionNotFound):
        store.pending_approvals("missing")


def test_the_title_is_the_first_thing_the_user_wrote(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    store.append(info.id, TurnRequest(content="  fix the bug  ", working_path="/w"))
    store.append(info.id, TurnRequest(content="something else"))
    assert row(store, info.id).first_message == "fix the bug"
    long = store.create(project_path=project)
    store.append(long.id, user("x" * 2000))
    assert row(store, long.id).first_message == "x" * (TITLE_CHARS - 3) + "..."
    assert cut_title("x" * TITLE_CHARS) == "x" * TITLE_CHARS


def test_unreadable_entries_are_skipped(home: Path, sqlite_store: SqliteSessionStore, project: Path) -> None:
    store = sqlite_store
    info = store.create(project_path=project, session_id="s")
    store.append("s", user("kept"))
    with raw(home / "sessions.db") as conn:
        conn.execute("INSERT INTO entries VALUES ('s', 2, 0, 'message', '{not json')")
        conn.execute("INSERT INTO entries VALUES ('s', 3, 0, 'from_the_future', '{}')")
        conn.execute(
            "INSERT INTO entries VALUES ('s', 4, 0, 'message', '{\"role\": \"robot\", \"parts\": []}')"
        )
    store.append("s", assistant("also kept"))
    entries = store.entries(info.id)
    assert [(e.seq, e.kind, e.payload is None) for e in entries] == [
        (1, "message", False),
        (2, "message", True),
        (3, "from_the_future", True),
        (4, "message", True),
        (5, "message", False),
    ]
    assert store.restore("s") == [user("kept"), assistant("also kept")]
