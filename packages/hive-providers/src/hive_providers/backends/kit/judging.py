"""May a CLI's tool call run? The permission rules first, then whoever answers approvals — once for every adapter.

ACP's ``session/request_permission``, Claude Code's ``can_use_tool``, Pi's approval dialog and OpenCode's
``permission.asked`` all ask this; only the reply written back differs. :func:`judge_call` answers it and records a
refusal on the call, and each adapter turns the :class:`Judgement` into its CLI's reply.

A CLI may say where a call runs (Codex's ``cwd``, a tool input's ``workdir``...). Elsewhere than the project, the
call is judged there: a command as ``cd <there> && <command>`` (so ``cat secret.txt`` in ``/elsewhere`` reads
``/elsewhere/secret.txt``), a relative path joined to it, the directory itself as a read, and outside the project
the call is asked about at least. Every adapter passes its CLI's directory here, so this is the one place it is
judged.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from hive_core.approvals import (
    ApprovalDecision,
    ApprovalRequest,
    ApprovalService,
    ToolCallPolicy,
    Verdict,
    strictest,
)

from .tool_calls import ToolCallTracker

__all__ = [
    "NO_RULES",
    "WORKING_DIRECTORY_KEYS",
    "Judgement",
    "Outcome",
    "elsewhere",
    "judge_call",
    "verdict_of",
    "working_directory",
]

NO_RULES: Final = "no permission rules apply to the agent's requests"
"""Why a call is asked about when the backend was given no permission rules."""

WORKING_DIRECTORY_KEYS: Final = ("cwd", "workdir", "working_dir", "workingDirectory", "dir_path", "directory")
"""The keys under which CLIs' tool inputs name the directory a call runs in (or searches, for a search tool)."""

_PATH_ARGUMENTS: Final = ("path", "source", "destination")
_LISTING_TOOLS: Final = frozenset({"list_directory", "glob_files", "grep_files"})

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


def working_directory(raw: Mapping[str, Any]) -> object:
    """Where a CLI's tool input says its call runs: the value under :data:`WORKING_DIRECTORY_KEYS` (when several
    name different directories, all of them as a tuple, which :func:`verdict_of` asks about); ``None`` for none."""
    named = [raw[key] for key in WORKING_DIRECTORY_KEYS if raw.get(key) not in (None, "")]
    distinct = list(dict.fromkeys(repr(value) for value in named))
    if not named:
        return None
    return named[0] if len(distinct) == 1 else tuple(named)


def verdict_of(
    policy: ToolCallPolicy | None,
    tool: str,
    arguments: Mapping[str, Any],
    *,
    cwd: object = None,
    project: str | os.PathLike[str] | None = None,
) -> Verdict:
    """The rules' verdict on a call; without rules, ask.

    ``cwd`` is where the CLI says the call runs (``None``: it does not say, so the project), relative to the
    ``project`` directory the CLI was started in. Elsewhere the call is judged there (see the module); a ``cwd``
    that is not a directory name (not text, several at once) is asked about.
    """
    if policy is None:
        return Verdict.ask(NO_RULES)
    if cwd is None or project is None:
        return policy.evaluate(tool, arguments)
    root = os.path.realpath(project)
    if not isinstance(cwd, str) or not cwd.strip() or "\0" in cwd:
        unknown = Verdict.ask(f"the call's working directory {cwd!r} cannot be judged", level="high")
        return strictest([policy.evaluate(tool, arguments), unknown])
    place = elsewhere(cwd, project)
    if place is None:
        return policy.evaluate(tool, arguments)
    real = os.path.realpath(place)
    verdicts = [
        policy.evaluate(tool, _in_directory(tool, arguments, place)),
        policy.evaluate("read_file", {"path": place}),
    ]
    if os.path.commonpath([root, real]) != root:
        verdicts.append(Verdict.ask(f"the call runs in {place}, outside the project", level="high"))
    return strictest(verdicts)


def elsewhere(cwd: object, project: str | os.PathLike[str] | None) -> str | None:
    """The directory ``cwd`` names when it is text other than ``project``; ``None`` otherwise."""
    if project is None or not isinstance(cwd, str) or not cwd.strip() or "\0" in cwd:
        return None
    place = os.path.normpath(os.path.join(os.path.abspath(project), cwd))
    return None if os.path.realpath(place) == os.path.realpath(project) else place


def _in_directory(tool: str, arguments: Mapping[str, Any], place: str) -> dict[str, Any]:
    """``arguments`` as a call of ``tool`` made in ``place`` reads them: the command entered there, relative paths
    joined to it, a listing without a directory listing it."""
    judged = dict(arguments)
    command = judged.get("command")
    if tool == "execute_command" and isinstance(command, str) and command.strip():
        judged["command"] = f"cd {shlex.quote(place)} && {command}"
    for key in _PATH_ARGUMENTS:
        value = judged.get(key)
        if isinstance(value, str) and value and not Path(value).is_absolute():
            judged[key] = os.path.join(place, value)
    if tool in _LISTING_TOOLS and judged.get("path") in (None, ""):
        judged["path"] = place
    return judged


async def judge_call(
    call_id: str,
    tool: str,
    arguments: dict[str, Any],
    *,
    policy: ToolCallPolicy | None,
    approvals: ApprovalService | None,
    tracker: ToolCallTracker,
    cwd: object = None,
    project: str | os.PathLike[str] | None = None,
) -> Judgement:
    """Judge the call ``call_id`` (as hive's ``tool`` with ``arguments``, run in ``cwd`` of ``project``: see
    :func:`verdict_of`): the rules, then ``approvals`` for what they ask about (``None``: nobody can answer, so it
    is refused). A refusal is recorded on the call."""
    verdict = verdict_of(policy, tool, arguments, cwd=cwd, project=project)
    if verdict.action == "allow":
        return Judgement("allowed", verdict)
    if verdict.action == "deny":
        tracker.refuse(call_id, "denied")
        return Judgement("denied", verdict)
    if approvals is None:
        tracker.refuse(call_id, "approval_unavailable")
        return Judgement("unavailable", verdict)
    place = elsewhere(cwd, project)
    reason = verdict.reason if place is None else f"{verdict.reason} (the call runs in {place})"
    decision = await approvals.request(
        ApprovalRequest(
            call_id=call_id, tool_name=tool, arguments=arguments, reason=reason, level=verdict.level
        )
    )
    if not decision.approved:
        tracker.refuse(call_id, "rejected")
        return Judgement("rejected", verdict, decision)
    if decision.modified_arguments:
        # The changed call is the one that runs: a deny on it still denies; an ask is satisfied by this approval.
        # Where it runs is judged again too, in the directory the change names if it names one.
        moved = working_directory(decision.modified_arguments)
        changed = verdict_of(
            policy,
            tool,
            {**arguments, **decision.modified_arguments},
            cwd=cwd if moved is None else moved,
            project=project,
        )
        if changed.action == "deny":
            tracker.refuse(call_id, "denied")
            return Judgement("denied", changed, decision)
    return Judgement("approved", verdict, decision)
