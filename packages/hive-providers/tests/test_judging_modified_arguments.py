"""A coding-agent CLI's call approved with changed arguments is judged again: the changed call is the one the CLI
runs, so a deny on it still denies, and an ask on it is satisfied by the approval that made the change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_protocol import Event
from hive_providers.backends.kit.judging import judge_call
from hive_providers.backends.kit.tool_calls import ToolCallTracker

pytestmark = pytest.mark.anyio


class Approver:
    """Approves every request with the same changed arguments."""

    def __init__(self, modified: dict[str, Any]) -> None:
        self.modified = modified
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        return ApprovalDecision(approved=True, modified_arguments=self.modified)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".env").write_text("TOKEN=x\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("k\n")
    return tmp_path


async def _judge(project: Path, modified: dict[str, Any]) -> tuple[str, int]:
    events: list[Event] = []
    approver = Approver(modified)
    judged = await judge_call(
        "call_1",
        "read_file",
        {"path": ".env"},
        policy=PermissionPolicy(PermissionRules.default(), project),
        approvals=approver,
        tracker=ToolCallTracker(events.append),
    )
    return judged.outcome, len(approver.requests)


async def test_a_change_to_a_denied_file_is_denied(project: Path) -> None:
    assert await _judge(project, {"path": "secrets/key.txt"}) == ("denied", 1)


async def test_a_change_to_an_asked_file_runs_on_the_same_approval(project: Path) -> None:
    assert await _judge(project, {"path": ".env"}) == ("approved", 1)
