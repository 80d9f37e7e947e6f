"""OMP (oh-my-pi, a fork of Pi) on its own streams, as an :class:`~hive_core.backends.AgentBackend`.

OMP speaks Pi's events, so :class:`OmpBackend` is a :class:`~hive_providers.backends.pi.PiBackend` with OMP's
command line and rpc-ui handshake: one process per turn, sessions in a private ``--session-dir``, resumed with
``--session ID``, an endpoint through the private ``models.yml`` of :mod:`.offline`.

Without a question service: ``omp --mode json -p`` with the prompt on stdin, ended by ``agent_end``. With one:
``omp --mode rpc-ui`` (no extension of hive's: OMP's own ``ask`` tool asks). ``set_ask_dialog`` goes first (OMP
keeps structured questions off in each new process), then ``get_state`` for the session id, then the prompt as
the RPC ``prompt`` command. The run ends with ``session_settled`` (or a ``prompt_result`` that says the session
settled), not with ``agent_end``: background work may wake the agent after it; ``prompt_result.status`` is the
outcome: ``completed``; ``aborted``, the end of a run whose question was declined, a normal end whose ``turn_end``
says ``tool_terminated`` (the ask tool ended it); ``error``, the turn's error. Each ``ask`` dialog becomes one
``question_request`` answered in a task of its own (:mod:`.ask`); OMP's own ``cancel`` frame for a dialog (it
settled it itself) closes the question and is never answered; dialogs of other extensions are answered cancelled,
notices ignored. A build that rejects ``set_ask_dialog`` (older than the command) is sent no prompt: the turn runs
in JSON mode, with a warning naming OMP's version, and so do later turns.

Cancelled, the turn closes its open calls and questions without answering them and sends only ``abort``; it reads
on for ``cancel_grace`` seconds for the run to settle, then closes stdin; SIGINT and the kill follow as for Pi.
OMP cannot copy a session from the command line: ``fork`` (with ``resume``) raises
:class:`~hive_providers.backends.kit.errors.BackendUnavailable` when the backend is made, before anything starts.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from anyio.abc import TaskGroup

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_core.questions import Answers
from hive_core.tools import EventSink
from hive_protocol import QuestionRequestEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.kit.json_values import as_object
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.offline import OfflineContext
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.offline import private_home
from hive_providers.backends.pi.backend import PiBackend
from hive_providers.backends.pi.backend import PiTurn
from hive_providers.backends.pi.events import RUN_ENDS
from hive_providers.backends.pi.rpc import DIALOG_METHODS

from .ask import ASK_METHOD
from .ask import CANCEL_METHOD
from .ask import AskDialog
from .ask import answer_frame
from .ask import cancelled
from .ask import read_ask
from .offline import OMP_PROVIDER
from .offline import omp_recipe

__all__ = ["OmpBackend", "OmpTurn"]

_log = logging.getLogger(__name__)


class _AskDialogRefused(Exception):
    """OMP answered ``set_ask_dialog`` with a failure: a build without structured questions."""


class OmpBackend(PiBackend):
    """Drives OMP: one hive session's turns, each in a process of its own, in OMP's own session."""

    rpc_mode = "rpc-ui"
    provider = OMP_PROVIDER

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        if options.fork and options.resume is not None:
            raise BackendUnavailable(f"{spec.title} cannot copy a session from its command line (fork)")
        super().__init__(spec, options)
        self.refusal: str | None = None
        """What OMP answered ``set_ask_dialog`` when it refused it (then turns run in JSON mode)."""

    @property
    def gates_tools(self) -> bool:
        """Never: OMP has approvals of its own, which hive does not drive yet."""
        return False

    @property
    def uses_rpc(self) -> bool:
        """Whether the next turn runs in rpc-ui mode (a question service, and OMP took ``set_ask_dialog``)."""
        return self.asks_questions

    def extensions(self) -> list[str]:
        """None: OMP's own ``ask`` tool asks (and it has no fork: Pi's ``--fork`` is never passed)."""
        return []

    def environment(self) -> dict[str, str]:
        """OMP's environment: hive's, the spec's quiet settings, the offline recipe's, the options'."""
        return cli_environment(self.spec, self.options, self._offline_environment)

    def _offline_environment(self) -> dict[str, str]:
        endpoint = self.options.endpoint
        assert endpoint is not None
        home = private_home(self.spec, self.options)
        home.mkdir(parents=True, exist_ok=True)
        return omp_recipe(OfflineContext(home=home, cwd=self.options.cwd, endpoint=endpoint))

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in a new OMP process (rpc-ui mode with questions, else JSON mode)."""
        if self.uses_rpc:
            try:
                await self._run(request.content, emit, rpc=True)
                return
            except _AskDialogRefused as exc:
                self.refusal = str(exc)
                self.json_fallback = True
                version = (await self.probe()).version or "of an unknown version"
                _log.warning(
                    "OMP %s rejected set_ask_dialog (%s): questions are off, running in JSON mode",
                    version,
                    exc,
                )
        await self._run(request.content, emit, rpc=False)

    def open_turn(self, process: SupervisedProcess, emit: EventSink, *, rpc: bool) -> PiTurn:
        """OMP's turn over ``process``."""
        return OmpTurn(self, process, emit, rpc=rpc)


class OmpTurn(PiTurn):
    """One OMP turn: Pi's, with OMP's handshake, ask dialogs and end of run (see the module)."""

    def __init__(
        self, backend: OmpBackend, process: SupervisedProcess, emit: EventSink, *, rpc: bool
    ) -> None:
        super().__init__(backend, process, emit, rpc=rpc)
        self._dialog_id = backend.next_request_id("set_ask_dialog")
        self._dialog_answer: dict[str, Any] | None = None
        self._status: str | None = None
        self._error: str | None = None
        self._settled = False

    async def _start(self, group: TaskGroup, prompt: str) -> None:
        if self.rpc:
            await self._opt_in(group)
        await super()._start(group, prompt)

    async def _opt_in(self, group: TaskGroup) -> None:
        """Send ``set_ask_dialog`` and wait for its answer; raise :class:`_AskDialogRefused` on a failure."""
        await self._send({"id": self._dialog_id, "type": "set_ask_dialog", "enabled": True})
        await self._await_start(group, lambda: self._dialog_answer is not None, "did not start")
        assert self._dialog_answer is not None
        if self._dialog_answer.get("success") is not True:
            raise _AskDialogRefused(text_of(self._dialog_answer.get("error")) or "no reason given")

    def _refused_at_start(self) -> bool:
        return False  # OMP loads no extension of hive's: an exit at start is a start error

    def _dispatch(self, group: TaskGroup, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if not self.rpc or kind in ("response", "extension_ui_request"):
            super()._dispatch(group, message)
        elif kind == "prompt_result":
            if text_of(message.get("id")) in (self._prompt_id, None):
                self._status = text_of(message.get("status")) or "completed"
                error = message.get("error")
                error_object = as_object(error)
                self._error = text_of(error if error_object is None else error_object.get("message"))
                self._settled = self._settled or message.get("sessionSettled") is True
        elif kind == "session_settled":
            self._settled = True
        elif kind in RUN_ENDS or kind == "ready" or self._cancelling:
            pass  # in rpc-ui mode the run ends when the session settles, not with agent_end
        else:
            if kind == "agent_start":
                self._settled = False  # the agent woke up: the session settles again only after this run
            super()._dispatch(group, message)
        if self.rpc and self._status is not None and self._settled:
            self.mapper.ended = True

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = text_of(message.get("id"))
        # A build without the command answers it as unknown, with no id (OMP's rpc.md).
        unknown = request_id is None and message.get("success") is False and self._dialog_answer is None
        if request_id == self._dialog_id or (unknown and self.rpc):
            self._dialog_answer = message
            return
        super()._on_response(message)

    def _on_ui_request(self, group: TaskGroup, message: dict[str, Any]) -> None:
        method = message.get("method")
        request_id = text_of(message.get("id"))
        if method == CANCEL_METHOD:
            target = text_of(message.get("targetId"))
            scope = self._pending.get(target or "")
            if scope is not None:
                scope.cancel()  # OMP settled it: the question closes, and no answer is sent
            return
        if request_id is None or (method != ASK_METHOD and method not in DIALOG_METHODS):
            return  # a notice (notify, setStatus, ...): nothing to answer
        dialog = read_ask(message)
        if dialog is None or self._cancelling or self.options.questions is None:
            group.start_soon(self._send_quietly, cancelled(request_id))
            return
        # Registered now, not when the task starts: OMP's cancel frame may be the very next line.
        scope = self._pending[dialog.request_id] = anyio.CancelScope()
        group.start_soon(self._ask_all, dialog, scope)

    async def _ask_all(self, dialog: AskDialog, scope: anyio.CancelScope) -> None:
        questions = self.options.questions
        assert questions is not None
        answers: Answers | None = None
        try:
            with scope:
                try:
                    answers = await questions.ask(
                        QuestionRequestEvent(
                            id=dialog.request_id,
                            call_id=self._asking_call(),
                            questions=[asked.question for asked in dialog.questions],
                        )
                    )
                except Exception:
                    _log.exception("asking an OMP question failed")
                    answers = None
        finally:
            self._pending.pop(dialog.request_id, None)
        # Only an answered (or declined) question is answered: cancelled by OMP's frame, by the caller (whose abort
        # settles the dialog) or by a failing turn, the dialog gets no frame.
        if not scope.cancelled_caught:
            await self._send_quietly(answer_frame(dialog, answers))

    def _asking_call(self) -> str | None:
        """The running call of OMP's ``ask`` tool: the dialog names no call."""
        for call in reversed(self.tracker.calls):
            if call.running and call.tool == ASK_METHOD:
                return call.call_id
        return None

    def outcome(self) -> TurnEndEvent:
        if not self.rpc:
            return super().outcome()
        if self._status == "error":
            self._close_calls(FAILED_CALL_TEXT)
            reason = self._error or self.mapper.error or "no reason given"
            raise ChatError(self.cli.describe(f"OMP ended the turn with an error: {reason}"), code="internal")
        end = super().outcome()
        if self._status == "aborted":
            # Not the caller's cancel (the runner writes that turn_end): OMP's ask tool ended the run.
            return TurnEndEvent(
                input_tokens=end.input_tokens,
                output_tokens=end.output_tokens,
                total_tokens=end.total_tokens,
                cached_input_tokens=end.cached_input_tokens,
                stop_reason="tool_terminated",
                duration_ms=end.duration_ms,
            )
        return end
