"""Shared setup of the session tests: a hive home in a temporary directory, and a store: each test that takes
``store`` runs on the SQLite store in that home and on a PostgreSQL store in a fresh database of a real server
(skipped, saying why, where the machine has no PostgreSQL)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SqliteSessionStore

# The tests run with --import-mode=importlib: the helper module of this folder is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from core_postgres import PostgresServer  # noqa: E402
from core_postgres import postgres  # noqa: E402, F401 - the server fixture, for the tests of this folder


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``HIVE_HOME``, set to a fresh directory."""
    path = tmp_path / "hive-home"
    monkeypatch.setenv("HIVE_HOME", str(path))
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory."""
    path = tmp_path / "project"
    path.mkdir()
    return path


@pytest.fixture
def sqlite_store(home: Path) -> Iterator[SqliteSessionStore]:
    """A SQLite store in the temporary hive home (for what only that store has: its file)."""
    with SqliteSessionStore(home / "sessions.db") as opened:
        yield opened


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, home: Path) -> Iterator[SharedSessionStore]:
    """A store: SQLite's in the temporary hive home, or PostgreSQL's in a fresh database."""
    if request.param == "sqlite":
        with SqliteSessionStore(home / "sessions.db") as opened:
            yield opened
        return
    from hive_core.sessions.postgres import PostgresSessionStore

    server: PostgresServer = request.getfixturevalue("postgres")
    with PostgresSessionStore(server.new_database()) as opened:
        yield opened
