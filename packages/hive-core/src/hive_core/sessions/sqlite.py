"""The SQLite session store: one database file, at the path it is given, shared by every ``hive`` process.

Durability and concurrency come from SQLite itself: the database runs in WAL mode, and every write is one short
``BEGIN IMMEDIATE`` transaction, committed before the call returns. A process killed at any point loses at most
the write it was making; another process writing at the same moment waits for the lock (up to ``busy_timeout``
seconds) instead of failing. Readers never block writers. With the default ``synchronous="NORMAL"`` a commit is
durable against the process dying but not against the machine losing power (the last commits may then be rolled
back, never corrupted); ``synchronous="FULL"`` syncs every commit to disk, at a few milliseconds a write.

Calls are synchronous. A write is one small transaction on a local file (about a tenth of a millisecond with
``NORMAL``), so the recorder makes them directly on the event loop rather than paying a thread hop per event;
the connection is guarded by a lock in case a tool thread records too.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, created on first use)::

    sessions(id TEXT PRIMARY KEY, project_path, created REAL, updated REAL, touched INTEGER, model, provider,
             status CHECK IN (active, ended, error, forked), forked_from, first_message, message_count)
    entries(session_id REFERENCES sessions ON DELETE CASCADE, seq, ts REAL, kind, payload TEXT (JSON),
            PRIMARY KEY (session_id, seq))

``touched`` is a database-wide counter bumped by every write to a session: listing orders by it, so "newest
first" is exact even when two processes write within the same clock tick.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Generator, Iterable
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Final, Literal

import msgspec

from hive_core.messages import Message
from hive_core.session_id import new_session_id
from hive_core.turn_request import TurnRequest

from .ids import validate_session_id
from .records import (
    Entry,
    EntryPayload,
    SessionExists,
    SessionInfo,
    SessionNotFound,
    SessionStatus,
    UnsupportedSchema,
    cut_title,
    decode_payload,
    entry_kind,
)
from .store import SessionStore

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "SCHEMA_VERSION",
    "SqliteSessionStore",
]

SCHEMA_VERSION: Final = 1
"""The schema this version writes (``PRAGMA user_version``)."""

DEFAULT_BUSY_TIMEOUT: Final = 30.0
"""Seconds a write waits for another process's transaction before giving up."""

_SCHEMA: Final = (
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project_path TEXT NOT NULL,
        created REAL NOT NULL,
        updated REAL NOT NULL,
        touched INTEGER NOT NULL,
        model TEXT,
        provider TEXT,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended', 'error', 'forked')),
        forked_from TEXT,
        first_message TEXT,
        message_count INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX sessions_by_touch ON sessions (touched)",
    "CREATE INDEX sessions_by_project ON sessions (project_path, touched)",
    """CREATE TABLE entries (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        ts REAL NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID""",
)

_COLUMNS: Final = (
    "id, project_path, created, updated, model, provider, status, forked_from, first_message, message_count"
)
_NEXT_TOUCH: Final = "(SELECT COALESCE(MAX(touched), 0) + 1 FROM sessions)"


class SqliteSessionStore(SessionStore):
    """A :class:`~hive_core.sessions.SessionStore` in one SQLite database (WAL), safe across processes.

    Nothing touches the disk until the first call; the directory, the database and its schema are created then.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
        synchronous: Literal["NORMAL", "FULL"] = "NORMAL",
        clock: Callable[[], float] = time.time,
    ) -> None:
        if synchronous not in ("NORMAL", "FULL"):
            raise ValueError(f"synchronous must be 'NORMAL' or 'FULL', got {synchronous!r}")
        self.path = Path(path)
        """The database file."""
        self.busy_timeout = busy_timeout
        """Seconds a write waits for another process's lock."""
        self.synchronous: Literal["NORMAL", "FULL"] = synchronous
        """SQLite's ``synchronous`` setting: ``FULL`` also survives power loss, at a disk sync per write."""
        self.clock = clock
        """Wall clock for the stored times (Unix seconds)."""
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    # -- connection ------------------------------------------------------------------------------------------

    def __enter__(self) -> SqliteSessionStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (a later call opens it again)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                _use_wal(conn, self.busy_timeout)
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                conn.execute("PRAGMA foreign_keys = ON")
                _migrate(conn)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        return self._conn

    @contextmanager
    def _read(self) -> Generator[sqlite3.Connection]:
        with self._lock:
            yield self._connection()

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front: a deferred transaction that reads first and then writes can
        # fail with SQLITE_BUSY at the upgrade, which the busy timeout does not retry.
        with self._lock:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- sessions --------------------------------------------------------------------------------------------

    def create(
        self,
        *,
        project_path: str | os.PathLike[str],
        model: str | None = None,
        provider: str | None = None,
        session_id: str | None = None,
        exist_ok: bool = False,
    ) -> SessionInfo:
        """Start a session; see :meth:`SessionStore.create <hive_core.sessions.SessionStore.create>`."""
        now = self.clock()
        session_id = new_session_id(now) if session_id is None else validate_session_id(session_id)
        with self._write() as conn:
            found = _select(conn, session_id)
            if found is not None:
                if exist_ok:
                    return found
                raise SessionExists(session_id=session_id)
            conn.execute(
                f"INSERT INTO sessions (id, project_path, created, updated, touched, model, provider) "
                f"VALUES (?, ?, ?, ?, {_NEXT_TOUCH}, ?, ?)",
                (session_id, _project(project_path), now, now, model, provider),
            )
            created = _select(conn, session_id)
        assert created is not None
        return created

    def get(self, session_id: str) -> SessionInfo | None:
        """The session's row, or ``None``."""
        with self._read() as conn:
            return _select(conn, session_id)

    def list_sessions(
        self, *, project_path: str | os.PathLike[str] | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions by most recent activity first, optionally of one project only, at most ``limit``."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        where, params = (
            ("", ()) if project_path is None else ("WHERE project_path = ?", (_project(project_path),))
        )
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY touched DESC LIMIT ?",
                (*params, -1 if limit is None else limit),
            ).fetchall()
        return [_info(row) for row in rows]

    def latest(self, project_path: str | os.PathLike[str]) -> SessionInfo | None:
        """The project's most recently active session, or ``None``."""
        found = self.list_sessions(project_path=project_path, limit=1)
        return found[0] if found else None

    def delete(self, session_id: str) -> bool:
        """Remove the session and its log; ``False`` when there was no such session."""
        with self._write() as conn:
            conn.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def fork(self, session_id: str, *, upto: int | None = None, new_id: str | None = None) -> SessionInfo:
        """Copy the log (up to sequence number ``upto``) into a new session; the original becomes ``forked``."""
        now = self.clock()
        fork_id = new_session_id(now) if new_id is None else validate_session_id(new_id)
        with self._write() as conn:
            source = _select(conn, session_id)
            if source is None:
                raise SessionNotFound(session_id=session_id)
            if _select(conn, fork_id) is not None:
                raise SessionExists(session_id=fork_id)
            last = -1 if upto is None else upto
            conn.execute(
                f"INSERT INTO sessions (id, project_path, created, updated, touched, model, provider, forked_from) "
                f"VALUES (?, ?, ?, ?, {_NEXT_TOUCH}, ?, ?, ?)",
                (fork_id, source.project_path, now, now, source.model, source.provider, session_id),
            )
            conn.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) "
                "SELECT ?, seq, ts, kind, payload FROM entries "
                "WHERE session_id = ? AND (? < 0 OR seq <= ?) ORDER BY seq",
                (fork_id, session_id, last, last),
            )
            count, first = _summarise(_entries(conn, fork_id))
            conn.execute(
                "UPDATE sessions SET message_count = ?, first_message = ? WHERE id = ?",
                (count, first, fork_id),
            )
            conn.execute("UPDATE sessions SET status = 'forked' WHERE id = ?", (session_id,))
            forked = _select(conn, fork_id)
        assert forked is not None
        return forked

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status."""
        with self._write() as conn:
            if (
                conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id)).rowcount
                == 0
            ):
                raise SessionNotFound(session_id=session_id)

    # -- the log ---------------------------------------------------------------------------------------------

    def append(self, session_id: str, payload: EntryPayload) -> int:
        """Append one entry in its own transaction, committed when this returns; returns its sequence number."""
        kind = entry_kind(payload)
        data = msgspec.json.encode(payload).decode()
        counted = int(isinstance(payload, Message) and payload.role in ("user", "assistant"))
        title = _title(payload)
        now = self.clock()
        with self._write() as conn:
            updated = conn.execute(
                f"UPDATE sessions SET updated = ?, touched = {_NEXT_TOUCH}, message_count = message_count + ?, "
                "first_message = COALESCE(first_message, ?) WHERE id = ?",
                (now, counted, title, session_id),
            )
            if updated.rowcount == 0:
                raise SessionNotFound(session_id=session_id)
            (seq,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM entries WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) VALUES (?, ?, ?, ?, ?)",
                (session_id, seq, now, kind, data),
            )
        return int(seq)

    def entries(self, session_id: str) -> list[Entry]:
        """The session's log in order."""
        with self._read() as conn:
            if _select(conn, session_id) is None:
                raise SessionNotFound(session_id=session_id)
            return _entries(conn, session_id)


def _use_wal(conn: sqlite3.Connection, busy_timeout: float) -> None:
    # Switching a fresh database to WAL can fail at once with "database is locked" while another process
    # switches it too: SQLite's busy handler does not cover that step, so it is retried here within the timeout.
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise UnsupportedSchema(
                f"the session database was written by a newer hive (schema {version}; this hive reads up to "
                f"{SCHEMA_VERSION})"
            )
        if version == 0:
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _project(path: str | os.PathLike[str]) -> str:
    return str(Path(path).expanduser().resolve())


def _select(conn: sqlite3.Connection, session_id: str) -> SessionInfo | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else _info(row)


def _info(row: tuple[object, ...]) -> SessionInfo:
    return msgspec.convert(
        dict(
            zip(
                (
                    "id",
                    "project_path",
                    "created",
                    "updated",
                    "model",
                    "provider",
                    "status",
                    "forked_from",
                    "first_message",
                    "message_count",
                ),
                row,
                strict=True,
            )
        ),
        SessionInfo,
    )


def _entries(conn: sqlite3.Connection, session_id: str) -> list[Entry]:
    rows: Iterable[tuple[int, float, str, str]] = conn.execute(
        "SELECT seq, ts, kind, payload FROM entries WHERE session_id = ? ORDER BY seq", (session_id,)
    )
    return [Entry(seq, ts, kind, decode_payload(kind, data)) for seq, ts, kind, data in rows]


def _title(payload: EntryPayload) -> str | None:
    if isinstance(payload, TurnRequest):
        text = payload.content
    elif isinstance(payload, Message) and payload.role == "user":
        text = payload.text
    else:
        return None
    return cut_title(text.strip()) or None


def _summarise(entries: list[Entry]) -> tuple[int, str | None]:
    count = 0
    first: str | None = None
    for entry in entries:
        payload = entry.payload
        if payload is None:
            continue
        if isinstance(payload, Message) and payload.role in ("user", "assistant"):
            count += 1
        if first is None:
            first = _title(payload)
    return count, first
