"""A ``sessions.db`` hive cannot use: every command that opens it says so in one line, exit 1, and touches nothing.

Three files: garbage, a real database cut in half, and one a newer hive wrote. Commands that need no session store
go on working beside any of them.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
import subprocess
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Final

import pytest
from cli_harness import Workspace

from hive_cli.session_store import session_store_path
from hive_conformance.model_server import ScriptedModelServer
from hive_core.messages import user
from hive_core.sessions import SCHEMA_VERSION
from hive_core.sessions import SqliteSessionStore


def _filled(db: Path, sessions: int) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSessionStore(db) as store:
        for _ in range(sessions):
            info = store.create(project_path=db.parent)
            for _ in range(4):
                store.append(info.id, user("x" * 2000))
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def garbage(db: Path) -> str:
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(os.urandom(8192))
    return "it is not a session database hive can read (file is not a database)"


def truncated(db: Path) -> str:
    _filled(db, 60)
    os.truncate(db, db.stat().st_size // 2)
    return "it is not a session database hive can read (database disk image is malformed)"


def newer(db: Path) -> str:
    _filled(db, 1)
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    return f"the session database was written by a newer hive (schema {SCHEMA_VERSION + 1};"


FILES: Final[dict[str, Callable[[Path], str]]] = {"garbage": garbage, "truncated": truncated, "newer": newer}

COMMANDS: Final = {
    "-p": ["-p", "hello"],
    "-p -o json": ["-p", "hello", "-o", "json"],
    "run": ["run", "hello"],
    "run --server": ["run", "--server"],
    "sessions list": ["sessions", "list"],
    "sessions delete": ["sessions", "delete", "some-id", "--yes"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
@pytest.mark.parametrize("kind", FILES.keys())
def test_every_command_that_opens_the_store_fails_in_one_line_that_says_how_to_move_it_aside(
    ws: Workspace, server: ScriptedModelServer, kind: str, command: list[str]
) -> None:
    db = session_store_path(ws.env)
    problem = FILES[kind](db)
    before = db.read_bytes()

    result = ws.use(server).run(*command)

    assert result.code == 1, result
    move = f"mv {shlex.quote(str(db))} {shlex.quote(str(db) + '.bak')}"
    if "-o" in command:  # the failure in the format asked for, on stdout
        document = result.line_document()
        assert problem in document["error"], result
        assert document["error"].endswith(move), result
    else:
        assert result.stderr.startswith(f"hive: {db}: {problem}"), result
        assert result.stderr.endswith(f"{move}\n"), result
        assert result.stderr.count("\n") == 1, result
    assert "Traceback" not in result.stderr
    assert "internal error" not in result.stderr
    assert db.read_bytes() == before  # nothing lost
    assert [r for r in server.requests if r.endpoint in ("openai_responses", "openai_chat")] == []


@pytest.mark.parametrize("kind", FILES.keys())
def test_commands_that_need_no_store_still_work_and_the_advice_is_all_it_takes(
    ws: Workspace, server: ScriptedModelServer, kind: str
) -> None:
    db = session_store_path(ws.env)
    FILES[kind](db)
    ws.use(server)

    shown = ws.run("config", "show")
    assert shown.code == 0, shown
    assert ws.run("--version").code == 0

    failed = ws.run("sessions", "list", "-o", "json")
    move = json.loads(failed.stdout)["error"].rpartition(": ")[2]
    subprocess.run(
        ["sh", "-c", move], check=True
    )  # the very command hive printed, as the user would paste it
    listed = ws.run("sessions", "list", "-o", "json")
    assert listed.code == 0, listed
    assert listed.document() == []
    assert Path(str(db) + ".bak").exists()
