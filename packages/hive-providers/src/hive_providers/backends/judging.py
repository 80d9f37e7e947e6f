"""May a CLI's tool call run? The permission rules first, then whoever answers approvals — once for every adapter.

ACP's ``session/request_permission``, Claude Code's ``can_use_tool``, Pi's approval dialog and OpenCode's
``permission.asked`` all ask this; only the reply written back differs. :func:`judge_call` answers it and records a
refusal on the call, and each adapter turns the :class:`Judgement` into its CLI's reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from hive_core.approvals import ApprovalDecision, ApprovalRequest, ApprovalService, ToolCallPolicy, Verdict

from .acp.tool_calls import ToolCallTracker

__all__ = ["NO_RULES", "Judgement", "Outcome", "judge_call", "verdict_of"]

NO_RULES: Final = "no permission rules apply to the agent's requests"
"""Why a call is asked about when the backend was given no permission rules."""

Outcome = Literal["allowed", "approved", "denied", "unavailable", "rejected"]
"""How a call was judged: allowed by the rules, approved by a person, denied by the rules, asked with nobody to
answer, or rejected by the person."""


@dataclass(frozen=True)
class Judgement:
    """The outcome of judging one call."""

    outcome: Outcome
    """How it was judged."""
    verdict: Verdict
    """The rules' verdict (its ``reason`` names the rule)."""
    decision: ApprovalDecision | None = None
    """The person's answer, when one was asked."""

    @property
    def runs(self) -> bool:
        """Whether the call may run."""
        return self.outcome in ("allowed", "approved")


def verdict_of(policy: ToolCallPolicy | None, tool: str, arguments: Mapping[str, Any]) -> Verdict:
    """The rules' verdict on a call; without rules, ask."""
    return Verdict.ask(NO_RULES) if policy is None else policy.evaluate(tool, arguments)


async def judge_call(
    call_id: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    policy: ToolCallPolicy | None,
    approvals: ApprovalService | None,
    tracker: ToolCallTracker,
) -> Judgement:
    """Judge the call ``call_id`` (as hive's ``tool`` with ``arguments``): the rules, then ``approvals`` for what
    they ask about (``None``: nobody can answer, so it is refused). A refusal is recorded on the call."""
    verdict = verdict_of(policy, tool, arguments)
    if verdict.action == "allow":
        return Judgement("allowed", verdict)
    if verdict.action == "deny":
        tracker.refuse(call_id, "denied")
        return Judgement("denied", verdict)
    if approvals is None:
        tracker.refuse(call_id, "approval_unavailable")
        return Judgement("unavailable", verdict)
    decision = await approvals.request(
        ApprovalRequest(
            call_id=call_id, tool_name=tool, arguments=arguments, reason=verdict.reason, level=verdict.level
        )
    )
    if not decision.approved:
        tracker.refuse(call_id, "rejected")
        return Judgement("rejected", verdict, decision)
    if decision.modified_arguments:
        # The changed call is the one that runs: a deny on it still denies; an ask is satisfied by this approval.
        changed = verdict_of(policy, tool, {**arguments, **decision.modified_arguments})
        if changed.action == "deny":
            tracker.refuse(call_id, "denied")
            return Judgement("denied", changed, decision)
    return Judgement("approved", verdict, decision)
