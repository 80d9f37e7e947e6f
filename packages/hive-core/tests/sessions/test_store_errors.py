"""A session database hive cannot use is one clear error that names the file and how to move it aside.

The file is never changed by the attempt, and the command the message gives really moves it aside.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import pytest

from hive_core.errors import UserError
from hive_core.messages import user
from hive_core.sessions import SCHEMA_VERSION
from hive_core.sessions import SessionStoreError
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import UnsupportedSchema


def filled(db: Path, project: Path, sessions: int = 60) -> None:
    """A real database of ``sessions`` sessions, checkpointed into the main file."""
    with SqliteSessionStore(db) as store:
        for _ in range(sessions):
            info = store.create(project_path=project)
            for _ in range(4):
                store.append(info.id, user("x" * 2000))
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def garbage(db: Path, project: Path) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(bytes(range(256)) * 40)


def truncated(db: Path, project: Path) -> None:
    filled(db, project)
    os.truncate(db, db.stat().st_size // 2)


def newer(db: Path, project: Path) -> None:
    filled(db, project, sessions=1)
    with closing(sqlite3.connect(db, isolation_level=None)) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")


def every_call(store: SqliteSessionStore, project: Path) -> None:
    """What hive's commands do first: list, then start a session."""
    store.list_sessions(project_path=project)
    store.create(project_path=project)


@pytest.mark.parametrize(
    ("make", "error", "says"),
    [
        (garbage, SessionStoreError, "it is not a session database hive can read (file is not a database)"),
        (truncated, SessionStoreError, "it is not a session database hive can read (database disk image"),
        (newer, UnsupportedSchema, "was written by a newer hive"),
    ],
    ids=["garbage", "truncated", "newer"],
)
def test_an_unusable_database_is_a_one_line_error_naming_it_and_left_as_it_was(
    home: Path, project: Path, make: object, error: type[UserError], says: str
) -> None:
    db = home / "sessions.db"
    make(db, project)  # type: ignore[operator]
    before = db.read_bytes()

    with SqliteSessionStore(db) as store, pytest.raises(error) as raised:
        every_call(store, project)

    message = str(raised.value)
    assert "\n" not in message
    assert raised.value.source == str(db)
    assert message.startswith(f"{db}: ")
    assert says in message
    command = f"mv {shlex.quote(str(db))} {shlex.quote(str(db) + '.bak')}"
    assert message.endswith(command)
    assert db.read_bytes() == before

    # The command the message gives is all it takes to start afresh, and the old file is kept.
    subprocess.run(["sh", "-c", command], check=True)
    assert (home / "sessions.db.bak").read_bytes() == before
    with SqliteSessionStore(db) as store:
        every_call(store, project)


def test_the_move_aside_command_takes_the_write_ahead_log_along(home: Path, project: Path) -> None:
    db = home / "sessions.db"
    garbage(db, project)
    (home / "sessions.db-wal").write_bytes(b"stale log")

    with SqliteSessionStore(db) as store, pytest.raises(SessionStoreError) as raised:
        every_call(store, project)

    command = str(raised.value).rpartition(": ")[2]
    assert command == store.move_aside_command()
    subprocess.run(["sh", "-c", command], check=True)
    assert not (home / "sessions.db-wal").exists()
    assert (home / "sessions.db.bak-wal").read_bytes() == b"stale log"
    with SqliteSessionStore(db) as store:
        every_call(store, project)


def test_a_database_that_cannot_be_opened_says_what_to_check(tmp_path: Path, project: Path) -> None:
    (tmp_path / "home").write_text("a file where the hive home should be")

    with (
        SqliteSessionStore(tmp_path / "home" / "sessions.db") as store,
        pytest.raises(SessionStoreError) as raised,
    ):
        every_call(store, project)

    assert "readable and writable" in str(raised.value)
    assert str(raised.value).startswith(f"{tmp_path / 'home' / 'sessions.db'}: ")


def test_a_directory_in_place_of_the_database_is_an_error_not_a_traceback(home: Path, project: Path) -> None:
    (home / "sessions.db").mkdir(parents=True)

    with SqliteSessionStore(home / "sessions.db") as store, pytest.raises(SessionStoreError) as raised:
        every_call(store, project)

    assert "cannot be opened or written" in str(raised.value)
