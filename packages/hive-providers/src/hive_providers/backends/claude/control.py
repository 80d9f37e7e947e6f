"""Claude Code's control requests, answered under hive's rules: permissions and questions.

With ``--permission-prompt-tool stdio`` every tool call the CLI's own rules do not allow arrives as a
``control_request`` of subtype ``can_use_tool``. :class:`PermissionResponder` judges it as hive judges its own
tools (``Bash`` as ``execute_command``, ``Edit`` as ``edit_file``, ``Write`` as ``write_file``, ``Read`` as
``read_file``, any other tool under its own name): the policy first, its ``ask`` verdicts through the approval
service, whose ``hitl_request`` names the hive call id of the ``tool_use`` asking. An approval answers ``allow``
with ``updatedInput`` (the input, with the human's modified arguments put back under Claude's own keys); a refusal
answers ``deny`` with the reason, which the model reads.

``AskUserQuestion`` arrives the same way; it becomes one ``question_request`` through the question service, and
the answer is ``allow`` with ``updatedInput`` = the original input plus ``answers`` (question text to the chosen
label, several labels of a multi-select joined with ``", "``, or the free text). A decline (no service, no
answer, a timeout) is a ``deny`` with a reason: the CLI records it in ``permission_denials`` and the turn goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from hive_core.approvals import ApprovalService, ToolCallPolicy
from hive_core.questions import QuestionService
from hive_protocol import QuestionRequestEvent
from hive_providers.backends.kit.ask_user_question import DECLINED_QUESTION, question_answers, questions_of
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import judge_call, working_directory
from hive_providers.backends.kit.tool_calls import ToolCallTracker, text_of

from .stream import TOOL_KINDS

__all__ = [
    "DECLINED_QUESTION",
    "QUESTION_TOOL",
    "PermissionResponder",
    "allow",
    "deny",
    "hive_arguments",
]

QUESTION_TOOL: Final = "AskUserQuestion"
"""The tool through which Claude Code asks its user questions."""

# Claude's argument keys for the hive arguments a human may modify, per hive tool.
_CLAUDE_KEYS: Final[Mapping[str, Mapping[str, str]]] = {
    "execute_command": {"command": "command"},
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path", "content": "content"},
    "edit_file": {"path": "file_path", "content": "new_string"},
}
_SEARCH_TOOLS: Final = frozenset({"Grep", "Glob", "LS"})
_HIVE_TOOLS: Final[Mapping[str, str]] = {
    "Bash": "execute_command",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "NotebookEdit": "edit_file",
}


def allow(updated_input: Mapping[str, Any]) -> dict[str, Any]:
    """The ``can_use_tool`` answer that runs the call with ``updated_input``."""
    return {"behavior": "allow", "updatedInput": dict(updated_input)}


def deny(message: str) -> dict[str, Any]:
    """The ``can_use_tool`` answer that refuses the call; the model reads ``message``."""
    return {"behavior": "deny", "message": message, "interrupt": False}


def hive_arguments(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The hive tool and arguments a Claude tool call is judged as."""
    tool = _HIVE_TOOLS.get(tool_name)
    if tool is None:
        return tool_name, dict(tool_input)
    arguments: dict[str, Any] = {}
    for hive_key, claude_key in _CLAUDE_KEYS[tool].items():
        value = tool_input.get(claude_key)
        if tool == "edit_file" and hive_key == "path" and value is None:
            value = tool_input.get("notebook_path")
        if value is not None:
            arguments[hive_key] = value
    return tool, arguments


def call_directory(tool_name: str, tool_input: Mapping[str, Any]) -> object:
    """Where a Claude tool call runs, when its input says: a working-directory key, or the directory a search tool
    (``Grep``, ``Glob``, ``LS``) searches; ``None`` for the project."""
    named = working_directory(tool_input)
    if named is None and tool_name in _SEARCH_TOOLS:
        return tool_input.get("path")
    return named


def _claude_input(
    tool: str, tool_input: Mapping[str, Any], modified: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``tool_input`` with the human's modified hive arguments put back under Claude's keys."""
    updated = dict(tool_input)
    if not modified:
        return updated
    keys = _CLAUDE_KEYS.get(tool, {})
    for key, value in modified.items():
        updated[keys.get(key, key)] = value
    return updated


class PermissionResponder:
    """Answers one turn's ``can_use_tool`` requests (see the module)."""

    def __init__(
        self,
        *,
        tracker: ToolCallTracker,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        questions: QuestionService | None,
        project: Path | None = None,
    ) -> None:
        self._tracker = tracker
        self._project = project
        self._policy = policy
        self._approvals = approvals
        self._questions = questions

    async def can_use_tool(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one ``can_use_tool`` request's ``request`` object."""
        tool_name = text_of(request.get("tool_name")) or "tool"
        tool_input = as_mapping(request.get("input"))
        tool_use_id = text_of(request.get("tool_use_id"))
        if tool_name == QUESTION_TOOL:
            return await self._ask(tool_input, tool_use_id)
        call_id = self._tracker.correlate(
            {
                "toolCallId": tool_use_id,
                "title": tool_name,
                "kind": TOOL_KINDS.get(tool_name),
                "rawInput": tool_input,
            }
        )
        tool, arguments = hive_arguments(tool_name, tool_input)
        judged = await judge_call(
            call_id,
            tool,
            arguments,
            policy=self._policy,
            approvals=self._approvals,
            tracker=self._tracker,
            cwd=call_directory(tool_name, tool_input),
            project=self._project,
        )
        match judged.outcome:
            case "allowed":
                return allow(tool_input)
            case "denied":
                return deny(f"Permission denied: {judged.verdict.reason}")
            case "unavailable":
                return deny(f"Permission denied: {judged.verdict.reason}; no one can approve it")
            case "rejected":
                assert judged.decision is not None
                return deny(f"The user rejected this call: {judged.decision.reason or 'no reason given'}")
            case "approved":
                assert judged.decision is not None
                return allow(_claude_input(tool, tool_input, judged.decision.modified_arguments))

    async def _ask(self, tool_input: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        questions = questions_of(tool_input)
        if not questions:
            return deny("The question had no question text hive could show.")
        if self._questions is None:
            return deny(f"{DECLINED_QUESTION} (no one can answer questions here)")
        call_id = self._call_of(tool_use_id)
        answers = await self._questions.ask(
            QuestionRequestEvent(id=tool_use_id or "claude-question", call_id=call_id, questions=questions)
        )
        written = None if answers is None else question_answers(questions, answers)
        if written is None:
            return deny(DECLINED_QUESTION)
        return allow({**tool_input, "answers": written})

    def _call_of(self, tool_use_id: str | None) -> str | None:
        if tool_use_id is None:
            return None
        return next(
            (call.call_id for call in self._tracker.calls if call.running and tool_use_id in call.acp_ids),
            None,
        )
