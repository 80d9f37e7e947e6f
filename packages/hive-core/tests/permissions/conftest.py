"""Shared fixtures: a small project tree with a sibling directory outside it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from hive_core.permissions import BUILTIN_READ_ONLY_TOOLS, PermissionPolicy, PermissionRules


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


PolicyFactory = Callable[..., PermissionPolicy]


@pytest.fixture
def make_policy(project: Path) -> PolicyFactory:
    """Build a policy over ``project``: the default rules, or the rules given."""

    def build(
        rules: PermissionRules | None = None,
        *,
        working_dir: Path | None = None,
        read_only_tools: Iterable[str] = BUILTIN_READ_ONLY_TOOLS,
        **fields: Any,
    ) -> PermissionPolicy:
        if rules is None:
            rules = PermissionRules(**fields) if fields else PermissionRules.default()
        return PermissionPolicy(rules, working_dir or project, read_only_tools=read_only_tools)

    return build
