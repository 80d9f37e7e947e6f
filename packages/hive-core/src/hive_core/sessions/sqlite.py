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

A database that is not one (a stray file, a truncated copy), that this user cannot read or write, or that a newer
hive wrote raises a :class:`~hive_core.sessions.SessionStoreError` (or
:class:`~hive_core.sessions.UnsupportedSchema`) naming the file and how to move it aside: a one-line message, never
a traceback, and the file is left as it was.

Schema (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`, created on first use; version 1 lacked ``leases``,
version 2 ``file_checkpoints`` and ``file_outcomes``)::

    sessions(id TEXT PRIMARY KEY, project_path, created REAL, updated REAL, touched INTEGER, model, provider,
             status CHECK IN (active, ended, error, forked), forked_from, first_message, message_count)
    entries(session_id REFERENCES sessions ON DELETE CASCADE, seq, ts REAL, kind, payload TEXT (JSON),
            PRIMARY KEY (session_id, seq))
    leases(session_id PRIMARY KEY, token, pid, host, machine, started, since REAL, renewed REAL)
    file_checkpoints(session_id REFERENCES sessions ON DELETE CASCADE, turn, path, existed, content BLOB, size,
                     mode, made, digest, UNIQUE (session_id, turn, path))
    file_outcomes(session_id REFERENCES sessions ON DELETE CASCADE, turn, path, after, undone REAL,
                  PRIMARY KEY (session_id, turn, path))

``touched`` is a database-wide counter bumped by every write to a session: listing orders by it, so "newest
first" is exact even when two processes write within the same clock tick. ``leases`` holds who serves a session
(see :mod:`hive_core.sessions.lease`); it has no foreign key, since a lease may be taken before its session exists.
``file_checkpoints`` holds each file's state before a turn (``turn``: the seq of its ``turn_start`` entry) changed
it through hive's file tools (see :mod:`hive_core.sessions.checkpoints`), written once; ``file_outcomes`` what the
turn left there and when it was undone, apart, so that updating them never rewrites a kept file.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import threading
import time
from collections.abc import Callable
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path
from typing import Final
from typing import Literal

import msgspec

from .records import SessionStoreError
from .records import UnsupportedSchema
from .rows import DamagedRow
from .sql_store import SqlSessionStore
from .tables import SQLITE_TYPES
from .tables import checkpoint_tables
from .tables import lease_table
from .tables import session_tables

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "SCHEMA_VERSION",
    "SqliteSessionStore",
]

SCHEMA_VERSION: Final = 3
"""The schema this version writes (``PRAGMA user_version``)."""

DEFAULT_BUSY_TIMEOUT: Final = 30.0
"""Seconds a write waits for another process's transaction before giving up."""

_LEASES: Final = (lease_table(SQLITE_TYPES),)
"""What version 2 added to version 1."""

_CHECKPOINTS: Final = checkpoint_tables(SQLITE_TYPES)
"""What version 3 added to version 2."""

_UPGRADES: Final[dict[int, tuple[str, ...]]] = {1: _LEASES, 2: _CHECKPOINTS}
"""What upgrades a database from each older version to the next."""

_SCHEMA: Final = (*session_tables(SQLITE_TYPES), *_LEASES, *_CHECKPOINTS)

# Result codes (the primary code, the low byte of an extended one) that are the file's fault, not hive's.
_NOT_A_DATABASE: Final = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_NO_ACCESS: Final = frozenset({3, 8, 10, 13, 14, 23})  # PERM, READONLY, IOERR, FULL, CANTOPEN, AUTH
_BUSY: Final = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
# hive's statements are fixed, so these mean the tables are not the ones it made: a table or column dropped or
# renamed, a constraint or type changed.
_NOT_OURS: Final = frozenset({1, 19, 20})  # SQLITE_ERROR, SQLITE_CONSTRAINT, SQLITE_MISMATCH
_TABLES: Final[dict[str, frozenset[str]]] = {
    "sessions": frozenset(
        {"id", "project_path", "created", "updated", "touched", "model", "provider", "status", "forked_from"}
        | {"first_message", "message_count"}
    ),
    "entries": frozenset({"session_id", "seq", "ts", "kind", "payload"}),
    "leases": frozenset({"session_id", "token", "pid", "host", "machine", "started", "since", "renewed"}),
}
"""Every table of the current schema with its columns: what an opened database must have."""
_HEADER: Final = b"SQLite format 3\x00"


class SqliteSessionStore(SqlSessionStore):
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
        SqlSessionStore.__init__(self)

    _TOUCH = "(SELECT COALESCE(MAX(touched), 0) + 1 FROM sessions)"

    # -- connection ------------------------------------------------------------------------------------------

    def _disconnect(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise self._unusable(
                    f"its directory cannot be made ({exc.strerror or exc})", access=True
                ) from None
            if not _has_sqlite_header(self.path):
                # Refused before SQLite opens it: opening may delete a write-ahead log beside it.
                raise self._unusable("it is not a session database hive can read (file is not a database)")
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                try:
                    conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                    _refuse_newer(conn)  # before WAL mode, which would rewrite the file's header
                    _use_wal(conn, self.busy_timeout)
                    conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                    conn.execute("PRAGMA foreign_keys = ON")
                    _migrate(conn)
                    _check_tables(conn)
                except BaseException:
                    conn.close()
                    raise
            except (
                _NewerSchema
            ) as newer:  # worded once closed: the advice names a write-ahead log only if left
                raise UnsupportedSchema(
                    f"the session database was written by a newer hive (schema {newer.version}; this hive reads "
                    f"up to {SCHEMA_VERSION}): upgrade hive, or move it aside and hive starts a new one: "
                    f"{self.move_aside_command()}",
                    source=str(self.path),
                ) from None
            self._conn = conn
        return self._conn

    @contextmanager
    def _read(self) -> Generator[sqlite3.Connection]:
        with self._lock, self._translated():
            yield self._connection()

    @contextmanager
    def _write(self) -> Generator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock up front: a deferred transaction that reads first and then writes can
        # fail with SQLITE_BUSY at the upgrade, which the busy timeout does not retry.
        with self._lock, self._translated():
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextmanager
    def _translated(self) -> Generator[None]:
        """SQLite's errors about the file, as the one-line :class:`SessionStoreError` that says what to do."""
        try:
            yield
        except (DamagedRow, msgspec.ValidationError) as exc:
            raise self._unusable(f"it is not a session database hive can read ({exc})") from None
        except sqlite3.DatabaseError as exc:
            code = getattr(exc, "sqlite_errorcode", -1) & 0xFF
            if code in _NOT_OURS and not isinstance(exc, sqlite3.ProgrammingError):
                raise self._unusable(f"it is not a session database hive can read ({exc})") from None
            if code in _NOT_A_DATABASE:
                # Closed first: closing removes this connection's own write-ahead log, which the advice would
                # otherwise name.
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
                raise self._unusable(f"it is not a session database hive can read ({exc})") from None
            if code in _NO_ACCESS:
                raise self._unusable(f"it cannot be opened or written ({exc})", access=True) from None
            if code in _BUSY:
                raise SessionStoreError(
                    f"the session database stayed locked by another process for {self.busy_timeout:g} s; "
                    "try again",
                    source=str(self.path),
                ) from None
            raise

    def _unusable(self, problem: str, *, access: bool = False) -> SessionStoreError:
        if access:
            advice = "check that it and its directory are readable and writable here, and the disk has room"
        else:
            advice = f"move it aside and hive starts a new one: {self.move_aside_command()}"
        return SessionStoreError(f"{problem}; {advice}", source=str(self.path))

    def move_aside_command(self) -> str:
        """The shell command that moves the database (and its write-ahead log, when there is one) aside."""
        path = str(self.path)
        moves = [f"mv {shlex.quote(path)} {shlex.quote(path + '.bak')}"]
        if Path(path + "-wal").exists():
            moves.append(f"mv {shlex.quote(path + '-wal')} {shlex.quote(path + '.bak-wal')}")
        return " && ".join(moves)

    def schema_version(self) -> int:
        """The schema version of the database (``PRAGMA user_version``; creating or upgrading it first)."""
        with self._read() as conn:
            (version,) = conn.execute("PRAGMA user_version").fetchone()
            return int(version)

    def data_version(self) -> int:
        """A number that changes whenever another connection commits a write to the database (SQLite's
        ``data_version``): what a reader following a log polls before reading again."""
        with self._read() as conn:
            (version,) = conn.execute("PRAGMA data_version").fetchone()
            return int(version)


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


def _has_sqlite_header(path: Path) -> bool:
    """Whether the file is missing, empty (SQLite makes a database of it) or starts as SQLite databases do."""
    try:
        with path.open("rb") as file:
            head = file.read(len(_HEADER))
    except OSError:  # missing, a directory, no permission: SQLite makes it, or says what is wrong better
        return True
    return not head or head == _HEADER


class _NewerSchema(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _refuse_newer(conn: sqlite3.Connection) -> None:
    (version,) = conn.execute("PRAGMA user_version").fetchone()
    if version > SCHEMA_VERSION:
        raise _NewerSchema(version)


def _check_tables(conn: sqlite3.Connection) -> None:
    """Raise :class:`DamagedRow` when a table of the schema, or a column of one, is missing."""
    for table, columns in _TABLES.items():
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if not present:
            raise DamagedRow(f"its {table} table is missing")
        if missing := sorted(columns - present):
            raise DamagedRow(f"its {table} table has no {', '.join(missing)} column")


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        _refuse_newer(conn)  # again, inside the transaction: another process may have just migrated it
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version < SCHEMA_VERSION:
            steps = (
                _SCHEMA if version == 0 else [s for v in range(version, SCHEMA_VERSION) for s in _UPGRADES[v]]
            )
            for statement in steps:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
