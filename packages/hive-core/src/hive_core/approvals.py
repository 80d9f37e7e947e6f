"""Who decides whether a tool call may run: a policy judges each call, a human answers the ``ask`` verdicts.

A :class:`ToolCallPolicy` turns a call into a :class:`Verdict`; :func:`decide` acts on it, sending ``ask`` verdicts
to an :class:`ApprovalService` (which keeps the grants of "always" answers and the approval timeout). :func:`decide`
is the one decision: the approval gate of the pipeline (the built-in loop) and every coding-agent backend's judge
call it, so one call gets one answer whichever road it takes. Nothing runs by omission: without a policy a call is
asked about (:data:`NO_RULES`), and an embedder who wants no rules passes :data:`ALLOW_ALL` on purpose. Planning
mode is the gate's alone: it lets a call run when its tool is marked read-only, or when the policy counts it as
read-only (:meth:`ToolCallPolicy.is_read_only`).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final
from typing import Literal
from typing import Protocol
from typing import get_args
from typing import runtime_checkable

import anyio
import msgspec

from hive_protocol import RefusalKind
from hive_protocol import RiskLevel

from .tool_names import EXPLORE_SITE
from .tool_names import FETCH_PAGE

__all__ = [
    "ALLOW_ALL",
    "NO_RULES",
    "PERMISSION_ACTIONS",
    "RESOLVING_TOOLS",
    "AllowEverything",
    "ApprovalDecision",
    "ApprovalRequest",
    "ApprovalService",
    "CallJudge",
    "Grant",
    "GrantRecorder",
    "Judgement",
    "Outcome",
    "PathJudge",
    "PermissionAction",
    "RuleCategory",
    "ToolCallPolicy",
    "Verdict",
    "decide",
    "strictest",
]

PermissionAction = Literal["allow", "deny", "ask"]
"""What a rule, or the policy as a whole, decides for a call: run it, refuse it, or ask a human."""

PERMISSION_ACTIONS: tuple[PermissionAction, ...] = get_args(PermissionAction)
"""The accepted spellings of :data:`PermissionAction`, in the order error messages list them."""

RuleCategory = Literal["read", "edit", "bash", "external_directory", "mcp_tools", "tools", "web"]
"""The rule lists of the rules file, by the key that holds them."""

_ACTION_WEIGHT: dict[PermissionAction, int] = {"allow": 0, "ask": 1, "deny": 2}
_LEVEL_WEIGHT: dict[RiskLevel | None, int] = {None: 0, "low": 1, "medium": 2, "high": 3, "critical": 4}


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """The policy's answer for one tool call."""

    action: PermissionAction
    """``allow`` runs the call, ``deny`` refuses it, ``ask`` sends it to a human for approval."""
    reason: str = ""
    """Why, in words fit for the model (after ``Permission denied:``) and for the person approving."""
    level: RiskLevel | None = None
    """How risky the call is judged to be; set on ``ask`` and on rule denials, absent on ``allow``."""

    @classmethod
    def allow(cls, reason: str = "") -> Verdict:
        """A verdict that lets the call run."""
        return cls(action="allow", reason=reason)

    @classmethod
    def deny(cls, reason: str, *, level: RiskLevel | None = "critical") -> Verdict:
        """A verdict that refuses the call; rule denials are ``critical`` unless told otherwise."""
        return cls(action="deny", reason=reason, level=level)

    @classmethod
    def ask(cls, reason: str, *, level: RiskLevel | None = "medium") -> Verdict:
        """A verdict that needs a human's approval; ``medium`` risk unless told otherwise."""
        return cls(action="ask", reason=reason, level=level)

    @classmethod
    def of(cls, action: PermissionAction, reason: str, *, ask_level: RiskLevel = "medium") -> Verdict:
        """The verdict for ``action`` with the usual risk level for it (``ask_level`` for an ``ask``)."""
        if action == "allow":
            return cls.allow(reason)
        if action == "deny":
            return cls.deny(reason)
        return cls.ask(reason, level=ask_level)


def strictest(verdicts: Iterable[Verdict]) -> Verdict:
    """The strictest of ``verdicts``: deny over ask over allow, then the higher risk; ties keep the first.

    Raises ``ValueError`` when given no verdict at all.
    """
    best: Verdict | None = None
    for verdict in verdicts:
        if best is None or _weight(verdict) > _weight(best):
            best = verdict
    if best is None:
        raise ValueError("strictest() needs at least one verdict")
    return best


def _weight(verdict: Verdict) -> tuple[int, int]:
    return _ACTION_WEIGHT[verdict.action], _LEVEL_WEIGHT[verdict.level]


@runtime_checkable
class ToolCallPolicy(Protocol):
    """Judges one tool call. :class:`hive_core.permissions.PermissionPolicy` is the rules-file implementation."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        """Allow, deny or ask, with a reason and a risk level."""
        ...

    def is_read_only(self, tool_name: str) -> bool:
        """Whether the policy counts ``tool_name`` as read-only although its tool is not marked so.

        Planning mode runs a call when its tool is marked read-only (``Tool.read_only``) or when this says so;
        a policy with nothing to add returns ``False``.
        """
        ...


@runtime_checkable
class PathJudge(Protocol):
    """Judges reading or changing one file: what tools that reach many files (searches, listings) filter by.

    A policy that also judges paths (:class:`hive_core.permissions.PermissionPolicy` does) reaches the tools of its
    :class:`~hive_core.loop.Agent` as :attr:`ToolContext.path_judge <hive_core.tools.ToolContext.path_judge>`.
    """

    def judge_path(self, category: Literal["read", "edit"], path: str) -> Verdict:
        """Allow, deny or ask for reading (``read``) or changing (``edit``) the file at ``path`` (absolute, or
        relative to the working directory)."""
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
    subagent: str | None = None
    """The subagent that made the call (``reviewer``; ``planner > reviewer`` for one a subagent started), or
    ``None`` for the agent itself. Then :attr:`call_id` is the agent's own delegation call, the one its client
    saw start, and :attr:`subagent_call_id` the subagent's id for the call."""
    subagent_call_id: str | None = None
    """The subagent's own id for the call, when :attr:`subagent` is set."""


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


class Grant(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One rule an always-answer added to the session."""

    tool: str
    """The tool it was made for."""
    category: RuleCategory
    """The rule list it joins."""
    pattern: str
    """``bash``: a command prefix glob (``pytest *``) or, when :attr:`exact`, the whole command line; ``read``/
    ``edit``: the project-relative path; ``tools``/``mcp_tools``: the tool name."""
    exact: bool = False
    """Matched as the very text (the command line, or the tool with :attr:`arguments`), never as a glob."""
    arguments: str | None = None
    """For a tool granted with its arguments: them, as canonical JSON."""

    def describe(self) -> str:
        """How it is shown: ``execute_command "pytest *"``, with the arguments of a tool granted with them."""
        shown = self.tool if self.category in ("tools", "mcp_tools") else f'{self.tool} "{self.pattern}"'
        if self.arguments is not None:
            shown += f" with {self.arguments}"
        return shown


@runtime_checkable
class GrantRecorder(Protocol):
    """Remembers an "always" answer as rules no wider than the call
    (:class:`hive_core.permissions.SessionGrants` is the implementation)."""

    def record(self, request: ApprovalRequest) -> object:
        """Remember that ``request`` was approved with ``always_approve``."""
        ...


class AllowEverything:
    """The policy of an embedder who wants no rules: every call runs.

    Pass :data:`ALLOW_ALL` on purpose (``Agent(client, tools=..., policy=ALLOW_ALL)``); an agent or backend given no
    policy at all asks about every call instead. It judges no paths and counts no tool as read-only, so planning
    mode still runs only the tools marked read-only.
    """

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        """Allow, always."""
        return Verdict.allow("every call is allowed (no rules)")

    def is_read_only(self, tool_name: str) -> bool:
        """Nothing beyond what the tools themselves mark read-only."""
        return False

    def __repr__(self) -> str:
        return "ALLOW_ALL"


ALLOW_ALL: Final = AllowEverything()
"""The allow-everything policy: what an embedder passes to run every call without rules or approvals."""

NO_RULES: Final = "no permission rules apply to the agent's requests"
"""Why a call is asked about when no policy was given."""

Outcome = Literal["allowed", "approved", "denied", "unavailable", "rejected"]
"""How a call was judged: allowed by the rules, approved by a person, denied by the rules, asked with nobody to
answer, or rejected by the person."""

_REFUSALS: Final[Mapping[Outcome, RefusalKind]] = {
    "denied": "denied",
    "unavailable": "approval_unavailable",
    "rejected": "rejected",
}

CallJudge = Callable[[ToolCallPolicy, Mapping[str, Any], Mapping[str, Any]], Verdict]
"""How a call is judged under a policy: ``(policy, arguments, changes)`` → the verdict. ``changes`` is empty the first
time; after an approval that changed the arguments it holds the change (already merged into ``arguments``). The
default is the policy's own verdict on the arguments; a coding-agent backend judges them where its CLI runs the
call."""


@dataclass(frozen=True)
class Judgement:
    """The outcome of :func:`decide` for one call."""

    outcome: Outcome
    """How it was judged."""
    verdict: Verdict
    """The rules' verdict (its ``reason`` names the rule); for a changed call that the rules deny, the verdict on
    the change."""
    arguments: dict[str, Any]
    """The arguments the call runs with: the person's changes merged over the call's own."""
    decision: ApprovalDecision | None = None
    """The person's answer, when one was asked."""

    @property
    def runs(self) -> bool:
        """Whether the call may run."""
        return self.outcome in ("allowed", "approved")

    @property
    def refusal(self) -> RefusalKind | None:
        """The refusal recorded on a call that does not run (``denied``, ``approval_unavailable``, ``rejected``)."""
        return _REFUSALS.get(self.outcome)


RESOLVING_TOOLS: Final = frozenset({FETCH_PAGE, EXPLORE_SITE})
"""Tools whose calls are judged after resolving the host they name: the judgement may wait on DNS (up to the
permission engine's resolve timeout), so it runs on a worker thread instead of holding every session's event
loop."""


_NO_CHANGES: Final[Mapping[str, Any]] = {}
"""The changes of a call judged the first time: none."""


def _evaluate(tool_name: str) -> CallJudge:
    def judge(policy: ToolCallPolicy, arguments: Mapping[str, Any], changes: Mapping[str, Any]) -> Verdict:
        return policy.evaluate(tool_name, arguments)

    return judge


async def decide(
    policy: ToolCallPolicy | None,
    approvals: ApprovalService | None,
    *,
    call_id: str,
    tool_name: str,
    arguments: Mapping[str, Any],
    judge: CallJudge | None = None,
    explain: Callable[[str], str] | None = None,
) -> Judgement:
    """Whether the call ``call_id`` of ``tool_name`` with ``arguments`` may run: the one approval decision.

    The policy's verdict (``judge``, by default ``policy.evaluate``; without a policy, ``ask`` with
    :data:`NO_RULES`) allows or denies it, or asks ``approvals`` (``None``: nobody can answer, so it is refused,
    ``unavailable``); anything but an approval is a rejection. The person is shown the verdict's reason (through
    ``explain`` when given). An approval that changed the arguments has the changed call judged again, since it is
    the one that runs: a deny still denies, an ask is satisfied by the approval that supplied the change.
    """
    judging = judge if judge is not None else _evaluate(tool_name)
    called = dict(arguments)
    if policy is None:
        verdict = Verdict.ask(NO_RULES)
    elif tool_name in RESOLVING_TOOLS:
        verdict = await anyio.to_thread.run_sync(judging, policy, called, _NO_CHANGES)
    else:
        verdict = judging(policy, called, _NO_CHANGES)
    if verdict.action == "allow":
        return Judgement("allowed", verdict, called)
    if verdict.action == "deny":
        return Judgement("denied", verdict, called)
    if approvals is None:
        return Judgement("unavailable", verdict, called)
    decision = await approvals.request(
        ApprovalRequest(
            call_id=call_id,
            tool_name=tool_name,
            arguments=called,
            reason=verdict.reason if explain is None else explain(verdict.reason),
            level=verdict.level,
        )
    )
    if not decision.approved:
        return Judgement("rejected", verdict, called, decision)
    changes = decision.modified_arguments
    if not changes:
        return Judgement("approved", verdict, called, decision)
    changed = {**called, **changes}
    if policy is not None:
        if tool_name in RESOLVING_TOOLS:
            again = await anyio.to_thread.run_sync(judging, policy, changed, changes)
        else:
            again = judging(policy, changed, changes)
        if again.action == "deny":
            return Judgement("denied", again, changed, decision)
    return Judgement("approved", verdict, changed, decision)
