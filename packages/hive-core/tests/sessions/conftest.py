"""Shared setup of the session tests: a hive home in a temporary directory, and a store in it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive_core.sessions import SqliteSessionStore

# The tests run with --import-mode=importlib: the helper module of this folder is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


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
def store(home: Path) -> Iterator[SqliteSessionStore]:
    """A store in the temporary hive home."""
    with SqliteSessionStore(home / "sessions.db") as opened:
        yield opened
