"""The session stores' tables, written once for both databases: each function spells its tables in one database's
:class:`Types` (:data:`SQLITE_TYPES` or :data:`POSTGRES_TYPES`), so the SQLite and PostgreSQL stores hold the same
columns under the same constraints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from typing import LiteralString

__all__ = [
    "POSTGRES_TYPES",
    "SQLITE_TYPES",
    "Types",
    "checkpoint_tables",
    "lease_table",
    "session_tables",
]


@dataclass(frozen=True)
class Types:
    """How one database spells what the tables hold."""

    real: LiteralString
    """A floating-point number (times in Unix seconds)."""
    big: LiteralString
    """A 64-bit integer (sequence and turn numbers, sizes)."""
    boolean: LiteralString
    """A truth value."""
    blob: LiteralString
    """Bytes (a file's content)."""
    touched: LiteralString
    """The ``touched`` column's type and default: what orders sessions by their last activity."""
    without_rowid: LiteralString
    """What ends a table keyed by its primary key alone (SQLite's ``WITHOUT ROWID``; nothing elsewhere)."""
    checkpoint_key: LiteralString
    """How ``file_checkpoints`` is keyed: a rowid table with a unique key on SQLite, whose rows hold whole files
    that SQLite keeps better out of the key's b-tree."""


SQLITE_TYPES: Final = Types(
    "REAL", "INTEGER", "INTEGER", "BLOB", "INTEGER NOT NULL", " WITHOUT ROWID", "UNIQUE"
)
"""SQLite's spelling."""

POSTGRES_TYPES: Final = Types(
    "DOUBLE PRECISION",
    "BIGINT",
    "BOOLEAN",
    "BYTEA",
    "BIGINT NOT NULL DEFAULT nextval('session_touches')",
    "",
    "PRIMARY KEY",
)
"""PostgreSQL's spelling (``touched`` comes from the sequence ``session_touches``, made before the tables)."""


def session_tables(types: Types) -> tuple[LiteralString, ...]:
    """The sessions, their indexes, and their logs."""
    return (
        f"""CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        project_path TEXT NOT NULL,
        created {types.real} NOT NULL,
        updated {types.real} NOT NULL,
        touched {types.touched},
        model TEXT,
        provider TEXT,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended', 'error', 'forked')),
        forked_from TEXT,
        first_message TEXT,
        message_count INTEGER NOT NULL DEFAULT 0
    )""",
        "CREATE INDEX sessions_by_touch ON sessions (touched)",
        "CREATE INDEX sessions_by_project ON sessions (project_path, touched)",
        f"""CREATE TABLE entries (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        seq {types.big} NOT NULL,
        ts {types.real} NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    ){types.without_rowid}""",
    )


def lease_table(types: Types) -> LiteralString:
    """The leases: which process serves which session."""
    return f"""CREATE TABLE leases (
        session_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        machine TEXT NOT NULL,
        started TEXT NOT NULL,
        since {types.real} NOT NULL,
        renewed {types.real} NOT NULL
    ){types.without_rowid}"""


def checkpoint_tables(types: Types) -> tuple[LiteralString, LiteralString]:
    """The files a session's turns changed, as they were before (see :mod:`hive_core.sessions.checkpoints`),
    and what became of them."""
    return (
        f"""CREATE TABLE IF NOT EXISTS file_checkpoints (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn {types.big} NOT NULL,
        path TEXT NOT NULL,
        existed {types.boolean} NOT NULL,
        content {types.blob},
        size {types.big} NOT NULL,
        mode INTEGER,
        made TEXT,
        digest TEXT NOT NULL,
        {types.checkpoint_key} (session_id, turn, path)
    )""",
        f"""CREATE TABLE IF NOT EXISTS file_outcomes (
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        turn {types.big} NOT NULL,
        path TEXT NOT NULL,
        after TEXT,
        undone {types.real},
        PRIMARY KEY (session_id, turn, path)
    ){types.without_rowid}""",
    )
