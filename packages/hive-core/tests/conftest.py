"""Shared setup of the hive-core tests: the anyio backend, the helper module on the import path, and a hive home
and a project in a temporary directory (folders with other needs declare their own)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# The tests run with --import-mode=importlib, which puts no test folder on sys.path; the helper module
# (named for its package, so it never collides) is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def anyio_backend() -> str:
    """Every async test runs on asyncio."""
    return "asyncio"


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
def write() -> Callable[[Path, str], Path]:
    """Write text to a file (creating its directory) and return the path."""

    def writer(path: Path, text: str) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return writer
