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
from typing import Any
from typing import Final

from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.questions import QuestionService
from hive_protocol import QuestionRequestEvent
from hive_providers.backends.kit.ask_user_question import DECLINED_QUESTION
from hive_providers.backends.kit.ask_user_question import question_answers
from hive_providers.backends.kit.ask_user_question import questions_of
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.tool_use_permissions import ToolUsePermissions
from hive_providers.backends.kit.tool_use_permissions import allow
from hive_providers.backends.kit.tool_use_permissions import deny
from hive_providers.backends.kit.tool_use_permissions import hive_arguments

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


class PermissionResponder(ToolUsePermissions):
    """Answers one turn's ``can_use_tool`` requests (see the module): questions here, every other tool through
    :class:`~hive_providers.backends.kit.tool_use_permissions.ToolUsePermissions`."""

    def __init__(
        self,
        *,
        tracker: ToolCallTracker,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        questions: QuestionService | None,
        project: Path | None = None,
    ) -> None:
        super().__init__(tracker=tracker, policy=policy, approvals=approvals, project=project)
        self._questions = questions

    async def can_use_tool(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one ``can_use_tool`` request's ``request`` object."""
        if text_of(request.get("tool_name")) == QUESTION_TOOL:
            return await self._ask(as_mapping(request.get("input")), text_of(request.get("tool_use_id")))
        return await super().can_use_tool(request)

    async def _ask(self, tool_input: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        questions = questions_of(tool_input)
        if not questions:
            return deny("The question had no question text hive could show.")
        if self._questions is None:
            return deny(f"{DECLINED_QUESTION} (no one can answer questions here)")
        call_id = self._tracker.running_call_id(tool_use_id)
        answers = await self._questions.ask(
            QuestionRequestEvent(id=tool_use_id or "claude-question", call_id=call_id, questions=questions)
        )
        written = None if answers is None else question_answers(questions, answers)
        if written is None:
            return deny(DECLINED_QUESTION)
        return allow({**tool_input, "answers": written})
