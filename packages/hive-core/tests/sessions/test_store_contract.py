"""What both session stores promise alike, shown on SQLite and on a real PostgreSQL: two writers of one session,
leases across store instances, change detection, and PostgreSQL's own migrations and errors."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest
from core_harness import WAIT
from core_postgres import PostgresServer
from sessions_harness import reopen

from hive_core.messages import Message
from hive_core.messages import user
from hive_core.sessions import SessionInUse
from hive_core.sessions import SessionStoreError
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import UnsupportedSchema
from hive_core.sessions.checkpoints import FileState
from hive_core.sessions.postgres import MIGRATIONS
from hive_core.sessions.postgres import SCHEMA_VERSION
from hive_core.sessions.postgres import PostgresSessionStore

WRITES = 40


def test_two_stores_appending_to_one_session_number_its_entries_without_gaps(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    seqs: list[int] = []
    start = threading.Barrier(2)

    def write(writer: SharedSessionStore, name: str) -> None:
        start.wait()
        seqs.extend(writer.append(info.id, user(f"{name} {n}")) for n in range(WRITES))

    with reopen(store) as other:
        threads = [
            threading.Thread(target=write, args=(store, "a")),
            threading.Thread(target=write, args=(other, "b")),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(seqs) == list(range(1, 2 * WRITES + 1))
    entries = store.entries(info.id)
    assert [e.seq for e in entries] == list(range(1, 2 * WRITES + 1))
    texts = [e.payload.text for e in entries if isinstance(e.payload, Message)]
    for name in ("a", "b"):  # each writer's entries stay in the order it wrote them
        assert [t for t in texts if t.startswith(name)] == [f"{name} {n}" for n in range(WRITES)]
    found = store.get(info.id)
    assert found is not None
    assert found.message_count == 2 * WRITES


def test_a_lease_is_refused_to_another_store_until_released(store: SharedSessionStore) -> None:
    lease = store.lease("s1")
    with reopen(store) as other:
        with pytest.raises(SessionInUse, match="in use by process"):
            other.lease("s1")
        assert "s1" in other.served()
        lease.release()
        assert "s1" not in other.served()
        other.lease("s1").release()


def test_another_stores_write_changes_the_data_version(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    with reopen(store) as other:
        seen = store.data_version()
        other.append(info.id, user("from elsewhere"))
        assert store.data_version() != seen
    assert [e.seq for e in store.entries(info.id)] == [1]


def test_a_session_is_found_by_its_project_from_another_store(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    store.append(info.id, user("where am I"))
    with reopen(store) as other:
        latest = other.latest(project)
        assert latest is not None
        assert latest.id == info.id
        assert latest.first_message == "where am I"


def test_keeping_a_file_twice_in_one_turn_keeps_the_first_state(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    first = FileState(existed=True, content=b"\x00one", size=4, mode=0o644, digest="d1")
    assert store.keep_file(info.id, "/f", lambda: first) == 0
    assert store.keep_file(info.id, "/f", lambda: pytest.fail("read again")) == 0
    store.file_left(info.id, 0, "/f", "d2")
    [change] = store.file_changes(info.id)
    assert change.before == first
    assert change.after == "d2"
    assert not change.undone
    store.mark_undone(info.id, [change])
    assert store.file_changes(info.id)[0].undone


# -- PostgreSQL only ---------------------------------------------------------------------------------------


def _tables(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {str(row[0]) for row in rows}


def _versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [int(row[0]) for row in conn.execute("SELECT version FROM schema_version ORDER BY version")]


def test_an_empty_database_is_migrated_to_the_current_schema(postgres: PostgresServer, project: Path) -> None:
    url = postgres.new_database()
    assert _tables(url) == set()
    with PostgresSessionStore(url) as store:
        assert store.schema_version() == SCHEMA_VERSION
        store.create(project_path=project)
    assert _versions(url) == list(range(1, SCHEMA_VERSION + 1))
    assert {
        "schema_version",
        "sessions",
        "entries",
        "leases",
        "file_checkpoints",
        "file_outcomes",
    } <= _tables(url)


def test_a_version_1_database_is_migrated_and_keeps_its_sessions(
    postgres: PostgresServer, project: Path
) -> None:
    url = postgres.new_database()
    with psycopg.connect(url) as conn:  # version 1, as it was made: its own statements
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied TIMESTAMPTZ)")
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (1, now())")
        conn.execute(
            "INSERT INTO sessions (id, project_path, created, updated) VALUES ('old', %s, 1, 1)",
            (str(project.resolve()),),
        )
        conn.execute(
            "INSERT INTO entries VALUES ('old', 1, 1, 'message', %s)", ('{"role":"user","parts":[]}',)
        )
    assert "file_checkpoints" not in _tables(url)
    with PostgresSessionStore(url) as store:
        assert [e.seq for e in store.entries("old")] == [1]
        assert store.append("old", user("again")) == 2
        store.keep_file("old", "/f", lambda: FileState(existed=False))
        assert store.schema_version() == SCHEMA_VERSION
    assert _versions(url) == list(range(1, SCHEMA_VERSION + 1))


def test_a_database_from_a_newer_hive_is_refused(postgres: PostgresServer, project: Path) -> None:
    url = postgres.new_database()
    with PostgresSessionStore(url) as store:
        store.create(project_path=project)
    with psycopg.connect(url) as conn:
        conn.execute("INSERT INTO schema_version VALUES (%s, now())", (SCHEMA_VERSION + 1,))
    with PostgresSessionStore(url) as store, pytest.raises(UnsupportedSchema, match="newer hive") as caught:
        store.list_sessions()
    assert f"schema {SCHEMA_VERSION + 1}" in str(caught.value)


def test_an_unreachable_server_is_one_clear_error_without_the_password(postgres: PostgresServer) -> None:
    url = postgres.url("postgres", password="s3cret-pw").replace(str(postgres.port), "1")
    with (
        PostgresSessionStore(url, connect_timeout=5) as store,
        pytest.raises(SessionStoreError, match=r"cannot be reached|cannot be used") as caught,
    ):
        store.list_sessions()
    assert "s3cret-pw" not in str(caught.value)
    assert "postgresql://***@127.0.0.1:1/postgres" in str(caught.value)


def test_a_sqlite_store_never_imports_psycopg(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from hive_core.sessions import SqliteSessionStore\n"
        f"with SqliteSessionStore({str(tmp_path / 's.db')!r}) as s:\n"
        f"    s.create(project_path={str(tmp_path)!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith('psycopg')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_reader_waiting_for_entries_wakes_when_another_store_appends(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    assert store.wait_for_entries(info.id, after=0, timeout=0.2) is False  # nothing came
    woke: list[bool] = []
    with reopen(store) as other:
        waiting = threading.Thread(
            target=lambda: woke.append(store.wait_for_entries(info.id, after=0, timeout=WAIT))
        )
        waiting.start()
        other.append(info.id, user("news"))
        waiting.join()
    assert woke == [True]
    assert store.wait_for_entries(info.id, after=0, timeout=0) is True  # already there: no wait
    assert [e.seq for e in store.entries(info.id)] == [1]


def test_an_append_on_postgresql_notifies_listeners_with_the_session(
    postgres: PostgresServer, project: Path
) -> None:
    url = postgres.new_database()
    with PostgresSessionStore(url) as store, psycopg.connect(url, autocommit=True) as listener:
        info = store.create(project_path=project)
        listener.execute("LISTEN hive_entries")
        store.append(info.id, user("ring"))
        [notice] = list(listener.notifies(timeout=WAIT, stop_after=1))
    assert notice.payload == info.id


def test_a_listener_says_when_it_listens_and_hears_what_is_announced_after(
    postgres: PostgresServer, project: Path
) -> None:
    url = postgres.new_database()
    heard: list[str] = []
    listening, rung, stopped = threading.Event(), threading.Event(), threading.Event()

    def woken(payload: str) -> None:
        heard.append(payload)
        rung.set()

    with PostgresSessionStore(url) as store:
        info = store.create(project_path=project)
        store.append(info.id, user("before anyone listened"))  # announced to no one
        thread = threading.Thread(
            target=store.listen, args=("hive_entries", woken, stopped.is_set, listening.set)
        )
        thread.start()
        assert listening.wait(WAIT)
        assert heard == []
        store.append(info.id, user("after"))
        assert rung.wait(WAIT)
        stopped.set()
        thread.join(WAIT)
    assert heard == [info.id]
    assert not thread.is_alive()


def test_a_store_on_another_ones_pool_has_its_own_leases_and_leaves_the_pool_open(
    postgres: PostgresServer, project: Path
) -> None:
    url = postgres.new_database()
    with PostgresSessionStore(url) as base:
        info = base.create(project_path=project)
        other = PostgresSessionStore.on_pool_of(base)
        other.lease(info.id)
        other.close()  # gives its lease up, and not the pool
        base.lease(info.id)
        base.append(info.id, user("still served"))
        assert [entry.seq for entry in base.entries(info.id)] == [1]


def test_a_write_a_constraint_refuses_is_one_clear_error_and_keeps_nothing(
    postgres: PostgresServer, project: Path
) -> None:
    url = postgres.new_database().replace("hive@", "hive:s3cret-pw@")  # trust auth ignores the password
    with PostgresSessionStore(url) as store:
        info = store.create(project_path=project)
        store.append(info.id, user("kept"))
        with psycopg.connect(url) as conn:  # a rule of the database's owner that hive's writes break
            conn.execute("ALTER TABLE entries ADD CONSTRAINT short_payloads CHECK (length(payload) < 100)")
        with pytest.raises(SessionStoreError) as caught:
            store.append(info.id, user("refused " * 20))
        assert [entry.seq for entry in store.entries(info.id)] == [1]
        after = store.get(info.id)
        assert after is not None
        assert after.message_count == 1
    said = str(caught.value)
    assert said.count("\n") == 0
    assert "short_payloads" in said
    assert "postgresql://***@127.0.0.1" in said
    assert "s3cret-pw" not in said
