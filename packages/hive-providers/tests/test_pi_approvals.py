"""Pi's tool calls judged under hive's rules (:class:`~hive_providers.backends.pi.approvals.ToolJudge`): the hive
tool and arguments each Pi tool is judged as, the policy's verdicts, the approval service's decisions (modified
arguments put back under Pi's keys) and the dialog answers the approval extension reads."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import Verdict
from hive_core.testing import Approver
from hive_protocol import Event
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.pi.approvals import ToolJudge
from hive_providers.backends.pi.approvals import hive_arguments
from hive_providers.backends.pi.rpc import APPROVAL_MARKER
from hive_providers.backends.pi.rpc import read_approval
from hive_providers.backends.pi.rpc import read_dialog

pytestmark = pytest.mark.anyio


class _Policy:
    """Allows reads, denies ``rm``, asks about the rest."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        if tool_name == "read_file":
            return Verdict.allow("reads are fine")
        if "rm " in str(arguments.get("command", "")):
            return Verdict.deny("no deleting")
        return Verdict.ask("asks first")

    def is_read_only(self, tool_name: str) -> bool:
        return tool_name == "read_file"


def _dialog(tool: str, tool_input: dict[str, Any], call: str = "call_1") -> dict[str, Any]:
    body = {"toolCallId": call, "toolName": tool, "input": tool_input}
    return {
        "type": "extension_ui_request",
        "id": "ui-1",
        "method": "input",
        "title": f"{APPROVAL_MARKER}\n{json.dumps(body)}",
    }


def _judge(tmp_path: Path, approvals: Approver | None) -> tuple[ToolJudge, ToolCallTracker, list[Event]]:
    events: list[Event] = []
    tracker = ToolCallTracker(events.append)
    tracker.upsert({"sessionUpdate": "tool_call", "toolCallId": "call_1", "title": "bash", "kind": "execute"})
    judge = ToolJudge(JudgingContext(tracker=tracker, cwd=tmp_path, policy=_Policy(), approvals=approvals))
    return judge, tracker, events


def test_pi_tools_are_judged_as_hive_tools(tmp_path: Path) -> None:
    assert hive_arguments("bash", {"command": "ls", "timeout": 5}, tmp_path) == (
        "execute_command",
        {"command": "ls"},
    )
    assert hive_arguments("read", {"path": "a/../b.txt", "limit": 3}, tmp_path) == (
        "read_file",
        {"path": str(tmp_path / "b.txt")},
    )
    assert hive_arguments("write", {"path": "/abs.txt", "content": "x"}, tmp_path) == (
        "write_file",
        {"path": "/abs.txt", "content": "x"},
    )
    edits = {"path": "f.py", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}
    assert hive_arguments("edit", edits, tmp_path) == (
        "edit_file",
        {"path": str(tmp_path / "f.py"), "content": "b\nd"},
    )
    assert hive_arguments("grep", {"pattern": "x"}, tmp_path) == ("grep_files", {"pattern": "x"})
    assert hive_arguments("my_tool", {"a": 1}, tmp_path) == ("my_tool", {"a": 1})


def test_approval_dialogs_are_told_from_question_dialogs() -> None:
    request = _dialog("bash", {"command": "ls"})
    approval = read_approval(request)
    assert approval is not None
    assert (approval.request_id, approval.tool_call_id, approval.tool_name) == ("ui-1", "call_1", "bash")
    assert approval.tool_input == {"command": "ls"}
    assert read_dialog(request) is None
    assert read_approval({**request, "title": f"{APPROVAL_MARKER}\nnot json"}) is None
    assert read_approval({**request, "method": "confirm"}) is None


async def test_allowed_call_runs_without_asking(tmp_path: Path) -> None:
    approvals = Approver(ApprovalDecision(approved=False))
    judge, _, _ = _judge(tmp_path, approvals)
    approval = read_approval(_dialog("read", {"path": "x"}))
    assert approval is not None
    reply = await judge.judge(approval)
    assert json.loads(reply["value"]) == {"approved": True}
    assert approvals.requests == []


async def test_denied_call_is_blocked_with_the_reason(tmp_path: Path) -> None:
    judge, tracker, events = _judge(tmp_path, Approver(ApprovalDecision(approved=True)))
    approval = read_approval(_dialog("bash", {"command": "rm -rf x"}))
    assert approval is not None
    reply = await judge.judge(approval)
    assert json.loads(reply["value"]) == {"approved": False, "reason": "Permission denied: no deleting"}
    tracker.end("call_1", success=False)
    assert [(e.success, e.refusal) for e in events if isinstance(e, ToolEndEvent)] == [(False, "denied")]


async def test_asked_call_goes_to_the_approval_service(tmp_path: Path) -> None:
    approvals = Approver(ApprovalDecision(approved=True, modified_arguments={"command": "ls -la"}))
    judge, _, events = _judge(tmp_path, approvals)
    approval = read_approval(_dialog("bash", {"command": "ls"}))
    assert approval is not None
    reply = await judge.judge(approval)
    assert json.loads(reply["value"]) == {"approved": True, "input": {"command": "ls -la"}}
    (request,) = approvals.requests
    start = next(e for e in events if isinstance(e, ToolStartEvent))
    assert (request.call_id, request.tool_name, request.arguments) == (
        start.call_id,
        "execute_command",
        {"command": "ls"},
    )


async def test_rejected_and_unanswerable_calls_are_blocked(tmp_path: Path) -> None:
    judge, _, _ = _judge(tmp_path, Approver(ApprovalDecision(approved=False, reason="not now")))
    approval = read_approval(_dialog("bash", {"command": "ls"}))
    assert approval is not None
    answer = json.loads((await judge.judge(approval))["value"])
    assert answer == {"approved": False, "reason": "The user rejected this call: not now"}
    nobody, _, _ = _judge(tmp_path, None)
    answer = json.loads((await nobody.judge(approval))["value"])
    assert answer["approved"] is False
    assert "no one can approve it" in answer["reason"]
