"""Pi's tool calls, judged under hive's rules before Pi runs them.

Pi has no permission system: hive's approval extension (:mod:`.rpc`) holds each call in Pi's ``tool_call`` hook and
asks hive. :class:`ToolJudge` judges it as hive judges its own tools (``bash`` as ``execute_command``, ``edit`` as
``edit_file``, ``write`` as ``write_file``, ``read`` as ``read_file``, any other tool through
:func:`~hive_providers.backends.kit.permission_arguments.permission_arguments` under the ACP kind Pi's tool maps to): the
policy first, its ``ask`` verdicts through the approval service, whose ``hitl_request`` names the hive call id
of the running ``tool_start``. An approval lets the call run, with the human's changed arguments put back under
Pi's keys; a refusal blocks it with the reason, which the model reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final

from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.judging import refusal_text
from hive_providers.backends.kit.judging import working_directory
from hive_providers.backends.kit.permission_arguments import permission_arguments
from hive_providers.backends.kit.tool_calls import TrackedCall
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.tool_calls import tool_name as hive_tool_name

from .events import TOOL_KINDS
from .rpc import ApprovalDialog
from .rpc import approval_value

__all__ = ["ToolJudge", "hive_arguments"]

# Pi's argument keys for the hive arguments a human may modify, per hive tool.
_PI_KEYS: Final[Mapping[str, Mapping[str, str]]] = {
    EXECUTE_COMMAND: {"command": "command"},
    READ_FILE: {"path": "path"},
    WRITE_FILE: {"path": "path", "content": "content"},
    EDIT_FILE: {"path": "path"},
}
_HIVE_TOOLS: Final[Mapping[str, str]] = {
    "bash": EXECUTE_COMMAND,
    "read": READ_FILE,
    "write": WRITE_FILE,
    "edit": EDIT_FILE,
}


def hive_arguments(tool_name: str, tool_input: Mapping[str, Any], cwd: Path) -> tuple[str, dict[str, Any]]:
    """The hive tool and arguments a Pi tool call is judged as; paths are made absolute from ``cwd``."""
    tool = _HIVE_TOOLS.get(tool_name)
    if tool is None:
        return _by_kind(tool_name, tool_input)
    arguments: dict[str, Any] = {}
    for hive_key, pi_key in _PI_KEYS[tool].items():
        value = tool_input.get(pi_key)
        if isinstance(value, str):
            arguments[hive_key] = os.path.normpath(cwd / value) if hive_key == "path" else value
    if tool == EDIT_FILE:
        # Pi 0.74 edits a file through ``edits: [{oldText, newText}]``; older builds take one ``newText``.
        edits = [as_mapping(entry) for entry in as_list(tool_input.get("edits"))] or [dict(tool_input)]
        new = [text_of(entry.get("newText")) for entry in edits]
        content = "\n".join(text for text in new if text is not None)
        if content:
            arguments["content"] = content
    return tool, arguments


def _by_kind(tool_name: str, tool_input: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = TOOL_KINDS.get(tool_name)
    call = TrackedCall(
        call_id="", acp_ids=set(), tool=hive_tool_name(kind, tool_name), input=dict(tool_input)
    )
    return permission_arguments(call, {"kind": kind, "title": tool_name, "rawInput": dict(tool_input)})


def _pi_input(tool: str, modified: Mapping[str, Any] | None) -> dict[str, Any]:
    """The human's modified hive arguments under Pi's keys (only those Pi's tool takes)."""
    keys = _PI_KEYS.get(tool, {})
    return {keys[key]: value for key, value in (modified or {}).items() if key in keys}


class ToolJudge:
    """Answers one turn's approval dialogs (see the module)."""

    def __init__(self, context: JudgingContext) -> None:
        self._tracker = context.tracker
        self._cwd = context.cwd
        self._judge = context.judge()

    async def judge(self, dialog: ApprovalDialog) -> dict[str, Any]:
        """The ``extension_ui_response`` for one held call."""
        call_id = self._tracker.correlate(
            {
                "toolCallId": dialog.tool_call_id,
                "title": dialog.tool_name,
                "kind": TOOL_KINDS.get(dialog.tool_name),
                "rawInput": dialog.tool_input,
            }
        )
        tool, arguments = hive_arguments(dialog.tool_name, dialog.tool_input, self._cwd)
        judged = await self._judge(call_id, tool, arguments, cwd=working_directory(dialog.tool_input))
        refused = refusal_text(judged)
        if refused is not None:
            return approval_value(dialog.request_id, approved=False, reason=refused)
        modified = judged.decision.modified_arguments if judged.decision is not None else None
        return approval_value(dialog.request_id, approved=True, tool_input=_pi_input(tool, modified))
