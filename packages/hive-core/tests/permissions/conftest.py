"""Shared fixtures: a small project tree with a sibling directory outside it, and a policy factory."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules

# The tests run with --import-mode=importlib: the helper module of this folder is imported from here.
_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``<tmp>/project`` with ``src/``, ``tests/`` and ``docs/``; ``<tmp>/outside`` lies next to it."""
    root = tmp_path / "project"
    for directory in ("src", "tests", "docs", ".hive"):
        (root / directory).mkdir(parents=True)
    (root / "src" / "main.py").write_text("print('hi')\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "data.txt").write_text("outside\n")
    return root


@pytest.fixture
def outside(project: Path) -> Path:
    """A directory next to the project, not inside it."""
    return project.parent / "outside"


@pytest.fixture
def make_policy(project: Path) -> Callable[..., PermissionPolicy]:
    """Build a policy over ``project``: the default rules, or the rules given."""

    def build(
        rules: PermissionRules | None = None, *, working_dir: Path | None = None, **fields: Any
    ) -> PermissionPolicy:
        if rules is None:
            rules = PermissionRules(**fields) if fields else PermissionRules.default()
        return PermissionPolicy(rules, working_dir or project)

    return build
