"""Arguments a person changes while approving a call are judged again: the call that runs is the changed one.

A deny on the changed call still denies (``denied``); an ask is satisfied by the approval that supplied the change.
The policy is the real one with the default rules, over a project with a ``.env`` (asked) and ``secrets/`` (denied).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from hive_core import Agent
from hive_core import ApprovalDecision
from hive_core import collect_turn
from hive_core import tool
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.testing import Approver
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import ToolEndEvent

pytestmark = pytest.mark.anyio

WAIT = 30


def approving_as(modified: dict[str, Any]) -> Approver:
    """Approves every request with the same changed arguments, and records what it was asked."""
    return Approver(ApprovalDecision(approved=True, modified_arguments=modified))


async def _read_with(project: Path, path: str, approver: Approver) -> tuple[list[str], list[Event]]:
    opened: list[str] = []

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        opened.append(path)
        return (project / path).read_text()

    client = ScriptedChatClient([call(("read_file", {"path": path})), reply("done")])
    policy = PermissionPolicy(PermissionRules.default(), project)
    agent = Agent(client, tools=[read_file], policy=policy, approvals=approver)
    with anyio.fail_after(WAIT):
        events = await collect_turn(agent.session(), "read it")
    return opened, events


@pytest.fixture
def files(project: Path) -> Path:
    (project / ".env").write_text("TOKEN=env\n")
    (project / ".env.local").write_text("TOKEN=local\n")
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("DENIED-SECRET\n")
    return project


@pytest.mark.parametrize("target", ["secrets/key.txt", "src/../secrets/key.txt"])
async def test_a_change_the_rules_deny_is_refused(files: Path, target: str) -> None:
    approver = approving_as({"path": target})
    opened, events = await _read_with(files, ".env", approver)

    assert len(approver.requests) == 1
    assert opened == []
    end = next(event for event in events if isinstance(event, ToolEndEvent))
    assert (end.success, end.refusal) == (False, "denied")
    assert "Secrets directory" in (end.output or "")
    assert "DENIED-SECRET" not in (end.output or "")


async def test_a_change_the_rules_ask_about_runs_on_the_approval_that_made_it(files: Path) -> None:
    approver = approving_as({"path": ".env.local"})
    opened, events = await _read_with(files, ".env", approver)

    # One question: the approval that supplied the change answers the ask on it.
    assert len(approver.requests) == 1
    assert opened == [".env.local"]
    end = next(event for event in events if isinstance(event, ToolEndEvent))
    assert end.success
    assert "TOKEN=local" in (end.output or "")


async def test_a_change_the_rules_allow_runs(files: Path) -> None:
    opened, _ = await _read_with(files, ".env", approving_as({"path": "src/main.py"}))
    assert opened == ["src/main.py"]
