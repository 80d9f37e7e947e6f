"""Claude Code on its own stream, as an :class:`~hive_core.backends.AgentBackend`.

One process per turn, never pooled (the seed's rule for Claude Code): ``claude --input-format stream-json
--output-format stream-json --verbose --include-partial-messages --permission-prompt-tool stdio [--model M]
[--permission-mode MODE] [--resume ID [--fork-session]]``, started through
:func:`~hive_core.child_processes.open_child` (a process group of its own, marked as hive's). The turn sends the control channel's ``initialize`` and the prompt as one
stream-json ``user`` line, then reads stdout: control requests go to :class:`~.control.PermissionResponder`,
each in a task of its own (a question waiting for its answer never stops the stream), everything else to
:class:`~.stream.StreamMapper`, until the ``result``. Then stdin is closed and the process exits; the
``session_id`` of ``system/init`` is the next turn's ``--resume``. With :attr:`~.BackendOptions.fork`, the first
turn resumes with ``--fork-session``: the CLI copies the session under a new id (``system/init`` reports it) and
every later turn resumes that copy, the original left as it was.

Cancelled, the turn closes its open calls, answers its pending requests ``deny``, sends the control request
``interrupt`` and reads on for ``cancel_grace`` seconds; then closes stdin, SIGINT to the group, and after
another ``cancel_grace`` kills the group and every process carrying the child's mark. Failing (not installed,
exiting at start, printing no JSON, dying mid-turn, a ``result`` that is an error) it raises an error the runner
classifies, quoting the end of the CLI's stderr.
"""

from __future__ import annotations

import logging
from typing import Any
from typing import Final

import anyio
from anyio.abc import TaskGroup

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_core.tools import EventSink
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import excerpt
from hive_providers.backends.kit.backend_shell import TurnProcessBackend
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.process_turn import ProcessTurn
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.offline import prepare_offline
from hive_providers.backends.probe import require_executable

from .control import PermissionResponder
from .control import deny
from .messages import ResultMessage
from .messages import decode_message
from .stream import StreamMapper
from .stream import result_failure

__all__ = ["ClaudeCodeBackend"]


_CANCELLED_REQUEST: Final = "The turn was cancelled."
_log = logging.getLogger(__name__)


class ClaudeCodeBackend(TurnProcessBackend):
    """Drives Claude Code: one hive session's turns, each in a process of its own, in the CLI's own session."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        super().__init__(spec, options)
        self._offline: dict[str, str] | None = None
        """The private configuration's variables, written once per backend (not per turn: 0.4 ms each)."""

    def command(self) -> list[str]:
        """The command line of the next turn; raises :class:`BackendNotInstalled`."""
        options = self.options
        executable = require_executable(self.spec, options)
        arguments = list(options.arguments if options.arguments is not None else self.spec.arguments)
        if options.model:
            arguments += ["--model", options.model]
        if options.mode:
            arguments += ["--permission-mode", options.mode]
        if self._session_id:
            arguments += ["--resume", self._session_id]
            if self._forking:
                arguments.append("--fork-session")
        return [executable, *arguments]

    def environment(self) -> dict[str, str]:
        """The CLI's environment: hive's, the spec's quiet settings, the offline recipe's, the options'."""
        return cli_environment(self.spec, self.options, self._offline_environment)

    def _offline_environment(self) -> dict[str, str]:
        if self._offline is None:
            self._offline = prepare_offline(self.spec, self.options)
        return self._offline

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in a new Claude Code process."""
        process = await self.open_process(self.command(), self.environment())
        turn = _Turn(self, process, emit)
        try:
            await turn.run(request.content)
        finally:
            reported = turn.mapper.session_id
            # Forking, only a new id is the copy's: the original's must never be resumed in place.
            if reported is not None and not (self._forking and reported == self._session_id):
                self._session_id = reported
                self._forking = False
            with anyio.CancelScope(shield=True):
                await turn.close()


class _Turn(ProcessTurn):
    """One turn's process, stream and control channel."""

    stream_format = "stream-json"

    def __init__(self, backend: ClaudeCodeBackend, process: SupervisedProcess, emit: EventSink) -> None:
        super().__init__(backend.spec, backend.options, process, emit, call_ids=backend.call_ids)
        self.backend = backend
        self.mapper = StreamMapper(emit, self.tracker)
        self.responder = PermissionResponder(
            tracker=self.tracker,
            policy=self.options.policy,
            approvals=self.options.approvals,
            questions=self.options.questions,
            project=self.options.cwd,
        )
        self._initialize_id = backend.next_request_id("initialize")

    def outcome(self) -> TurnEndEvent:
        result = self.mapper.result
        assert result is not None
        problem = result_failure(result)
        if problem is not None:
            self._close_calls(FAILED_CALL_TEXT)
            raise ChatError(self.cli.describe(problem), code="internal")
        return self.mapper.finish()

    def _close_calls(self, text: str) -> None:
        self.tracker.close_all(text)
        self.mapper.stop_subagents()

    def _done(self) -> bool:
        return self.mapper.result is not None

    def _interrupt(self) -> dict[str, Any]:
        return {
            "type": "control_request",
            "request_id": self.backend.next_request_id("interrupt"),
            "request": {"subtype": "interrupt"},
        }

    async def _start(self, group: TaskGroup, prompt: str) -> None:
        await self._send(
            {
                "type": "control_request",
                "request_id": self._initialize_id,
                "request": {"subtype": "initialize", "hooks": None},
            }
        )
        await self._await_start(group, lambda: self._started, "did not answer initialize")
        await self._send(
            {
                "type": "user",
                "session_id": "",
                "message": {"role": "user", "content": prompt},
                "parent_tool_use_id": None,
            }
        )

    def _dispatch(self, group: TaskGroup, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_request":
            self._on_control_request(group, message)
        elif kind == "control_response":
            response = as_mapping(message.get("response"))
            if response.get("request_id") == self._initialize_id:
                if response.get("subtype") == "error":
                    error = text_of(response.get("error")) or "no reason given"
                    raise BackendStartError(self.cli.describe(f"{self.name} failed initialize: {error}"))
                self._started = True
            # Anything else: the answer to an interrupt, or the CLI echoing hive's own answers.
        elif kind == "control_cancel_request":
            scope = self._pending.get(text_of(message.get("request_id")) or "")
            if scope is not None:
                scope.cancel()
        elif not self._cancelling:
            try:
                self.mapper.on_message(decode_message(message))
            except Exception:
                _log.exception("mapping a Claude Code message failed")
        elif isinstance(result := decode_message(message), ResultMessage):
            self.mapper.result = result

    def _on_control_request(self, group: TaskGroup, message: dict[str, Any]) -> None:
        request_id = text_of(message.get("request_id"))
        request = as_mapping(message.get("request"))
        if request_id is None:
            _log.warning("%s sent a control request without an id: %s", self.name, excerpt(str(message), 200))
            return
        subtype = request.get("subtype")
        if subtype != "can_use_tool" or not isinstance(request.get("input"), dict):
            what = f"{subtype!r}" if isinstance(subtype, str) else "a malformed control request"
            group.start_soon(self._reply_error, request_id, f"hive does not serve {what}")
            return
        if self._cancelling:
            group.start_soon(self._reply, request_id, deny(_CANCELLED_REQUEST))
            return
        group.start_soon(self._answer, request_id, request)

    async def _answer(self, request_id: str, request: dict[str, Any]) -> None:
        scope = anyio.CancelScope()
        self._pending[request_id] = scope
        response: dict[str, Any] | None = None
        try:
            with scope:
                try:
                    response = await self.responder.can_use_tool(request)
                except Exception as exc:
                    _log.exception("answering a Claude Code permission request failed")
                    response = deny(f"hive could not judge this request: {exc}")
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._reply(request_id, deny(_CANCELLED_REQUEST))
            raise
        finally:
            self._pending.pop(request_id, None)
        if scope.cancel_called or response is None:
            return  # the CLI withdrew the request: it wants no answer
        await self._reply(request_id, response)

    async def _reply(self, request_id: str, response: dict[str, Any]) -> None:
        await self._send_quietly(
            {
                "type": "control_response",
                "response": {"subtype": "success", "request_id": request_id, "response": response},
            }
        )

    async def _reply_error(self, request_id: str, error: str) -> None:
        await self._send_quietly(
            {
                "type": "control_response",
                "response": {"subtype": "error", "request_id": request_id, "error": error},
            }
        )
