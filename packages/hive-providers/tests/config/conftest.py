"""The configuration hive reads (:data:`hive_providers.CONFIG_SCHEMA`), tested in a temporary hive home and project.

Fixtures: ``home`` (``<tmp>/home``, not created), ``project`` (``<tmp>/project`` with an empty ``.hive/``), ``env``
(only ``HIVE_HOME`` set; tests add variables) and ``write`` (writes text to a file, creating its folder).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project" / ".hive").mkdir(parents=True)
    return tmp_path / "project"


@pytest.fixture
def env(home: Path) -> dict[str, str]:
    return {"HIVE_HOME": str(home)}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def write() -> Callable[[Path, str], Path]:
    return _write
