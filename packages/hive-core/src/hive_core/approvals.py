"""Who decides whether a tool call may run: a policy judges each call, a human answers the ``ask`` verdicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import msgspec

from hive_protocol import RiskLevel

from .permissions.verdict import Verdict

__all__ = ["ApprovalDecision", "ApprovalRequest", "ApprovalService", "ToolCallPolicy"]


@runtime_checkable
class ToolCallPolicy(Protocol):
    """Judges one tool call. :class:`hive_core.permissions.PermissionPolicy` is the rules-file implementation."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any], *, planning: bool = False) -> Verdict:
        """Allow, deny or ask, with a reason and a risk level."""
        ...


class ApprovalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A call waiting for a human's approval."""

    call_id: str
    """The waiting call."""
    tool_name: str
    """The tool called."""
    arguments: dict[str, Any]
    """The call's arguments as the model sent them."""
    reason: str
    """Why the policy asks."""
    level: RiskLevel | None = None
    """How risky the call is judged to be."""


class ApprovalDecision(msgspec.Struct, frozen=True, kw_only=True):
    """A human's answer (or the fail-closed answer given for them)."""

    approved: bool
    """Whether the call may run."""
    reason: str | None = None
    """Why; on a rejection the model reads it."""
    modified_arguments: dict[str, Any] | None = None
    """Arguments that replace the call's key by key."""
    always_approve: bool = False
    """The human asked not to be asked again for such calls."""


@runtime_checkable
class ApprovalService(Protocol):
    """Answers ``ask`` verdicts. Must fail closed: anything but an explicit approval is a rejection."""

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """Wait for the answer to ``request``."""
        ...
