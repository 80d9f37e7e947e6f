"""The PostgreSQL session store: sessions in a database that any number of hive processes, on any machines, share.

Chosen by a ``postgresql://`` URL (libpq's connection URL; ``postgres://`` too). It holds what the SQLite store
holds (sessions, their append-only logs, leases, file checkpoints) and keeps the same contract, so every caller
works on either.

Calls are synchronous, through a :class:`psycopg_pool.ConnectionPool`, like the SQLite store's: the contract's
callers (the recorder among them) write on the event loop as "short local writes", and a round trip to a nearby
server is short too. An async store would change that contract for every caller; the pool's connections are
shared by the threads that write (a lease's renewal thread, a tool thread) without a lock of hive's.

Each write is one transaction. Appending to a session locks the session's row first (the ``UPDATE`` of its
``updated`` time), so two writers appending to one session, in this process or another machine's, take turns and
the sequence numbers stay gap-free; writers of different sessions do not wait for each other. ``touched`` comes from
a sequence, so listing is newest first across machines whatever their clocks say.

Schema versions are rows of ``schema_version``: the store applies the migrations from the database's version up to
:data:`SCHEMA_VERSION` in one transaction, under an advisory lock (two processes starting at once do not both
migrate), and refuses a database a newer hive wrote with :class:`~hive_core.sessions.UnsupportedSchema`. An
unreachable server or a refused login raises :class:`~hive_core.sessions.SessionStoreError` naming the URL
without its password.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import uuid
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterable
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Final
from typing import LiteralString

import msgspec
import psycopg
import psycopg_pool
from psycopg import sql
from psycopg.rows import TupleRow

from hive_core._closing import Closing
from hive_core.redaction import mask_url
from hive_core.session_id import new_session_id

from .checkpoints import FileChange
from .checkpoints import FileState
from .ids import validate_session_id
from .lease import LEASE_EXPIRY
from .lease import LeaseHolder
from .lease import SessionLease
from .leasing import LeasingStore
from .leasing import refuse_live_holder
from .records import Entry
from .records import EntryPayload
from .records import SessionExists
from .records import SessionInfo
from .records import SessionNotFound
from .records import SessionStatus
from .records import SessionStoreError
from .records import UnsupportedSchema
from .records import entry_kind
from .rows import DamagedRow
from .rows import counts_as_message
from .rows import entry_from_row
from .rows import holder_from_row
from .rows import info_from_row
from .rows import project_key
from .rows import summarise
from .rows import title_of
from .store import SessionStore

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PostgresSessionStore"]

_VERSION_1: Final[tuple[LiteralString, ...]] = (
    "CREATE SEQUENCE session_touches",
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project_path TEXT NOT NULL,
        created DOUBLE PRECISION NOT NULL,
        updated DOUBLE PRECISION NOT NULL,
        touched BIGINT NOT NULL DEFAULT nextval('session_touches'),
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
        seq BIGINT NOT NULL,
        ts DOUBLE PRECISION NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    )""",
    """CREATE TABLE leases (
        session_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        machine TEXT NOT NULL,
        started TEXT NOT NULL,
        since DOUBLE PRECISION NOT NULL,
        renewed DOUBLE PRECISION NOT NULL
    )""",
)
"""Version 1: sessions, their logs and leases."""

_VERSION_2: Final[tuple[LiteralString, ...]] = (
    """CREATE TABLE file_checkpoints (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn BIGINT NOT NULL,
        path TEXT NOT NULL,
        existed BOOLEAN NOT NULL,
        content BYTEA,
        size BIGINT NOT NULL,
        mode INTEGER,
        made TEXT,
        digest TEXT NOT NULL,
        PRIMARY KEY (session_id, turn, path)
    )""",
    """CREATE TABLE file_outcomes (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn BIGINT NOT NULL,
        path TEXT NOT NULL,
        after TEXT,
        undone DOUBLE PRECISION,
        PRIMARY KEY (session_id, turn, path)
    )""",
)
"""Version 2: file checkpoints (see :mod:`hive_core.sessions.checkpoints`)."""

MIGRATIONS: Final[tuple[tuple[LiteralString, ...], ...]] = (_VERSION_1, _VERSION_2)
"""The schema's versions in order: ``MIGRATIONS[n - 1]`` takes a database from version ``n - 1`` to ``n``."""

SCHEMA_VERSION: Final = len(MIGRATIONS)
"""The schema this version writes (the highest row of ``schema_version``)."""

DEFAULT_POOL_SIZE: Final = 4
"""Connections the pool keeps at most: the caller's thread, lease renewals and a tool thread or two."""

DEFAULT_CONNECT_TIMEOUT: Final = 10.0
"""Seconds to wait for the server before a call fails."""

_Conn = psycopg.Connection[TupleRow]
_MIGRATION_LOCK: Final = 0x68697665  # "hive": the advisory lock two migrating processes take turns on
_COLUMNS: Final = sql.SQL(
    "id, project_path, created, updated, model, provider, status, forked_from, first_message, message_count"
)


class PostgresSessionStore(Closing, LeasingStore, SessionStore):
    """A :class:`~hive_core.sessions.SessionStore` in a PostgreSQL database, shared by every process that opens it.

    Nothing connects until the first call; the schema is created or migrated then.
    """

    def __init__(
        self,
        url: str,
        *,
        pool_size: int = DEFAULT_POOL_SIZE,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        """The database's URL (print :attr:`location`, which hides the password)."""
        self.location = mask_url(url)
        """The URL with its password hidden: what messages name."""
        self.clock = clock
        """Wall clock for the stored times (Unix seconds)."""
        self.connect_timeout = connect_timeout
        """Seconds a call waits for the server."""
        self._pool_size = pool_size
        self._pool: psycopg_pool.ConnectionPool[_Conn] | None = None
        LeasingStore.__init__(self)
        self._opening = threading.Lock()

    # -- connection ------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Give up the leases this store took, and close the pool (a later call opens it again)."""
        self._release_leases()
        with self._opening:
            if self._pool is not None:
                self._pool.close()
                self._pool = None

    def _connected(self) -> psycopg_pool.ConnectionPool[_Conn]:
        with self._opening:
            return self._pool or self._open()

    def _open(self) -> psycopg_pool.ConnectionPool[_Conn]:
        # One direct connection first: an unreachable server or a refused login fails at once, with libpq's
        # reason, instead of the pool retrying in the background until its timeout.
        try:
            first = psycopg.connect(self.url, connect_timeout=max(1, round(self.connect_timeout)))
        except psycopg.OperationalError as exc:
            raise self._unreachable(exc) from None
        with first:
            _migrate(first)
        pool: psycopg_pool.ConnectionPool[_Conn] = psycopg_pool.ConnectionPool(
            self.url,
            connection_class=psycopg.Connection,
            min_size=1,
            max_size=self._pool_size,
            kwargs={"connect_timeout": max(1, round(self.connect_timeout))},
            # A connection the server dropped (a restart, an idle timeout) is replaced before it is used.
            check=psycopg_pool.ConnectionPool.check_connection,
            timeout=self.connect_timeout,
            open=False,
            name="hive-sessions",
        )
        pool.open()
        self._pool = pool
        return pool

    @contextmanager
    def _transaction(self) -> Generator[_Conn]:
        """One transaction on a pooled connection, committed when the block ends, rolled back on an error."""
        with self._translated(), self._connected().connection() as conn:
            yield conn

    @contextmanager
    def _translated(self) -> Generator[None]:
        """psycopg's and the pool's errors as the one-line :class:`SessionStoreError` that says what to do."""
        try:
            yield
        except _NewerSchema as newer:
            raise UnsupportedSchema(
                f"the session database was written by a newer hive (schema {newer.version}; this hive reads up "
                f"to {SCHEMA_VERSION}): upgrade hive, or use another database",
                source=self.location,
            ) from None
        except psycopg_pool.PoolTimeout as exc:
            raise self._unreachable(exc) from None
        except psycopg.OperationalError as exc:
            raise SessionStoreError(
                f"the session database cannot be used ({_first_line(exc)}); check that the server runs and the "
                "URL is right",
                source=self.location,
            ) from None
        except (DamagedRow, msgspec.ValidationError, psycopg.ProgrammingError, psycopg.DataError) as exc:
            raise SessionStoreError(
                f"it is not a session database hive can read ({_first_line(exc)})",
                source=self.location,
            ) from None

    def _unreachable(self, exc: Exception) -> SessionStoreError:
        return SessionStoreError(
            f"the session database cannot be reached ({_first_line(exc)}); check that the server runs and the "
            "URL is right",
            source=self.location,
        )

    def schema_version(self) -> int:
        """The schema version of the database (connecting, and migrating it, first)."""
        with self._transaction() as conn:
            return _version(conn)

    # -- leases ----------------------------------------------------------------------------------------------

    def lease(self, session_id: str, *, expiry: float = LEASE_EXPIRY) -> SessionLease:
        """Take the lease of ``session_id`` for this process, or raise :class:`SessionInUse` (see
        :meth:`SqliteSessionStore.lease <hive_core.sessions.SqliteSessionStore.lease>`)."""
        now = self.clock()
        me = LeaseHolder.current(now)
        token = uuid.uuid4().hex
        with self._transaction() as conn:
            # Two processes taking a lease that has no row yet take turns on this lock, not on a row.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"hive-lease:{session_id}",))
            row = conn.execute(
                "SELECT pid, host, machine, started, since, renewed FROM leases WHERE session_id = %s",
                (session_id,),
            ).fetchone()
            refuse_live_holder(session_id, row, now, expiry)
            conn.execute(
                "INSERT INTO leases (session_id, token, pid, host, machine, started, since, renewed) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (session_id) DO UPDATE SET "
                "token = excluded.token, pid = excluded.pid, host = excluded.host, machine = excluded.machine, "
                "started = excluded.started, since = excluded.since, renewed = excluded.renewed",
                (session_id, token, me.pid, me.host, me.machine, me.started, me.since, me.renewed),
            )
        return self._hand_out(session_id, token, expiry)

    _PARAMETER = "%s"

    def _lease_write(self, statement: str, parameters: tuple[object, ...]) -> int:
        with self._transaction() as conn:
            # As bytes: the statement is one of leasing's own constants, not text psycopg can prove literal.
            return conn.execute(statement.encode(), parameters).rowcount

    def _lease_clock(self) -> float:
        return self.clock()

    def served(self) -> frozenset[str]:
        """The sessions whose lease is held by a process that still runs (:meth:`LeaseHolder.live`)."""
        now = self.clock()
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT session_id, pid, host, machine, started, since, renewed FROM leases"
            ).fetchall()
        return frozenset(str(row[0]) for row in rows if holder_from_row(row[1:]).live(now))

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
        with self._transaction() as conn:
            inserted = conn.execute(
                "INSERT INTO sessions (id, project_path, created, updated, model, provider) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (session_id, project_key(project_path), now, now, model, provider),
            ).rowcount
            if not inserted and not exist_ok:
                raise SessionExists(session_id=session_id)
            found = _select(conn, session_id)
        assert found is not None
        return found

    def get(self, session_id: str) -> SessionInfo | None:
        """The session's row, or ``None``."""
        with self._transaction() as conn:
            return _select(conn, session_id)

    def list_sessions(
        self, *, project_path: str | os.PathLike[str] | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions by most recent activity first, optionally of one project only, at most ``limit``."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        query = sql.SQL("SELECT {} FROM sessions WHERE (%s::text IS NULL OR project_path = %s) ").format(
            _COLUMNS
        )
        query += sql.SQL("ORDER BY touched DESC LIMIT %s")
        key = None if project_path is None else project_key(project_path)
        with self._transaction() as conn:
            rows = conn.execute(query, (key, key, limit)).fetchall()
        return [info_from_row(row) for row in rows]

    def latest(self, project_path: str | os.PathLike[str]) -> SessionInfo | None:
        """The project's most recently active session, or ``None``."""
        found = self.list_sessions(project_path=project_path, limit=1)
        return found[0] if found else None

    def delete(self, session_id: str) -> bool:
        """Remove the session, its log and its checkpoints; ``False`` when there was no such session."""
        with self._transaction() as conn:
            return conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,)).rowcount > 0

    def fork(self, session_id: str, *, upto: int | None = None, new_id: str | None = None) -> SessionInfo:
        """Copy the log (up to sequence number ``upto``) into a new session; the original becomes ``forked``."""
        now = self.clock()
        fork_id = new_session_id(now) if new_id is None else validate_session_id(new_id)
        last = -1 if upto is None else upto
        with self._transaction() as conn:
            # The source's row is locked first, so no append lands between the copy and the status change.
            source = _select(conn, session_id, lock=True)
            if source is None:
                raise SessionNotFound(session_id=session_id)
            inserted = conn.execute(
                "INSERT INTO sessions (id, project_path, created, updated, model, provider, forked_from) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING",
                (fork_id, source.project_path, now, now, source.model, source.provider, session_id),
            ).rowcount
            if not inserted:
                raise SessionExists(session_id=fork_id)
            conn.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) "
                "SELECT %s, seq, ts, kind, payload FROM entries WHERE session_id = %s AND (%s < 0 OR seq <= %s)",
                (fork_id, session_id, last, last),
            )
            conn.execute(
                "INSERT INTO file_checkpoints (session_id, turn, path, existed, content, size, mode, made, digest) "
                "SELECT %s, turn, path, existed, content, size, mode, made, digest FROM file_checkpoints "
                "WHERE session_id = %s AND (%s < 0 OR turn <= %s)",
                (fork_id, session_id, last, last),
            )
            conn.execute(
                "INSERT INTO file_outcomes (session_id, turn, path, after, undone) "
                "SELECT %s, turn, path, after, undone FROM file_outcomes "
                "WHERE session_id = %s AND (%s < 0 OR turn <= %s)",
                (fork_id, session_id, last, last),
            )
            count, first = summarise(_entries(conn, fork_id))
            conn.execute(
                "UPDATE sessions SET message_count = %s, first_message = %s WHERE id = %s",
                (count, first, fork_id),
            )
            conn.execute("UPDATE sessions SET status = 'forked' WHERE id = %s", (session_id,))
            forked = _select(conn, fork_id)
        assert forked is not None
        return forked

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status."""
        with self._transaction() as conn:
            if not conn.execute(
                "UPDATE sessions SET status = %s WHERE id = %s", (status, session_id)
            ).rowcount:
                raise SessionNotFound(session_id=session_id)

    # -- the log ---------------------------------------------------------------------------------------------

    def append(self, session_id: str, payload: EntryPayload) -> int:
        """Append one entry in its own transaction, committed when this returns; returns its sequence number."""
        kind = entry_kind(payload)
        data = msgspec.json.encode(payload).decode()
        now = self.clock()
        with self._transaction() as conn:
            # The UPDATE locks the session's row until the commit: another writer of this session waits here, and
            # then (a new statement, a new snapshot) sees this entry when it numbers its own.
            updated = conn.execute(
                "UPDATE sessions SET updated = %s, touched = nextval('session_touches'), "
                "message_count = message_count + %s, first_message = COALESCE(first_message, %s) WHERE id = %s",
                (now, int(counts_as_message(payload)), title_of(payload), session_id),
            )
            if not updated.rowcount:
                raise SessionNotFound(session_id=session_id)
            row = conn.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) "
                "SELECT %s, COALESCE(MAX(seq), 0) + 1, %s, %s, %s FROM entries WHERE session_id = %s RETURNING seq",
                (session_id, now, kind, data, session_id),
            ).fetchone()
        assert row is not None
        return int(row[0])

    def entries(self, session_id: str, *, after: int = 0) -> list[Entry]:
        """The session's log in order (only the entries past sequence number ``after``, when given)."""
        with self._transaction() as conn:
            if _select(conn, session_id) is None:
                raise SessionNotFound(session_id=session_id)
            return _entries(conn, session_id, after)

    def data_version(self) -> int:
        """A number that changes whenever a transaction commits on the server (a digest of PostgreSQL's current
        snapshot): what a reader following a log polls before reading again. Unlike SQLite's it also changes for
        other databases' and this connection's commits; a reader then only reads once more."""
        with self._transaction() as conn:
            row = conn.execute("SELECT pg_current_snapshot()::text").fetchone()
        assert row is not None
        return int.from_bytes(hashlib.blake2b(str(row[0]).encode(), digest_size=8).digest(), "big")

    # -- checkpoints -----------------------------------------------------------------------------------------

    def keep_file(self, session_id: str, path: str, read: Callable[[], FileState]) -> int:
        """Keep ``read()`` as ``path``'s state before the session's current turn, unless that turn already kept
        one (``read`` is then not called); return the turn (0 before any turn was recorded). The session's row
        is locked meanwhile, so two processes never both keep a state."""
        with self._transaction() as conn:
            if _select(conn, session_id, lock=True) is None:
                raise SessionNotFound(session_id=session_id)
            row = conn.execute(
                "SELECT seq FROM entries WHERE session_id = %s AND kind = 'turn_start' ORDER BY seq DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            turn = 0 if row is None else int(row[0])
            kept = conn.execute(
                "SELECT 1 FROM file_checkpoints WHERE session_id = %s AND turn = %s AND path = %s",
                (session_id, turn, path),
            ).fetchone()
            if kept is None:
                state = read()
                conn.execute(
                    "INSERT INTO file_checkpoints (session_id, turn, path, existed, content, size, mode, made, "
                    "digest) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        session_id,
                        turn,
                        path,
                        state.existed,
                        state.content,
                        state.size,
                        state.mode,
                        state.made,
                        state.digest,
                    ),
                )
        return turn

    def file_left(self, session_id: str, turn: int, path: str, digest: str | None) -> None:
        """Record the digest of what the turn's latest change left at ``path`` (``""``: no file)."""
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO file_outcomes (session_id, turn, path, after) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (session_id, turn, path) DO UPDATE SET after = excluded.after",
                (session_id, turn, path, digest),
            )

    def file_changes(self, session_id: str) -> list[FileChange]:
        """The session's kept file states, by turn then path."""
        with self._transaction() as conn:
            rows = conn.execute(
                "SELECT c.turn, c.path, c.existed, c.content, c.size, c.mode, c.made, c.digest, o.after, o.undone "
                "FROM file_checkpoints c LEFT JOIN file_outcomes o "
                "ON o.session_id = c.session_id AND o.turn = c.turn AND o.path = c.path "
                "WHERE c.session_id = %s ORDER BY c.turn, c.path",
                (session_id,),
            ).fetchall()
        return [_change(row) for row in rows]

    def mark_undone(self, session_id: str, changes: Iterable[FileChange]) -> None:
        """Record that ``changes`` were undone (restored), in one transaction."""
        now = self.clock()
        with self._transaction() as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO file_outcomes (session_id, turn, path, after, undone) VALUES (%s, %s, %s, %s, %s) "
                "ON CONFLICT (session_id, turn, path) DO UPDATE SET undone = excluded.undone",
                [(session_id, change.turn, change.path, change.after, now) for change in changes],
            )


class _NewerSchema(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _version(conn: _Conn) -> int:
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version").fetchone()
    assert row is not None
    return int(row[0])


def _migrate(conn: _Conn) -> None:
    """Bring the database to :data:`SCHEMA_VERSION` in one transaction, or raise :class:`_NewerSchema`."""
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, applied TIMESTAMPTZ)"
        )
        version = _version(conn)
        if version > SCHEMA_VERSION:
            raise _NewerSchema(version)
        for number in range(version + 1, SCHEMA_VERSION + 1):
            for statement in MIGRATIONS[number - 1]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version, applied) VALUES (%s, now())", (number,))


def _select(conn: _Conn, session_id: str, *, lock: bool = False) -> SessionInfo | None:
    query = sql.SQL("SELECT {} FROM sessions WHERE id = %s").format(_COLUMNS)
    if lock:
        query += sql.SQL(" FOR UPDATE")
    row = conn.execute(query, (session_id,)).fetchone()
    return None if row is None else info_from_row(row)


def _entries(conn: _Conn, session_id: str, after: int = 0) -> list[Entry]:
    rows = conn.execute(
        "SELECT seq, ts, kind, payload FROM entries WHERE session_id = %s AND seq > %s ORDER BY seq",
        (session_id, after),
    ).fetchall()
    return [entry_from_row(*row) for row in rows]


def _change(row: Sequence[object]) -> FileChange:
    turn, path, existed, content, size, mode, made, digest, after, undone = row
    return msgspec.convert(
        {
            "turn": turn,
            "path": path,
            "before": {
                "existed": existed,
                "content": content,
                "size": size,
                "mode": mode,
                "made": made,
                "digest": digest,
            },
            "after": after,
            "undone": undone is not None,
        },
        FileChange,
        builtin_types=(bytes,),
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
