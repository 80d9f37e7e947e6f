"""Judging a path the kernel resolved: the same verdict as judging a name that leads there, and remembered verdicts
that follow the session's grants."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.approvals import ApprovalRequest
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules

_NAMES = (
    "src/app.py",
    "src/.env",
    ".env.local",
    "secrets/key.txt",
    "tests/t.py",
    "notes.md",
    "cfg.yaml",
    ".git/x",
)


def _project(root: Path) -> Path:
    for name in _NAMES:
        path = root / "p" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    (root / "outside").mkdir(exist_ok=True)
    (root / "outside" / "o.txt").write_text("x")
    project = root / "p"
    if not (project / "link").exists():
        (project / "link").symlink_to(project / "secrets")
        (project / "away").symlink_to(root / "outside")
    return project


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from([*_NAMES, "link/key.txt", "away/o.txt", "src", "secrets", "new.txt", "src/new.py"]),
    category=st.sampled_from(["read", "edit"]),
)
def test_the_kernel_path_is_judged_as_a_name_leading_there(tmp_path: Path, name: str, category: Any) -> None:
    project = _project(tmp_path)
    policy = PermissionPolicy(PermissionRules.default(), project)
    by_name = policy.judge_path(category, name)
    resolved = os.path.realpath(project / name)
    by_kernel = policy.judge_resolved(category, resolved)
    assert (by_kernel.action, by_kernel.reason) == (by_name.action, by_name.reason)


def test_a_relative_or_nul_path_is_not_judged_as_resolved(tmp_path: Path) -> None:
    policy = PermissionPolicy(PermissionRules.default(), _project(tmp_path))
    assert policy.judge_resolved("read", "src/app.py").action == "deny"
    assert policy.judge_resolved("read", str(tmp_path / "p" / "src\0x")).action == "deny"


def test_a_remembered_verdict_follows_a_new_grant(tmp_path: Path) -> None:
    project = _project(tmp_path)
    policy = PermissionPolicy(PermissionRules.default(), project)
    target = str(project / "notes.md")
    assert policy.judge_resolved("edit", target).action == "ask"
    assert policy.judge_resolved("edit", target).action == "ask"  # now remembered
    request = ApprovalRequest(
        call_id="c", tool_name="write_file", arguments={"path": "notes.md"}, reason="asked"
    )
    policy.grants.record(request)
    assert policy.judge_resolved("edit", target).action == "allow"
    assert policy.judge_path("edit", "notes.md").action == "allow"
