"""A real ``sessions.db`` whose tables were changed behind hive's back: every command that opens it says so in the
one line :mod:`test_store_errors` shows for a file that is not a database, exit 1, never an internal error.

The damage is what a user's tool, a bad merge or another program can do to a valid file: a table dropped, a table
rebuilt without a column, text where a number belongs (in a lease, a session, an entry).
"""

from __future__ import annotations

import shlex
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Final

import pytest
from cli_harness import Workspace

from hive_cli.session_store import session_store_path
from hive_conformance.model_server import ScriptedModelServer
from hive_core.messages import user
from hive_core.sessions import SqliteSessionStore

_PROBLEM: Final = "it is not a session database hive can read ("


def _filled(db: Path, project: Path) -> str:
    """A valid store with one session of ``project`` with a few entries; its id."""
    db.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSessionStore(db) as store:
        info = store.create(project_path=project)
        for _ in range(3):
            store.append(info.id, user("hello"))
        store.lease(info.id).release()
        return info.id


def _run_sql(db: Path, *statements: str) -> None:
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


DAMAGE: Final[dict[str, tuple[str, str]]] = {
    "entries dropped": ("DROP TABLE entries", "its entries table is missing"),
    "leases dropped": ("DROP TABLE leases", "its leases table is missing"),
    "column missing": (
        "ALTER TABLE sessions DROP COLUMN first_message",
        "its sessions table has no first_message column",
    ),
    "lease pid text": (
        "INSERT INTO leases (session_id, token, pid, host, machine, started, since, renewed) "
        "VALUES ('{session}', 't', 'not a pid', 'h', 'm', '', 1.0, 1.0)",
        "Expected `int`, got `str`",
    ),
    "session number text": ("UPDATE sessions SET created = 'yesterday'", "Expected `float`, got `str`"),
    "entry number text": (
        "UPDATE entries SET ts = 'noon' WHERE seq = 2",
        "an entry's row holds values of the wrong types",
    ),
}
"""Each damage: the statement run on a valid store (``{session}`` is its session's id), and the words of the
problem hive then names."""


def _damaged(db: Path, project: Path, kind: str) -> str:
    """A valid store (:func:`_filled`) with the damage ``kind`` done to it; the words of the problem."""
    statement, problem = DAMAGE[kind]
    _run_sql(db, statement.format(session=_filled(db, project)))
    return problem


_TABLES: Final = ("entries dropped", "leases dropped", "column missing")
CASES: Final = [
    # Every damage, for a command that reads the latest session, its lease and its log.
    *((kind, ["-p", "hello", "--continue"]) for kind in DAMAGE),
    # A new session reads no old row: what it finds is the tables, checked when the store opens.
    *((kind, ["-p", "hello"]) for kind in _TABLES),
    # The list reads the tables and every session's row.
    *((kind, ["sessions", "list"]) for kind in (*_TABLES, "session number text")),
    *((kind, ["sessions", "list", "-o", "json"]) for kind in _TABLES),
]


@pytest.mark.parametrize(("kind", "command"), CASES, ids=[f"{kind}: {' '.join(c)}" for kind, c in CASES])
def test_a_damaged_store_is_one_line_that_says_how_to_move_it_aside(
    ws: Workspace, server: ScriptedModelServer, kind: str, command: list[str]
) -> None:
    db = session_store_path(ws.env)
    problem = _damaged(db, ws.project, kind)
    before = db.read_bytes()

    result = ws.use(server).run(*command)

    assert result.code == 1, result
    assert "Traceback" not in result.stderr, result
    assert "internal error" not in result.stderr, result
    move = f"mv {shlex.quote(str(db))} {shlex.quote(str(db) + '.bak')}"
    if "-o" in command:  # the failure in the format asked for, on stdout
        document = result.line_document()
        assert _PROBLEM in document["error"], result
        assert problem in document["error"], result
        assert document["error"].endswith(move) or f"{move} && mv " in document["error"], result
    else:
        assert result.stderr.startswith(f"hive: {db}: {_PROBLEM}"), result
        assert problem in result.stderr, result
        # The advice moves the write-ahead log too when an open connection left one.
        wal = f" && mv {shlex.quote(str(db) + '-wal')} {shlex.quote(str(db) + '.bak-wal')}"
        assert result.stderr.endswith((f"{move}\n", f"{move}{wal}\n")), result
        assert result.stderr.count("\n") == 1, result
    assert db.read_bytes() == before  # nothing written to a file hive cannot read
    assert [r for r in server.requests if r.endpoint in ("openai_responses", "openai_chat")] == []
