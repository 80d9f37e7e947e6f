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
unreachable server, a refused login, a write a constraint refuses or any other database error raises
:class:`~hive_core.sessions.SessionStoreError`, one line naming the URL without its password.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from collections.abc import Generator
from collections.abc import Iterable
from collections.abc import Sequence
from contextlib import AbstractContextManager
from contextlib import contextmanager
from typing import Any
from typing import Final
from typing import LiteralString
from typing import Self

import msgspec
import psycopg
import psycopg_pool
from psycopg import sql
from psycopg.rows import TupleRow

from hive_core.redaction import mask_url

from .records import SessionStoreError
from .records import UnsupportedSchema
from .rows import DamagedRow
from .sql_store import Db
from .sql_store import SqlSessionStore
from .tables import POSTGRES_TYPES
from .tables import checkpoint_tables
from .tables import lease_table
from .tables import session_tables

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "PostgresSessionStore"]

_VERSION_1: Final[tuple[LiteralString, ...]] = (
    "CREATE SEQUENCE session_touches",
    *session_tables(POSTGRES_TYPES),
    lease_table(POSTGRES_TYPES),
)
"""Version 1: sessions, their logs and leases."""

_VERSION_2: Final[tuple[LiteralString, ...]] = checkpoint_tables(POSTGRES_TYPES)
"""Version 2: file checkpoints (see :mod:`hive_core.sessions.checkpoints`)."""

_VERSION_3: Final[tuple[LiteralString, ...]] = (
    """CREATE TABLE serve_sessions (
        session_id TEXT PRIMARY KEY,
        record BYTEA NOT NULL
    )""",
    """CREATE TABLE serve_events (
        session_id TEXT NOT NULL,
        position BIGINT NOT NULL,
        line BYTEA NOT NULL,
        PRIMARY KEY (session_id, position)
    )""",
    """CREATE TABLE serve_messages (
        session_id TEXT NOT NULL,
        number BIGINT NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (session_id, number)
    )""",
)
"""Version 3: the sessions, event logs and user messages of ``hive serve`` front ends that share an engine (see
:mod:`hive_cli.serve.shared_log`)."""

MIGRATIONS: Final[tuple[tuple[LiteralString, ...], ...]] = (_VERSION_1, _VERSION_2, _VERSION_3)
"""The schema's versions in order: ``MIGRATIONS[n - 1]`` takes a database from version ``n - 1`` to ``n``."""

SCHEMA_VERSION: Final = len(MIGRATIONS)
"""The schema this version writes (the highest row of ``schema_version``)."""

DEFAULT_POOL_SIZE: Final = 4
"""Connections the pool keeps at most: the caller's thread, lease renewals and a tool thread or two."""

DEFAULT_CONNECT_TIMEOUT: Final = 10.0
"""Seconds to wait for the server before a call fails."""

_Conn = psycopg.Connection[TupleRow]
_CHANNEL: Final = "hive_entries"  # NOTIFY channel of appends; the payload is the session's id
_MIGRATION_LOCK: Final = 0x68697665  # "hive": the advisory lock two migrating processes take turns on


class PostgresSessionStore(SqlSessionStore):
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
        self._owns_pool = True
        SqlSessionStore.__init__(self)
        self._opening = threading.Lock()
        self._listening = threading.Lock()
        self._listener: psycopg.Connection[TupleRow] | None = None

    # -- connection ------------------------------------------------------------------------------------------

    def _disconnect(self) -> None:
        with self._listening:
            if self._listener is not None:
                self._listener.close()
                self._listener = None
        with self._opening:
            if self._pool is not None and self._owns_pool:
                self._pool.close()
            self._pool = None

    @classmethod
    def on_pool_of(cls, store: PostgresSessionStore) -> Self:
        """Another store of ``store``'s database on its connection pool (connecting it first): with leases of its
        own, and closed without closing the pool. For a process that opens a store for each of many short jobs (a
        worker's turns) without a connection setup each."""
        other = cls(store.url, connect_timeout=store.connect_timeout, clock=store.clock)
        other._pool = store._connected()
        other._owns_pool = False
        return other

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

    def transaction(self) -> AbstractContextManager[Db]:
        """One transaction on the store's pool, for the tables other parts of hive keep in the same database
        (``?`` marks parameters); errors come out as :class:`~hive_core.sessions.SessionStoreError`."""
        return self._db()

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
        except psycopg.IntegrityError as exc:
            raise SessionStoreError(
                f"the session database refused the write ({_first_line(exc)}); nothing of it was kept",
                source=self.location,
            ) from None
        except psycopg.Error as exc:
            raise SessionStoreError(
                f"the session database failed ({_first_line(exc)})", source=self.location
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

    # -- what differs from SQLite ---------------------------------------------------------------------------

    _TOUCH = "nextval('session_touches')"
    _FOR_UPDATE = " FOR UPDATE"

    def _read(self) -> AbstractContextManager[Db]:
        return self._db()

    def _write(self) -> AbstractContextManager[Db]:
        return self._db()

    @contextmanager
    def _db(self) -> Generator[Db]:
        with self._transaction() as conn:
            yield _Marked(conn)

    def _announce(self, db: Db, session_id: str) -> None:
        # Delivered to listeners when the append commits, not before: a woken reader always finds the entry.
        db.execute("SELECT pg_notify(?, ?)", (_CHANNEL, session_id))

    def wait_for_entries(self, session_id: str, *, after: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the session to have an entry past sequence number ``after``; whether
        it has one. Listens (``LISTEN``) on a connection of its own, so a new entry wakes it at once."""
        deadline = time.monotonic() + timeout
        with self._listening:
            listener = self._listener_connection()
            while self.last_seq(session_id) <= after:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                with self._translated():
                    woken = [
                        n
                        for n in listener.notifies(timeout=remaining, stop_after=1)
                        if n.payload == session_id
                    ]
                if not woken and time.monotonic() >= deadline:
                    return self.last_seq(session_id) > after
            return True

    def _listener_connection(self) -> psycopg.Connection[TupleRow]:
        if self._listener is None or self._listener.closed:
            self._connected()  # the schema first, and one clear error when the server cannot be reached
            with self._translated():
                conn = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
                )
                conn.execute(f"LISTEN {_CHANNEL}")
            self._listener = conn
        return self._listener

    def listen(
        self,
        channel: str,
        woken: Callable[[str], None],
        stop: Callable[[], bool],
        listening: Callable[[], None] | None = None,
    ) -> None:
        """Call ``woken(payload)`` for every ``NOTIFY`` on ``channel`` until ``stop()`` (checked every second), on a
        connection of its own: for a thread that wakes the readers of the tables other parts of hive keep here.
        ``listening()`` is called once the channel is listened to: what was announced before is not heard, so a
        reader reads once more then."""
        self._connected()  # the schema first, and one clear error when the server cannot be reached
        with self._translated():
            conn = psycopg.connect(
                self.url, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
            )
        with conn, self._translated():
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
            if listening is not None:
                listening()
            while not stop():
                for notice in conn.notifies(timeout=1.0):
                    woken(notice.payload)

    def _lock_lease(self, db: Db, session_id: str) -> None:
        # Two processes taking a lease that has no row yet take turns on this lock, not on a row.
        db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"hive-lease:{session_id}",))

    def data_version(self) -> int:
        """A number that changes whenever a transaction commits on the server (a digest of PostgreSQL's current
        snapshot): what a reader following a log polls before reading again. Unlike SQLite's it also changes for
        other databases' and this connection's commits; a reader then only reads once more."""
        with self._transaction() as conn:
            row = conn.execute("SELECT pg_current_snapshot()::text").fetchone()
        assert row is not None
        return int.from_bytes(hashlib.blake2b(str(row[0]).encode(), digest_size=8).digest(), "big")


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


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class _Marked:
    """A psycopg connection as :class:`~hive_core.sessions.sql_store.Db`: the store's ``?`` become ``%s``."""

    def __init__(self, conn: _Conn) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> psycopg.Cursor[TupleRow]:
        # As bytes: the statements are the stores' own constants, which psycopg cannot see are literal.
        return self._conn.execute(sql.replace("?", "%s").encode(), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s").encode(), parameters)
