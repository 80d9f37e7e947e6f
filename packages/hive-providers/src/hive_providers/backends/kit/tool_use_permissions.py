"""Tool calls asked about by Claude Code's tool name and input, judged under hive's rules.

Claude Code's ``can_use_tool`` control request names the tool (``Bash``, ``Edit``...) and its input; Copilot's
``permission.requested`` is mapped onto the same names (a ``shell`` request as ``Bash``). :class:`ToolUsePermissions`
judges such a request as hive judges its own tools (``Bash`` as ``execute_command``, ``Edit`` as ``edit_file``,
``Write`` as ``write_file``, ``Read`` as ``read_file``, any other tool under its own name): the policy first, its
``ask`` verdicts through the approval service, whose ``hitl_request`` names the hive call id of the ``tool_use``
asking. An approval answers ``allow`` with ``updatedInput`` (the input, with the human's modified arguments put back
under Claude's own keys); a refusal answers ``deny`` with the reason, which the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final

from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE

from .json_values import as_mapping
from .judging import CallJudge
from .judging import refusal_text
from .judging import working_directory
from .tool_calls import ToolCallTracker
from .tool_calls import text_of

__all__ = [
    "TOOL_USE_KINDS",
    "ToolUsePermissions",
    "allow",
    "call_directory",
    "deny",
    "hive_arguments",
]

TOOL_USE_KINDS: Final[Mapping[str, str]] = {
    "Bash": "execute",
    "Read": "read",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Write": "edit",
    "NotebookEdit": "edit",
    "Grep": "search",
    "Glob": "search",
    "WebFetch": "fetch",
}
"""Claude Code's tools by the ACP kind whose hive tool name their ``tool_start`` carries (``Bash`` ->
``execute_command``); other tools keep their own name, in snake case."""

# Claude's argument keys for the hive arguments a human may modify, per hive tool.
_CLAUDE_KEYS: Final[Mapping[str, Mapping[str, str]]] = {
    EXECUTE_COMMAND: {"command": "command"},
    READ_FILE: {"path": "file_path"},
    WRITE_FILE: {"path": "file_path", "content": "content"},
    EDIT_FILE: {"path": "file_path", "content": "new_string"},
}
_SEARCH_TOOLS: Final = frozenset({"Grep", "Glob", "LS"})
_HIVE_TOOLS: Final[Mapping[str, str]] = {
    "Bash": EXECUTE_COMMAND,
    "Read": READ_FILE,
    "Write": WRITE_FILE,
    "Edit": EDIT_FILE,
    "MultiEdit": EDIT_FILE,
    "NotebookEdit": EDIT_FILE,
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
        if tool == EDIT_FILE and hive_key == "path" and value is None:
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


class ToolUsePermissions:
    """Answers one turn's ``can_use_tool``-shaped requests (see the module)."""

    def __init__(
        self,
        *,
        tracker: ToolCallTracker,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        project: Path | None = None,
    ) -> None:
        self._tracker = tracker
        self._judge = CallJudge(policy, approvals, tracker, project)

    async def can_use_tool(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one ``can_use_tool`` request's ``request`` object."""
        tool_name = text_of(request.get("tool_name")) or "tool"
        tool_input = as_mapping(request.get("input"))
        call_id = self._tracker.correlate(
            {
                "toolCallId": text_of(request.get("tool_use_id")),
                "title": tool_name,
                "kind": TOOL_USE_KINDS.get(tool_name),
                "rawInput": tool_input,
            }
        )
        tool, arguments = hive_arguments(tool_name, tool_input)
        judged = await self._judge(call_id, tool, arguments, cwd=call_directory(tool_name, tool_input))
        refused = refusal_text(judged)
        if refused is not None:
            return deny(refused)
        modified = judged.decision.modified_arguments if judged.decision is not None else None
        return allow(_claude_input(tool, tool_input, modified))
