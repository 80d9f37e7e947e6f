"""hive_core.approvals.decide, the one approval decision: what it asks, what it runs, and nothing by omission."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest

from hive_core.approvals import ALLOW_ALL
from hive_core.approvals import NO_RULES
from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import ToolCallPolicy
from hive_core.approvals import Verdict
from hive_core.approvals import decide

pytestmark = pytest.mark.anyio


class Rules:
    """Asks about every call, denies a call touching ``secret``."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        if "secret" in str(arguments.get("path")):
            return Verdict.deny("secrets are denied")
        return Verdict.ask("writes are asked about", level="high")

    def is_read_only(self, tool_name: str) -> bool:
        return False


@dataclass
class Approver:
    """Gives every request the same ``decision``; keeps what it was ``asked``."""

    decision: ApprovalDecision
    asked: list[ApprovalRequest] = field(default_factory=list[ApprovalRequest])

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return self.decision


async def test_without_a_policy_the_call_is_asked_about() -> None:
    nobody = await decide(None, None, call_id="c1", tool_name="write_file", arguments={"path": "a"})
    assert (nobody.outcome, nobody.refusal, nobody.verdict.reason) == (
        "unavailable",
        "approval_unavailable",
        NO_RULES,
    )
    approver = Approver(ApprovalDecision(approved=True))
    asked = await decide(None, approver, call_id="c1", tool_name="write_file", arguments={"path": "a"})
    assert asked.outcome == "approved"
    assert [request.reason for request in approver.asked] == [NO_RULES]


async def test_allow_all_runs_the_call_unasked() -> None:
    approver = Approver(ApprovalDecision(approved=False))
    judged = await decide(ALLOW_ALL, approver, call_id="c1", tool_name="write_file", arguments={"path": "a"})
    assert (judged.outcome, judged.runs, judged.refusal, approver.asked) == ("allowed", True, None, [])


async def test_the_approver_is_asked_with_the_verdict_explained() -> None:
    approver = Approver(ApprovalDecision(approved=False, reason="no"))
    judged = await decide(
        Rules(),
        approver,
        call_id="c7",
        tool_name="write_file",
        arguments={"path": "a"},
        explain=lambda reason: f"{reason} (elsewhere)",
    )
    assert (judged.outcome, judged.refusal, judged.runs) == ("rejected", "rejected", False)
    assert approver.asked == [
        ApprovalRequest(
            call_id="c7",
            tool_name="write_file",
            arguments={"path": "a"},
            reason="writes are asked about (elsewhere)",
            level="high",
        )
    ]


async def test_a_change_is_judged_again_and_is_what_runs() -> None:
    seen: list[Mapping[str, Any]] = []

    def judge(policy: ToolCallPolicy, arguments: Mapping[str, Any], changes: Mapping[str, Any]) -> Verdict:
        seen.append(changes)
        return policy.evaluate("write_file", arguments)

    to_secret = Approver(ApprovalDecision(approved=True, modified_arguments={"path": "secret"}))
    denied = await decide(
        Rules(), to_secret, call_id="c1", tool_name="write_file", arguments={"path": "a", "n": 1}, judge=judge
    )
    assert (denied.outcome, denied.refusal, denied.verdict.reason) == (
        "denied",
        "denied",
        "secrets are denied",
    )
    assert seen == [{}, {"path": "secret"}]
    elsewhere = Approver(ApprovalDecision(approved=True, modified_arguments={"path": "b"}))
    approved = await decide(
        Rules(), elsewhere, call_id="c1", tool_name="write_file", arguments={"path": "a", "n": 1}
    )
    assert (approved.outcome, approved.arguments) == ("approved", {"path": "b", "n": 1})


class ThreadNoting:
    """Allows every call, noting the thread each judgement ran on."""

    def __init__(self) -> None:
        self.threads: dict[str, int] = {}

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        self.threads[tool_name] = threading.get_ident()
        return Verdict.allow("allowed")

    def is_read_only(self, tool_name: str) -> bool:
        return True


async def test_a_judgement_that_resolves_a_host_runs_off_the_event_loop() -> None:
    # fetch_page and explore_site are judged after a DNS lookup, which may take seconds: on the loop's thread it
    # would stall every other session of the process (hive serve) meanwhile.
    rules = ThreadNoting()
    for tool in ("fetch_page", "explore_site", "read_file"):
        judged = await decide(
            rules, None, call_id="c1", tool_name=tool, arguments={"url": "https://example.org"}
        )
        assert judged.outcome == "allowed"
    loop_thread = threading.get_ident()
    assert rules.threads["read_file"] == loop_thread
    assert rules.threads["fetch_page"] != loop_thread
    assert rules.threads["explore_site"] != loop_thread
