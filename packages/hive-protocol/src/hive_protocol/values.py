"""Value sets of the wire protocol.

Each set is a ``Literal`` type for static checking plus a tuple of its members in wire order, so code and error
messages can list the allowed spellings. The spellings are the contract: they never change once published.
"""

from __future__ import annotations

from typing import Literal
from typing import get_args

__all__ = [
    "ERROR_CODES",
    "FALLBACK_CATEGORIES",
    "FALLBACK_KINDS",
    "REASONING_EFFORTS",
    "REFUSAL_KINDS",
    "RISK_LEVELS",
    "STOP_REASONS",
    "TOOL_MODES",
    "WORK_ITEM_KINDS",
    "WORK_ITEM_STATUSES",
    "ErrorCode",
    "FallbackCategory",
    "FallbackKind",
    "ReasoningEffort",
    "RefusalKind",
    "RiskLevel",
    "StopReason",
    "WorkItemKind",
    "WorkItemStatus",
]

StopReason = Literal[
    "completed",
    "output_limit",
    "content_filter",
    "tool_terminated",
    "awaiting_host_tools",
    "step_limit",
    "cancelled",
    "budget_exhausted",
]
"""Why a turn ended. Absent from ``turn_end`` when the turn failed (an ``error`` precedes it)."""

ErrorCode = Literal[
    "context_limit",
    "rate_limit",
    "billing",
    "auth",
    "network",
    "timeout",
    "request_rejected",
    "tool_execution",
    "file_system",
    "internal",
    "unknown",
    "unreadable_request",
]
"""Machine-readable class of an ``error`` event; the message is for humans and may change."""

RefusalKind = Literal[
    "denied",
    "approval_unavailable",
    "rejected",
    "result_withheld",
    "invalid_arguments",
    "repeated_call",
    "repeated_error",
    "repeated_result",
    "timed_out",
]
"""Why a tool call did not run (or its result was withheld). A refused call always has ``success: false``."""

RiskLevel = Literal["low", "medium", "high", "critical"]
"""How risky a call waiting for approval is judged to be."""

ReasoningEffort = Literal["none", "low", "medium", "high", "extra_high"]
"""How hard a reasoning model should think for one turn."""

FallbackKind = Literal["retry", "fallback", "exhausted"]
"""What a provider failure led to: a retry of the same provider, a switch to the next, or giving up."""

FallbackCategory = Literal["transient", "rate_limit", "auth", "fatal", "worker_lost"]
"""How a failure was classified for retry purposes: a provider's (the first four), or ``worker_lost``: the worker
running the turn on a scaled-out ``hive serve`` stopped, and another goes on from the turn's last recorded step."""

WorkItemKind = Literal["subagent", "monitor"]
"""What an ``agent_work`` item tracks: a subagent the agent started, or a background command it watches."""

WorkItemStatus = Literal["running", "completed", "failed", "stopped"]
"""The state of an ``agent_work`` item."""

STOP_REASONS: tuple[StopReason, ...] = get_args(StopReason)
ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)
REFUSAL_KINDS: tuple[RefusalKind, ...] = get_args(RefusalKind)
RISK_LEVELS: tuple[RiskLevel, ...] = get_args(RiskLevel)
REASONING_EFFORTS: tuple[ReasoningEffort, ...] = get_args(ReasoningEffort)
FALLBACK_KINDS: tuple[FallbackKind, ...] = get_args(FallbackKind)
FALLBACK_CATEGORIES: tuple[FallbackCategory, ...] = get_args(FallbackCategory)
WORK_ITEM_KINDS: tuple[WorkItemKind, ...] = get_args(WorkItemKind)
WORK_ITEM_STATUSES: tuple[WorkItemStatus, ...] = get_args(WorkItemStatus)

TOOL_MODES: tuple[str, ...] = ("auto", "none", "require_any", "require:<tool name>")
"""The accepted spellings of ``TurnOptions.tool_mode``; the last stands for ``require:`` plus a registered tool."""
