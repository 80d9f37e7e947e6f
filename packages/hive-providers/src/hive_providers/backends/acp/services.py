"""What hive serves an ACP agent during a turn: one dispatcher over permissions, files, terminals and questions.

Each is its own module: :mod:`.permissions` answers ``session/request_permission`` and authorises the rest,
:mod:`.files` serves ``fs/*``, :mod:`.terminals` serves ``terminal/*``, :mod:`.questions` answers the questions
that arrive as permission requests. Everything the agent asks for is judged as hive judges its own tools.

Handlers take the raw ``params`` dict of the request and return the raw result dict, or raise
:class:`acp.RequestError`.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import RequestError

from hive_core.approvals import ApprovalService
from hive_core.approvals import ToolCallPolicy
from hive_core.questions import QuestionService
from hive_core.sandbox import SandboxSettings
from hive_core.tools import EventSink
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.tool_calls import ToolCallTracker

from .files import AcpFiles
from .permissions import AcpPermissions
from .permissions import options_of
from .questions import PermissionQuestions
from .questions import is_question
from .terminals import AcpTerminals

__all__ = ["AcpClientServices"]


class AcpClientServices:
    """Answers the agent's requests to the client for one turn.

    ``policy`` judges first (``None``: every request is asked about); ``approvals`` answers the ``ask`` verdicts
    (``None``: they are refused); ``questions`` answers questions that arrive as permission requests (``None``:
    they are declined); ``sandbox`` confines terminal commands (``None``: the default settings, ``auto``).
    """

    def __init__(
        self,
        *,
        emit: EventSink,
        tracker: ToolCallTracker,
        cwd: Path,
        policy: ToolCallPolicy | None,
        approvals: ApprovalService | None,
        questions: QuestionService | None,
        sandbox: SandboxSettings | None,
        session_id_of_hive_call: Callable[[str], str | None] | None = None,
    ) -> None:
        self._emit = emit
        project = Path(os.path.abspath(cwd))
        self._permissions = AcpPermissions(
            JudgingContext(tracker=tracker, cwd=project, policy=policy, approvals=approvals)
        )
        self._questions = PermissionQuestions(tracker=tracker, questions=questions)
        self._files = AcpFiles(self._permissions)
        self._terminals = AcpTerminals(cwd=project, permissions=self._permissions, sandbox=sandbox)
        self.session_id_of_hive_call = session_id_of_hive_call
        """Kept for the backend: maps a hive call id to the agent session it belongs to."""
        self.read_text_file = self._files.read_text_file
        self.write_text_file = self._files.write_text_file
        self.create_terminal = self._terminals.create_terminal
        self.terminal_output = self._terminals.terminal_output
        self.wait_for_terminal_exit = self._terminals.wait_for_terminal_exit
        self.kill_terminal = self._terminals.kill_terminal
        self.release_terminal = self._terminals.release_terminal
        self._handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "session/request_permission": self.request_permission,
            "fs/read_text_file": self.read_text_file,
            "fs/write_text_file": self.write_text_file,
            "terminal/create": self.create_terminal,
            "terminal/output": self.terminal_output,
            "terminal/wait_for_exit": self.wait_for_terminal_exit,
            "terminal/kill": self.kill_terminal,
            "terminal/release": self.release_terminal,
        }

    async def handle(self, method: str, params: object) -> dict[str, Any]:
        """Serve the agent->client request ``method``; an unknown one raises ``RequestError.method_not_found``."""
        handler = self._handlers.get(method)
        if handler is None:
            raise RequestError.method_not_found(method)
        return await handler(as_mapping(params))

    async def request_permission(self, params: dict[str, Any]) -> dict[str, Any]:
        """``session/request_permission``: a Reasonix question becomes a ``question_request``; any other request
        is judged (:meth:`AcpPermissions.request`)."""
        tool_call = as_mapping(params.get("toolCall"))
        options = options_of(params.get("options"))
        if is_question(tool_call, options):
            return await self._questions.answer(tool_call, options)
        return await self._permissions.request(tool_call, options)

    async def aclose(self) -> None:
        """Kill every terminal still open and remove their output files."""
        await self._terminals.aclose()
