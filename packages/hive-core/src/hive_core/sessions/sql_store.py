"""What both of hive's session stores do alike, in SQL that SQLite and PostgreSQL both run.

:class:`SqlSessionStore` holds every operation of the contract (sessions, the log, leases, checkpoints) over a
DB-API connection that a subclass opens: its ``_read()`` and ``_write()`` give one inside a read or a write
transaction, with ``?`` marking parameters. A subclass says what differs: how ``touched`` is numbered, and how a
transaction locks what it is about to change (SQLite's write transaction locks the whole file; PostgreSQL locks the
session's row, and takes an advisory lock for a lease that has no row yet).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any
from typing import ClassVar
from typing import Protocol
from typing import Unpack

import msgspec

from hive_core._closing import Closing
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
from .records import entry_kind
from .rows import counts_as_message
from .rows import entry_from_row
from .rows import holder_from_row
from .rows import info_from_row
from .rows import project_key
from .rows import summarise
from .rows import title_of
from .store import NewSession
from .store import SessionStore

__all__ = ["Cursor", "Db", "SqlSessionStore"]

_POLL = 0.05  # seconds between two looks at data_version while waiting for entries
_COLUMNS = (
    "id, project_path, created, updated, model, provider, status, forked_from, first_message, message_count"
)


class Cursor(Protocol):
    """What a statement gives back (a DB-API cursor)."""

    @property
    def rowcount(self) -> int:
        """Rows the statement changed."""
        ...

    def fetchone(self) -> Any:
        """The next row, or ``None``."""
        ...

    def fetchall(self) -> list[Any]:
        """The remaining rows."""
        ...


class Db(Protocol):
    """A connection inside a transaction, with ``?`` marking parameters."""

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        """Run one statement."""
        ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement for each set of parameters."""
        ...


class SqlSessionStore(Closing, LeasingStore, SessionStore):
    """The contract's operations over :class:`Db`; see the module."""

    _TOUCH: ClassVar[str]
    """The SQL expression of the next ``touched`` number (database-wide, rising)."""
    _FOR_UPDATE: ClassVar[str] = ""
    """What a ``SELECT`` of a session's row adds to lock it until the transaction ends."""

    clock: Callable[[], float]

    def close(self) -> None:
        """Give up the leases this store took, and close its connections (a later call opens them again)."""
        self._release_leases()
        self._disconnect()

    def _disconnect(self) -> None:
        """Close the store's connections."""
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Db]:
        """A connection for reading."""
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[Db]:
        """A connection inside a write transaction, committed when the block ends."""
        raise NotImplementedError

    def _announce(self, db: Db, session_id: str) -> None:
        """Tell waiting readers, when the transaction commits, that ``session_id`` has a new entry (nothing, where
        readers poll :meth:`data_version` instead)."""

    def _lock_lease(self, db: Db, session_id: str) -> None:
        """Make a second taker of ``session_id``'s lease wait for this transaction (nothing, where the write
        transaction already locks the database)."""

    def _lease_write(self, statement: str, parameters: tuple[object, ...]) -> int:
        with self._write() as db:
            return db.execute(statement, parameters).rowcount

    def _lease_clock(self) -> float:
        return self.clock()

    # -- leases ----------------------------------------------------------------------------------------------

    def lease(self, session_id: str, *, expiry: float = LEASE_EXPIRY) -> SessionLease:
        """Take the lease of ``session_id`` for this process, or raise :class:`SessionInUse`.

        A lease whose holder has died (on this machine), or stopped renewing for ``expiry`` seconds (elsewhere),
        is taken over. The lease is given up by :meth:`SessionLease.release` or by :meth:`close`.
        """
        now = self.clock()
        me = LeaseHolder.current(now)
        token = uuid.uuid4().hex
        with self._write() as db:
            self._lock_lease(db, session_id)
            row = db.execute(
                "SELECT pid, host, machine, started, since, renewed FROM leases WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            refuse_live_holder(session_id, row, now, expiry)
            db.execute(
                "INSERT INTO leases (session_id, token, pid, host, machine, started, since, renewed) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                "token = excluded.token, pid = excluded.pid, host = excluded.host, machine = excluded.machine, "
                "started = excluded.started, since = excluded.since, renewed = excluded.renewed",
                (session_id, token, me.pid, me.host, me.machine, me.started, me.since, me.renewed),
            )
        return self._hand_out(session_id, token, expiry)

    def served(self) -> frozenset[str]:
        """The sessions whose lease is held by a process that still runs (:meth:`LeaseHolder.live`): an
        ``active`` session not among them was left by a process that died."""
        now = self.clock()
        with self._read() as db:
            rows = db.execute(
                "SELECT session_id, pid, host, machine, started, since, renewed FROM leases"
            ).fetchall()
        return frozenset(str(row[0]) for row in rows if holder_from_row(row[1:]).live(now))

    # -- sessions --------------------------------------------------------------------------------------------

    def create(self, *, project_path: str | os.PathLike[str], **new: Unpack[NewSession]) -> SessionInfo:
        """Start a session; see :meth:`SessionStore.create <hive_core.sessions.SessionStore.create>`."""
        now = self.clock()
        given = new.get("session_id")
        session_id = new_session_id(now) if given is None else validate_session_id(given)
        with self._write() as db:
            inserted = db.execute(
                f"INSERT INTO sessions (id, project_path, created, updated, touched, model, provider) "
                f"VALUES (?, ?, ?, ?, {self._TOUCH}, ?, ?) ON CONFLICT (id) DO NOTHING",
                (session_id, project_key(project_path), now, now, new.get("model"), new.get("provider")),
            ).rowcount
            if inserted <= 0 and not new.get("exist_ok", False):
                raise SessionExists(session_id=session_id)
            found = _select(db, session_id)
        assert found is not None
        return found

    def get(self, session_id: str) -> SessionInfo | None:
        """The session's row, or ``None``."""
        with self._read() as db:
            return _select(db, session_id)

    def list_sessions(
        self, *, project_path: str | os.PathLike[str] | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions by most recent activity first, optionally of one project only, at most ``limit``."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative, got {limit}")
        query = f"SELECT {_COLUMNS} FROM sessions"
        parameters: list[object] = []
        if project_path is not None:
            query += " WHERE project_path = ?"
            parameters.append(project_key(project_path))
        query += " ORDER BY touched DESC"
        if limit is not None:
            query += " LIMIT ?"
            parameters.append(limit)
        with self._read() as db:
            rows = db.execute(query, parameters).fetchall()
            # Read inside, so a damaged row is the store's one-line error too.
            return [info_from_row(row) for row in rows]

    def latest(self, project_path: str | os.PathLike[str]) -> SessionInfo | None:
        """The project's most recently active session, or ``None``."""
        found = self.list_sessions(project_path=project_path, limit=1)
        return found[0] if found else None

    def delete(self, session_id: str) -> bool:
        """Remove the session, its log and its checkpoints; ``False`` when there was no such session."""
        with self._write() as db:
            db.execute("DELETE FROM entries WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM file_checkpoints WHERE session_id = ?", (session_id,))
            db.execute("DELETE FROM file_outcomes WHERE session_id = ?", (session_id,))
            return db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def fork(self, session_id: str, *, upto: int | None = None, new_id: str | None = None) -> SessionInfo:
        """Copy the log (up to sequence number ``upto``) into a new session; the original becomes ``forked``."""
        now = self.clock()
        fork_id = new_session_id(now) if new_id is None else validate_session_id(new_id)
        last = -1 if upto is None else upto
        with self._write() as db:
            # The source's row is locked first, so no append lands between the copy and the status change.
            source = _select(db, session_id, lock=self._FOR_UPDATE)
            if source is None:
                raise SessionNotFound(session_id=session_id)
            inserted = db.execute(
                f"INSERT INTO sessions (id, project_path, created, updated, touched, model, provider, forked_from) "
                f"VALUES (?, ?, ?, ?, {self._TOUCH}, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (fork_id, source.project_path, now, now, source.model, source.provider, session_id),
            ).rowcount
            if inserted <= 0:
                raise SessionExists(session_id=fork_id)
            db.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) SELECT ?, seq, ts, kind, payload "
                "FROM entries WHERE session_id = ? AND (? < 0 OR seq <= ?) ORDER BY seq",
                (fork_id, session_id, last, last),
            )
            db.execute(
                "INSERT INTO file_checkpoints (session_id, turn, path, existed, content, size, mode, made, digest) "
                "SELECT ?, turn, path, existed, content, size, mode, made, digest "
                "FROM file_checkpoints WHERE session_id = ? AND (? < 0 OR turn <= ?)",
                (fork_id, session_id, last, last),
            )
            db.execute(
                "INSERT INTO file_outcomes (session_id, turn, path, after, undone) "
                "SELECT ?, turn, path, after, undone FROM file_outcomes WHERE session_id = ? AND (? < 0 OR turn <= ?)",
                (fork_id, session_id, last, last),
            )
            count, first = summarise(_entries(db, fork_id))
            db.execute(
                "UPDATE sessions SET message_count = ?, first_message = ? WHERE id = ?",
                (count, first, fork_id),
            )
            db.execute("UPDATE sessions SET status = 'forked' WHERE id = ?", (session_id,))
            forked = _select(db, fork_id)
        assert forked is not None
        return forked

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status."""
        with self._write() as db:
            if db.execute("UPDATE sessions SET status = ? WHERE id = ?", (status, session_id)).rowcount <= 0:
                raise SessionNotFound(session_id=session_id)

    # -- the log ---------------------------------------------------------------------------------------------

    def append(self, session_id: str, payload: EntryPayload) -> int:
        """Append one entry in its own transaction, committed when this returns; returns its sequence number."""
        kind = entry_kind(payload)
        data = msgspec.json.encode(payload).decode()
        now = self.clock()
        with self._write() as db:
            # The UPDATE comes first: on PostgreSQL it locks the session's row until the commit, so another writer
            # of this session waits here and then (a new statement, a new snapshot) numbers after this entry.
            updated = db.execute(
                f"UPDATE sessions SET updated = ?, touched = {self._TOUCH}, message_count = message_count + ?, "
                "first_message = COALESCE(first_message, ?) WHERE id = ?",
                (now, int(counts_as_message(payload)), title_of(payload), session_id),
            )
            if updated.rowcount <= 0:
                raise SessionNotFound(session_id=session_id)
            (seq,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM entries WHERE session_id = ?", (session_id,)
            ).fetchone()
            db.execute(
                "INSERT INTO entries (session_id, seq, ts, kind, payload) VALUES (?, ?, ?, ?, ?)",
                (session_id, seq, now, kind, data),
            )
            self._announce(db, session_id)
        return int(seq)

    def entries(self, session_id: str, *, after: int = 0) -> list[Entry]:
        """The session's log in order (only the entries past sequence number ``after``, when given)."""
        with self._read() as db:
            if _select(db, session_id) is None:
                raise SessionNotFound(session_id=session_id)
            return _entries(db, session_id, after)

    def last_seq(self, session_id: str) -> int:
        """The sequence number of the session's last entry (0 for none)."""
        with self._read() as db:
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM entries WHERE session_id = ?", (session_id,)
            ).fetchone()
        return int(last)

    def data_version(self) -> int:
        """A number that changes whenever another writer commits."""
        raise NotImplementedError

    def wait_for_entries(self, session_id: str, *, after: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the session to have an entry past sequence number ``after``; whether
        it has one. Here by polling :meth:`data_version` a few times a second; PostgreSQL's store listens."""
        deadline = time.monotonic() + timeout
        seen = self.data_version()
        while self.last_seq(session_id) <= after:
            while self.data_version() == seen:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(_POLL)
            seen = self.data_version()
        return True

    # -- checkpoints -----------------------------------------------------------------------------------------

    def keep_file(self, session_id: str, path: str, read: Callable[[], FileState]) -> int:
        """Keep ``read()`` as ``path``'s state before the session's current turn (its latest ``turn_start``),
        unless that turn already kept one (``read`` is then not called); return the turn (0 before any turn was
        recorded). ``read`` runs inside the transaction, so two processes never both keep a state."""
        with self._write() as db:
            if _select(db, session_id, lock=self._FOR_UPDATE) is None:
                raise SessionNotFound(session_id=session_id)
            # Walks the log's index from its end: the current turn's start is near it.
            row = db.execute(
                "SELECT seq FROM entries WHERE session_id = ? AND kind = 'turn_start' ORDER BY seq DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            turn = 0 if row is None else int(row[0])
            kept = db.execute(
                "SELECT 1 FROM file_checkpoints WHERE session_id = ? AND turn = ? AND path = ?",
                (session_id, turn, path),
            ).fetchone()
            if kept is None:
                state = read()
                db.execute(
                    "INSERT INTO file_checkpoints (session_id, turn, path, existed, content, size, mode, made, "
                    "digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        with self._write() as db:
            db.execute(
                "INSERT INTO file_outcomes (session_id, turn, path, after) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (session_id, turn, path) DO UPDATE SET after = excluded.after",
                (session_id, turn, path, digest),
            )

    def file_changes(self, session_id: str) -> list[FileChange]:
        """The session's kept file states, by turn then path."""
        with self._read() as db:
            rows = db.execute(
                "SELECT c.turn, c.path, c.existed, c.content, c.size, c.mode, c.made, c.digest, o.after, o.undone "
                "FROM file_checkpoints c LEFT JOIN file_outcomes o "
                "ON o.session_id = c.session_id AND o.turn = c.turn AND o.path = c.path "
                "WHERE c.session_id = ? ORDER BY c.turn, c.path",
                (session_id,),
            ).fetchall()
        return [_change(row) for row in rows]

    def mark_undone(self, session_id: str, changes: Iterable[FileChange]) -> None:
        """Record that ``changes`` were undone (restored), in one transaction."""
        now = self.clock()
        with self._write() as db:
            db.executemany(
                "INSERT INTO file_outcomes (session_id, turn, path, after, undone) VALUES (?, ?, ?, ?, ?) "
                "ON CONFLICT (session_id, turn, path) DO UPDATE SET undone = excluded.undone",
                [(session_id, change.turn, change.path, change.after, now) for change in changes],
            )


def _select(db: Db, session_id: str, *, lock: str = "") -> SessionInfo | None:
    row = db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?{lock}", (session_id,)).fetchone()
    return None if row is None else info_from_row(row)


def _entries(db: Db, session_id: str, after: int = 0) -> list[Entry]:
    rows = db.execute(
        "SELECT seq, ts, kind, payload FROM entries WHERE session_id = ? AND seq > ? ORDER BY seq",
        (session_id, after),
    ).fetchall()
    return [entry_from_row(*row) for row in rows]


def _change(row: Sequence[object]) -> FileChange:
    turn, path, existed, content, size, mode, made, digest, after, undone = row
    before = {"existed": bool(existed), "content": content, "size": size, "mode": mode, "made": made}
    return msgspec.convert(
        {
            "turn": turn,
            "path": path,
            "before": {**before, "digest": digest},
            "after": after,
            "undone": undone is not None,
        },
        FileChange,
        builtin_types=(bytes,),
    )
