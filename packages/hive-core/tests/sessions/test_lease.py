"""Session leases: one process serves a session at a time; a dead or silent holder gives the session up."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Generator
from contextlib import closing
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import msgspec
import pytest
from core_harness import stop_process
from sessions_harness import older_database

from hive_core.sessions import LEASE_EXPIRY
from hive_core.sessions import LeaseHolder
from hive_core.sessions import SessionInUse
from hive_core.sessions import SqliteSessionStore

T = TypeVar("T")

WAIT = 20.0
"""Seconds any wait may take before the test fails (a bound, never a synchronisation)."""

_HOLD = """
import sys
from hive_core.sessions import SqliteSessionStore
store = SqliteSessionStore(sys.argv[1])
store.lease(sys.argv[2])
print("held", flush=True)
sys.stdin.read()
"""


def wait_until(predicate: Callable[[], T], what: str) -> T:
    deadline = time.monotonic() + WAIT
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)
    return value


@contextmanager
def holder(db: Path, session_id: str) -> Generator[subprocess.Popen[str]]:
    """Another process holding the lease of ``session_id``."""
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db), session_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "held\n"
        yield process
    finally:
        stop_process(process)


@pytest.fixture
def store(sqlite_store: SqliteSessionStore) -> SqliteSessionStore:
    """These tests read and plant the SQLite file's lease rows; the store contract suite covers PostgreSQL's."""
    return sqlite_store


def raw_row(db: Path, session_id: str) -> tuple[object, ...] | None:
    with closing(sqlite3.connect(db)) as conn:
        row: tuple[object, ...] | None = conn.execute(
            "SELECT token, pid, host, machine, started, since, renewed FROM leases WHERE session_id = ?",
            (session_id,),
        ).fetchone()
    return row


def plant(db: Path, session_id: str, held: LeaseHolder) -> None:
    """Write a lease row as another holder would have."""
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute(
            "INSERT OR REPLACE INTO leases VALUES (?, 'planted', ?, ?, ?, ?, ?, ?)",
            (session_id, held.pid, held.host, held.machine, held.started, held.since, held.renewed),
        )


def test_a_second_lease_is_refused_with_who_holds_it_and_granted_after_release(
    store: SqliteSessionStore,
) -> None:
    first = store.lease("s1")
    with SqliteSessionStore(store.path) as other:
        with pytest.raises(SessionInUse) as refused:
            other.lease("s1")
        assert (refused.value.session_id, refused.value.pid, refused.value.host) == (
            "s1",
            os.getpid(),
            socket.gethostname(),
        )
        message = str(refused.value)
        assert message.startswith(
            f"session 's1' is in use by process {os.getpid()} on {socket.gethostname()} since "
        )
        assert "wait for it to end" in message
        other.lease("s2")  # another session is free
        first.release()
        assert first.released
        second = other.lease("s1")
        assert not second.released
    assert raw_row(store.path, "s1") is None  # closing the other store gave its leases up


def test_closing_the_store_gives_its_leases_up(store: SqliteSessionStore) -> None:
    store.lease("s1")
    store.close()
    assert raw_row(store.path, "s1") is None
    with SqliteSessionStore(store.path) as other:
        other.lease("s1")


def test_a_lease_held_by_another_live_process_is_refused_and_taken_over_after_kill_9(
    store: SqliteSessionStore,
) -> None:
    with holder(store.path, "busy") as process:
        with pytest.raises(SessionInUse, match=f"in use by process {process.pid} "):
            store.lease("busy")
        process.kill()
        process.wait(WAIT)
        lease = store.lease("busy")
    row = raw_row(store.path, "busy")
    assert row is not None
    assert (row[0], row[1]) == (lease.token, os.getpid())


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="zombies are read from /proc")
def test_a_holder_killed_but_not_yet_reaped_counts_as_dead(store: SqliteSessionStore) -> None:
    with holder(store.path, "zombie") as process:
        process.kill()  # not waited for: the process stays a zombie until the context ends

        def zombie() -> bool:
            return Path(f"/proc/{process.pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"

        wait_until(zombie, "the killed holder to become a zombie")
        store.lease("zombie")


def test_a_reused_process_id_does_not_keep_the_lease(store: SqliteSessionStore) -> None:
    store.get("x")  # creates the database
    me = LeaseHolder.current(time.time())
    if not me.started:
        pytest.skip("this system does not tell when a process started")
    # This very process, but "started" at another time: the process that held the lease is gone.
    plant(store.path, "reused", msgspec.structs.replace(me, started=str(int(me.started) - 1)))
    store.lease("reused")
    plant(store.path, "same", me)  # the very same process: live
    with pytest.raises(SessionInUse):
        store.lease("same")


def test_a_holder_on_another_machine_keeps_the_lease_while_it_renews_and_loses_it_after_the_expiry(
    home: Path,
) -> None:
    now = [1_000_000.0]
    with SqliteSessionStore(home / "sessions.db", clock=lambda: now[0]) as store:
        store.get("x")
        elsewhere = LeaseHolder(
            pid=1, host="far", machine="far/boot/ns", started="1", since=now[0] - 500, renewed=now[0] - 10
        )
        plant(store.path, "remote", elsewhere)
        with pytest.raises(SessionInUse, match="in use by process 1 on far since "):
            store.lease("remote")
        now[0] += LEASE_EXPIRY
        store.lease("remote")


def test_a_lease_an_engine_declared_lost_is_broken_at_once(home: Path) -> None:
    now = [1_000_000.0]
    with SqliteSessionStore(home / "sessions.db", clock=lambda: now[0]) as store:
        store.get("x")
        elsewhere = LeaseHolder(
            pid=1, host="far", machine="far/boot/ns", started="1", since=now[0] - 5, renewed=now[0] - 1
        )
        plant(store.path, "lost", elsewhere)
        with pytest.raises(SessionInUse):
            store.lease("lost")
        assert store.break_lease("lost") is True
        store.lease("lost")  # well before the expiry
        assert store.break_lease("never-leased") is False


def test_a_held_lease_is_renewed_and_notices_when_it_was_taken(store: SqliteSessionStore) -> None:
    lease = store.lease("renewed", expiry=0.3)  # renewed every 0.1 s
    first = raw_row(store.path, "renewed")
    assert first is not None

    def renewed() -> bool:
        row = raw_row(store.path, "renewed")
        return row is not None and float(row[6]) > float(first[6])  # type: ignore[arg-type]

    wait_until(renewed, "a renewal")
    with closing(sqlite3.connect(store.path, isolation_level=None)) as conn:
        conn.execute("UPDATE leases SET token = 'thief' WHERE session_id = 'renewed'")
    wait_until(lambda: lease.lost, "the lease to notice it was taken")
    lease.release()
    row = raw_row(store.path, "renewed")
    assert row is not None
    assert row[0] == "thief"  # giving up a lost lease leaves the new holder's alone


def test_a_version_1_database_gains_the_leases_table(home: Path, project: Path) -> None:
    with older_database(home / "sessions.db", project, 1, "leases") as (store, info):
        store.lease(info.id)
        assert store.get(info.id) == info
