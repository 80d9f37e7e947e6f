"""What ``hive serve`` front ends that share an engine keep, in the PostgreSQL store every one of them reads.

The same three things :mod:`hive_cli.serve.log_store` keeps in one server's file (each session's record, every event
line it wrote, its user messages), in tables of the session store's database, so that any front end lists any
session and replays its stream from any position: a client that reconnects to another front end with
``Last-Event-ID`` goes on where it was. Events are written by the workers that run the turns (and by a front end
for the few events it writes itself); each append takes the session's next positions under a lock of its own, so
positions stay consecutive whoever writes, and announces them (``NOTIFY``) so that front ends following the session
read them at once.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from typing import Final

import msgspec

from hive_core.sessions.postgres import PostgresSessionStore

from .log_store import LoggedSession

__all__ = ["CHANNEL", "SharedServeLog"]

CHANNEL: Final = "hive_serve_events"
_TURN_END: Final = b'{"type":"turn_end"'
"""The ``NOTIFY`` channel of appended events; the payload is the session's id."""


class SharedServeLog:
    """Sessions, event logs and user messages of front ends sharing an engine (see the module's documentation)."""

    def __init__(self, store: PostgresSessionStore) -> None:
        self.store = store
        """The session store whose database holds the tables (and whose pool serves them)."""

    def save(self, session: LoggedSession) -> None:
        """Write (or replace) a session's record."""
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO serve_sessions (session_id, record) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET record = EXCLUDED.record",
                (session.session_id, msgspec.json.encode(session)),
            )

    def session(self, session_id: str) -> LoggedSession | None:
        """One session's record, or ``None``."""
        with self.store.transaction() as db:
            row = db.execute(
                "SELECT record FROM serve_sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else msgspec.json.decode(bytes(row[0]), type=LoggedSession)

    def sessions(self) -> list[LoggedSession]:
        """Every session kept, oldest first."""
        with self.store.transaction() as db:
            rows = db.execute("SELECT record FROM serve_sessions").fetchall()
        found = [msgspec.json.decode(bytes(row[0]), type=LoggedSession) for row in rows]
        return sorted(found, key=lambda session: session.created_at)

    def append(self, session_id: str, lines: Sequence[bytes]) -> int:
        """Add event lines after the session's last; returns the position of the last one (0: none at all)."""
        with self.store.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"hive-serve-events:{session_id}",))
            row = db.execute(
                "SELECT COALESCE(MAX(position), 0) FROM serve_events WHERE session_id = ?", (session_id,)
            ).fetchone()
            last = int(row[0]) if row is not None else 0
            if lines:
                db.executemany(
                    "INSERT INTO serve_events (session_id, position, line) VALUES (?, ?, ?)",
                    [(session_id, last + number, line) for number, line in enumerate(lines, 1)],
                )
                db.execute("SELECT pg_notify(?, ?)", (CHANNEL, session_id))
            return last + len(lines)

    def events(self, session_id: str, *, after: int = 0) -> list[bytes]:
        """The session's event lines after position ``after``, in order."""
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT line FROM serve_events WHERE session_id = ? AND position > ? ORDER BY position",
                (session_id, after),
            ).fetchall()
        return [bytes(row[0]) for row in rows]

    def last_turn(self, session_id: str) -> tuple[int, list[bytes]]:
        """How many events the session has, and those after its last ``turn_end`` (the turn that may still run)."""
        with self.store.transaction() as db:
            row = db.execute(
                "SELECT COALESCE(MAX(position), 0), COALESCE(MAX(CASE WHEN substring(line FROM 1 FOR ?) = ? "
                "THEN position END), 0) FROM serve_events WHERE session_id = ?",
                (len(_TURN_END), _TURN_END, session_id),
            ).fetchone()
        count, ended = (int(row[0]), int(row[1])) if row is not None else (0, 0)
        return count, self.events(session_id, after=ended) if count > ended else []

    def add_message(self, session_id: str, number: int, content: str) -> None:
        """Keep a user message of a session as its ``number``-th, or after the last one kept when another front
        end took messages this one has not seen."""
        with self.store.transaction() as db:
            db.execute("SELECT pg_advisory_xact_lock(hashtext(?))", (f"hive-serve-messages:{session_id}",))
            db.execute(
                "INSERT INTO serve_messages (session_id, number, content) SELECT ?, GREATEST(?, "
                "COALESCE(MAX(number), 0) + 1), ? FROM serve_messages WHERE session_id = ?",
                (session_id, number, content, session_id),
            )

    def messages(self, session_id: str) -> list[str]:
        """A session's user messages, in order."""
        with self.store.transaction() as db:
            rows = db.execute(
                "SELECT content FROM serve_messages WHERE session_id = ? ORDER BY number", (session_id,)
            ).fetchall()
        return [str(row[0]) for row in rows]

    def forget(self, session_id: str) -> None:
        """Remove a session's record, events and messages."""
        with self.store.transaction() as db:
            for table in ("serve_events", "serve_messages", "serve_sessions"):
                db.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))

    def listen(
        self, woken: Callable[[str], None], stop: Callable[[], bool], listening: Callable[[], None]
    ) -> None:
        """Call ``woken(session_id)`` for every append announced, until ``stop()`` (checked every second); runs on a
        thread of its own, on a connection of its own. ``listening()`` once announcements are heard (appends
        before it were not)."""
        self.store.listen(CHANNEL, woken, stop, listening)
