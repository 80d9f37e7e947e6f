"""May a CLI's tool call run? The permission rules first, then whoever answers approvals — once for every adapter.

ACP's ``session/request_permission``, Claude Code's ``can_use_tool``, Pi's approval dialog and OpenCode's
``permission.asked`` all ask this; only the reply written back differs. :func:`judge_call` answers it through
hive-core's one decision (:func:`hive_core.approvals.decide`, the one the built-in loop's approval gate makes) and
records a refusal on the call, and each adapter turns the :class:`Judgement` into its CLI's reply. A
:class:`CallJudge` holds what a turn judges with, so an adapter only names the call.

A CLI may say where a call runs (Codex's ``cwd``, a tool input's ``workdir``...). Elsewhere than the project, the
call is judged there: a command as ``cd <there> && <command>`` (so ``cat secret.txt`` in ``/elsewhere`` reads
``/elsewhere/secret.txt``), a relative path joined to it, the directory itself as a read, and outside the project
the call is asked about at least. Every adapter passes its CLI's directory here, so this is the one place it is
judged.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final

from hive_core.approvals import NO_RULES
from hive_core.approvals import ApprovalService
from hive_core.approvals import Judgement
from hive_core.approvals import Outcome
from hive_core.approvals import ToolCallPolicy
from hive_core.approvals import Verdict
from hive_core.approvals import decide
from hive_core.approvals import strictest
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import READ_FILE

from .tool_calls import ToolCallTracker

__all__ = [
    "NO_RULES",
    "WORKING_DIRECTORY_KEYS",
    "CallJudge",
    "Judgement",
    "JudgingContext",
    "Outcome",
    "elsewhere",
    "judge_call",
    "refusal_text",
    "verdict_of",
    "working_directory",
]

WORKING_DIRECTORY_KEYS: Final = ("cwd", "workdir", "working_dir", "workingDirectory", "dir_path", "directory")
"""The keys under which CLIs' tool inputs name the directory a call runs in (or searches, for a search tool)."""

_PATH_ARGUMENTS: Final = ("path", "source", "destination")
_LISTING_TOOLS: Final = frozenset({LIST_DIRECTORY, GLOB_FILES, GREP_FILES})


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
        policy.evaluate(READ_FILE, {"path": place}),
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
    if tool == EXECUTE_COMMAND and isinstance(command, str) and command.strip():
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
    also: Verdict | None = None,
    said: Callable[[str], str] | None = None,
) -> Judgement:
    """Judge the call ``call_id`` (as hive's ``tool`` with ``arguments``, run in ``cwd`` of ``project``: see
    :func:`verdict_of`) with :func:`hive_core.approvals.decide`: the rules, then ``approvals`` for what they ask
    about (``None``: nobody can answer, so it is refused). ``also`` is a further verdict the call must pass (the
    strictest wins); ``said`` adds the CLI's own words to the reason the person is shown. A refusal is recorded on
    the call."""

    def judge(policy: ToolCallPolicy, judged: Mapping[str, Any], changes: Mapping[str, Any]) -> Verdict:
        # A change is judged where it says it runs, else where the call did.
        moved = working_directory(changes) if changes else None
        verdict = verdict_of(policy, tool, judged, cwd=cwd if moved is None else moved, project=project)
        return verdict if also is None or changes else strictest([verdict, also])

    place = elsewhere(cwd, project)

    def explain(reason: str) -> str:
        if place is not None:
            reason = f"{reason} (the call runs in {place})"
        return reason if said is None else said(reason)

    judged = await decide(
        policy, approvals, call_id=call_id, tool_name=tool, arguments=arguments, judge=judge, explain=explain
    )
    if judged.refusal is not None:
        tracker.refuse(call_id, judged.refusal)
    return judged


def refusal_text(judged: Judgement) -> str | None:
    """What the model reads about a call that does not run (``None`` for one that runs)."""
    match judged.outcome:
        case "denied":
            return f"Permission denied: {judged.verdict.reason}"
        case "unavailable":
            return f"Permission denied: {judged.verdict.reason}; no one can approve it"
        case "rejected":
            reason = judged.decision.reason if judged.decision is not None else None
            return f"The user rejected this call: {reason or 'no reason given'}"
        case "allowed" | "approved":
            return None


@dataclass(frozen=True)
class CallJudge:
    """What one turn judges its CLI's calls with: the rules, the approver, the turn's calls and the project."""

    policy: ToolCallPolicy | None
    """The permission rules (``None``: every call is asked about)."""
    approvals: ApprovalService | None
    """Who answers what the rules ask about (``None``: nobody, so it is refused)."""
    tracker: ToolCallTracker
    """The turn's tool calls, on which a refusal is recorded."""
    project: str | os.PathLike[str] | None = None
    """The directory the CLI was started in."""

    async def __call__(
        self, call_id: str, tool: str, arguments: dict[str, Any], *, cwd: object = None
    ) -> Judgement:
        """:func:`judge_call` for the call ``call_id``, run in ``cwd``."""
        return await judge_call(
            call_id,
            tool,
            arguments,
            policy=self.policy,
            approvals=self.approvals,
            tracker=self.tracker,
            cwd=cwd,
            project=self.project,
        )


@dataclass(frozen=True, kw_only=True)
class JudgingContext:
    """What an adapter judges one turn's calls in: the turn's calls, the project, the rules and the approver."""

    tracker: ToolCallTracker
    """The turn's tool calls."""
    cwd: Path
    """The absolute directory the CLI was started in."""
    policy: ToolCallPolicy | None
    """The permission rules (``None``: every call is asked about)."""
    approvals: ApprovalService | None
    """Who answers what the rules ask about (``None``: nobody, so it is refused)."""

    def judge(self) -> CallJudge:
        """The :class:`CallJudge` of this turn."""
        return CallJudge(self.policy, self.approvals, self.tracker, self.cwd)
