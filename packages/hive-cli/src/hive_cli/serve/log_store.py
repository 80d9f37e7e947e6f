"""What ``hive serve`` keeps across restarts: each hosted session and every event line it wrote, in SQLite.

``<hive home>/serve.db`` holds one row a session (its id, backend, model, folder, title, how it runs, whether it
ended), one row an event (its position and its canonical line) and one row a user message (the protocol has no
event for it: the n-th message is the n-th turn's). A restarted server reads it back: every
session is listed again, its stream replays from any position (a ``Last-Event-ID`` from before the restart still
works), and a session that had not ended is opened again, which asks again an approval that was waiting.

Events are written in batches (a session's pending events at the latest every fraction of a second, at once when
one is a turn's end or asks the user something, and always before a reader is sent them), in WAL mode with
``synchronous=NORMAL``: a kill of the server may lose the last fraction of a second of a streaming turn that no
reader saw yet, never an event a reader saw, a turn's end, a waiting question, nor the file.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import msgspec

from .settings import SessionSettings

__all__ = ["LoggedSession", "ServeLogStore"]

FILE_NAME: Final = "serve.db"

_SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS sessions (
        session_id TEXT PRIMARY KEY,
        record BLOB NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS events (
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL,
        line BLOB NOT NULL,
        PRIMARY KEY (session_id, position)
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS messages (
        session_id TEXT NOT NULL,
        number INTEGER NOT NULL,
        content TEXT NOT NULL,
        PRIMARY KEY (session_id, number)
    ) WITHOUT ROWID""",
)


class LoggedSession(msgspec.Struct, frozen=True, kw_only=True):
    """A hosted session as the store keeps it."""

    session_id: str
    """Its id (the session store's id for its history)."""
    backend: str
    """``hive``, a coding-agent CLI's name, or ``external``."""
    model: str | None
    """The model it was opened with, if one was named."""
    working_directory: str
    """Its project's folder."""
    carrier: str
    """Where its turns run: ``in_process``, ``isolated`` or ``external``."""
    title: str = ""
    """The first words of its first message."""
    created_at: float
    """When it was opened (seconds since the epoch)."""
    updated_at: float
    """When it last wrote an event."""
    ended: bool = False
    """Whether its input closed and its last turn ended."""
    settings: SessionSettings | None = None
    """The settings it was opened with, over the server's configuration."""


class ServeLogStore:
    """The SQLite file of one ``hive serve``'s sessions and event logs (safe to call from any thread)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        for statement in _SCHEMA:
            self._db.execute(statement)

    def save(self, session: LoggedSession) -> None:
        """Write (or replace) a session's record."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO sessions (session_id, record) VALUES (?, ?)",
                (session.session_id, msgspec.json.encode(session)),
            )

    def append(self, session_id: str, events: Sequence[tuple[int, bytes]]) -> None:
        """Keep a session's events, as (position, line), in one transaction (a position kept is left as it was)."""
        self.append_many([(session_id, events)])

    def append_many(self, batches: Iterable[tuple[str, Sequence[tuple[int, bytes]]]]) -> None:
        """Keep the events of several sessions, as (session id, [(position, line), ...]), in one transaction:
        a server streaming hundreds of turns writes them all at once rather than one commit a session."""
        rows = [(session_id, position, line) for session_id, events in batches for position, line in events]
        if not rows:
            return
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT OR IGNORE INTO events (session_id, position, line) VALUES (?, ?, ?)", rows
            )
            self._db.execute("COMMIT")

    def sessions(self) -> list[LoggedSession]:
        """Every session kept, oldest first."""
        with self._lock:
            rows = self._db.execute("SELECT record FROM sessions").fetchall()
        found = [msgspec.json.decode(bytes(row[0]), type=LoggedSession) for row in rows]
        return sorted(found, key=lambda session: session.created_at)

    def events(self, session_id: str) -> Iterator[bytes]:
        """A session's event lines, in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT line FROM events WHERE session_id = ? ORDER BY position", (session_id,)
            ).fetchall()
        for (line,) in rows:
            yield bytes(line)

    def add_message(self, session_id: str, number: int, content: str) -> None:
        """Keep the user's ``number``-th message of a session (1-based: the message of its ``number``-th turn)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO messages (session_id, number, content) VALUES (?, ?, ?)",
                (session_id, number, content),
            )

    def messages(self, session_id: str) -> list[str]:
        """A session's user messages, in order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT content FROM messages WHERE session_id = ? ORDER BY number", (session_id,)
            ).fetchall()
        return [str(content) for (content,) in rows]

    def forget(self, session_id: str) -> None:
        """Remove a session's record, events and messages."""
        with self._lock:
            self._db.execute("BEGIN")
            self._db.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            self._db.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            self._db.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
            self._db.execute("COMMIT")

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
