"""The CLI's session database: ``sessions.db`` in the hive home."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_cli.session_store import open_session_store
from hive_cli.session_store import session_store_path


def test_the_database_lives_in_the_hive_home(tmp_path: Path) -> None:
    env = {"HIVE_HOME": str(tmp_path / "home")}
    assert session_store_path(env) == tmp_path / "home" / "sessions.db"
    with open_session_store(env) as store:
        assert store.path == tmp_path / "home" / "sessions.db"
        assert not (tmp_path / "home").exists()  # opening a store touches nothing


def test_without_hive_home_the_database_is_under_the_user_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HIVE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/someone")
    assert session_store_path() == Path("/home/someone/.hive/sessions.db")
