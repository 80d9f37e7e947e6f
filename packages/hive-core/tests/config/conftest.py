"""Shared fixtures: a hive home and a project in a temporary directory, and an environment naming the home."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

Write = Callable[[Path, str], Path]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """``<tmp>/home``: the hive home (not created; ``set`` must create it)."""
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``<tmp>/project`` with an empty ``.hive/``."""
    root = tmp_path / "project"
    (root / ".hive").mkdir(parents=True)
    return root


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    """An environment with only ``HIVE_HOME`` set; tests add variables to it."""
    return {"HIVE_HOME": str(home)}


@pytest.fixture
def write() -> Write:
    """Write text to a file (creating its directory) and return the path."""

    def writer(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return writer
