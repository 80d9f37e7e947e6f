"""ACP permissions: the answer to ``session/request_permission``, and the approval of the agent's file and terminal
requests.

A permission request is judged as the hive tool its ``kind`` names (``execute`` as ``execute_command``, ``edit``
as ``edit_file``...; :func:`~hive_providers.backends.kit.permission_arguments.permission_arguments`) by the kit's
judge, and answered with one of the offered options chosen by kind. A file or terminal request is authorised by
:meth:`AcpPermissions.authorise`: the policy first, its ``ask`` verdicts to the approval service, whose
``hitl_request`` names the hive call id of the tool the request belongs to (a call of hive's own is started when
none is running); what the human approved for a running call is not asked about again when the agent carries it
out through hive.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Final
from typing import Literal

from acp import RequestError

from hive_core.approvals import ApprovalRequest
from hive_core.approvals import Verdict
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_protocol import RefusalKind
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.judging import verdict_of
from hive_providers.backends.kit.judging import working_directory
from hive_providers.backends.kit.permission_arguments import permission_arguments
from hive_providers.backends.kit.permission_arguments import raw_input
from hive_providers.backends.kit.tool_calls import text_of

__all__ = [
    "CANCELLED_OUTCOME",
    "REFUSED",
    "AcpPermissions",
    "Option",
    "PermissionKind",
    "options_of",
    "selected",
]

REFUSED: Final = -32001
"""The JSON-RPC error code of a file or terminal request that hive's rules or the human refused."""

CANCELLED_OUTCOME: Final[dict[str, Any]] = {"outcome": {"outcome": "cancelled"}}
"""The answer to a permission request when no offered option fits."""

PermissionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]
"""The ``PermissionOptionKind`` values hive chooses by."""

_TARGETS: Final[Mapping[str, str]] = {READ_FILE: "read", WRITE_FILE: "edit", EDIT_FILE: "edit"}


@dataclass(frozen=True)
class Option:
    """One option of a permission request."""

    option_id: str
    """The agent's id for it: what the answer quotes."""
    name: str
    """Its label."""
    kind: str | None
    """Its ``PermissionOptionKind`` (``allow_once``, ``allow_always``, ``reject_once``, ``reject_always``)."""


def options_of(value: object) -> list[Option]:
    """The options of a permission request's ``options`` list (entries without an ``optionId`` are skipped)."""
    options: list[Option] = []
    for entry in as_list(value):
        fields = as_mapping(entry)
        option_id = fields.get("optionId")
        if isinstance(option_id, str) and option_id:
            kind = fields.get("kind")
            name = fields.get("name")
            options.append(
                Option(
                    option_id=option_id,
                    name=name if isinstance(name, str) else option_id,
                    kind=kind if isinstance(kind, str) else None,
                )
            )
    return options


def selected(option_id: str) -> dict[str, Any]:
    """The answer that chooses the option ``option_id``."""
    return {"outcome": {"outcome": "selected", "optionId": option_id}}


def _select(options: list[Option], kinds: tuple[PermissionKind, ...]) -> dict[str, Any]:
    """The first option of the first of ``kinds`` offered (an allow falls back to the other allow kind), else the
    ``cancelled`` outcome: never an option picked by position or id, nor one of a kind hive does not know."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return selected(option.option_id)
    return CANCELLED_OUTCOME


def _refused(what: str, reason: str) -> RequestError:
    return RequestError(REFUSED, f"Permission denied: {what}: {reason}", {"reason": reason})


class AcpPermissions:
    """Judges one turn's permission requests and authorises its file and terminal requests (see the module).

    The ``context``'s policy judges first (``None``: every request is asked about); its approvals answer the
    ``ask`` verdicts (``None``: they are refused).
    """

    def __init__(self, context: JudgingContext) -> None:
        self._tracker = context.tracker
        self._cwd = context.cwd
        self.policy = context.policy
        """The permission rules the turn's requests are judged by."""
        self._approvals = context.approvals
        self._judge = context.judge()
        self._granted: list[tuple[str, str, str]] = []

    def resolve(self, path: str) -> Path:
        """``path`` made absolute from the working directory, ``.`` and ``..`` folded (links are the rules')."""
        return Path(os.path.normpath(self._cwd / path))

    async def request(self, tool_call: Mapping[str, Any], options: list[Option]) -> dict[str, Any]:
        """``session/request_permission``: the rules' verdict, else the human's, as one of the offered options
        chosen by kind."""
        call_id = self._tracker.correlate(tool_call)
        call = self._tracker.get(call_id)
        assert call is not None
        tool, arguments = permission_arguments(call, tool_call)
        judged = await self._judge(
            call_id, tool, arguments, cwd=working_directory(raw_input(call, tool_call))
        )
        if not judged.runs:
            return _select(options, ("reject_once",))
        if judged.decision is None:  # the rules allowed it
            return _select(options, ("allow_once", "allow_always"))
        self._grant(call_id, tool, arguments)
        if judged.decision.always_approve:
            return _select(options, ("allow_always", "allow_once"))
        return _select(options, ("allow_once", "allow_always"))

    def verdict(self, tool: str, arguments: Mapping[str, Any], *, cwd: str | None = None) -> Verdict:
        """The rules' verdict on a request judged as hive's ``tool`` with ``arguments``, run in ``cwd``."""
        return verdict_of(self.policy, tool, arguments, cwd=cwd, project=None if cwd is None else self._cwd)

    async def authorise(self, tool: str, arguments: dict[str, Any], verdict: Verdict, what: str) -> None:
        """Raise the refusal ``RequestError`` unless ``verdict`` allows or the human approves (inside the running
        call, or a call of hive's own started for the request)."""
        if verdict.action == "allow":
            return
        if verdict.action == "deny":
            raise _refused(what, verdict.reason)
        if self._granted_already(tool, arguments):
            return
        if self._approvals is None:
            raise _refused(what, f"{verdict.reason}; no one can approve it")
        running = self._tracker.latest_running()
        local = running is None
        call_id = self._tracker.start_local(tool, arguments) if running is None else running.call_id
        decision = await self._approvals.request(
            ApprovalRequest(
                call_id=call_id,
                tool_name=tool,
                arguments=arguments,
                reason=verdict.reason,
                level=verdict.level,
            )
        )
        if local:
            refusal: RefusalKind | None = None if decision.approved else "rejected"
            if refusal is not None:
                self._tracker.refuse(call_id, refusal)
            self._tracker.end(
                call_id,
                success=decision.approved,
                output="approved" if decision.approved else decision.reason,
            )
        if not decision.approved:
            raise _refused(what, decision.reason or "the user rejected it")

    def _grant(self, call_id: str, tool: str, arguments: Mapping[str, Any]) -> None:
        """Remember what the human approved for call ``call_id``, so the agent carrying it out through hive's
        files or terminals is not asked about a second time."""
        target = self._target(tool, arguments)
        if target is not None:
            self._granted.append((call_id, *target))

    def _granted_already(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the human approved exactly this file change (or read), or this command, for a call still
        running."""
        target = self._target(tool, arguments)
        if target is None:
            return False
        category, what = target
        for call_id, granted, approved in self._granted:
            call = self._tracker.get(call_id)
            if call is None or not call.running or approved != what:
                continue
            if granted == category or (granted == "edit" and category == "read"):
                return True
        return False

    def _target(self, tool: str, arguments: Mapping[str, Any]) -> tuple[str, str] | None:
        if tool == EXECUTE_COMMAND:
            command = text_of(arguments.get("command"))
            return None if command is None else ("command", command.strip())
        category = _TARGETS.get(tool)
        path = text_of(arguments.get("path"))
        return None if category is None or path is None else (category, str(self.resolve(path)))
