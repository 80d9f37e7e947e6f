"""Pi on its own streams, as an :class:`~hive_core.backends.AgentBackend`.

One process per turn, started through :func:`~hive_core.child_processes.open_child`, its sessions in a private
``--session-dir`` (``<private home>/sessions``) and resumed with ``--session ID``; with an endpoint, ``--provider
local --model M`` of the offline recipe; with ``fork``, the first turn starts with ``--fork ID`` (Pi copies the
session into a new one) and later turns resume the copy. Without a question service, permission rules or
approval service: ``pi --mode json -p`` with the prompt on stdin (never on the command line, where Pi reads
``@file`` and options); the ``session`` line gives the session id. With one: ``pi --mode rpc`` with hive's
extensions (``-e``): ``ask_user_question`` for a question service, the approval extension for rules or an approval
service; ``get_state`` gives the session id, the prompt goes as the RPC ``prompt`` command, ``agent_end`` ends the
run, and each dialog is answered in a task of its own (:mod:`.rpc`, :mod:`.approvals`). A Pi that will not start
with the question extension (exit 1 with no output: another extension registers the same tool) runs without it,
with a warning, for this and later turns: in JSON mode, or in RPC mode with only the approval extension.

Pi has no permission system of its own: without rules or an approval service its tools run unasked (the calls are
only reported, :mod:`.events`); with them every call waits in Pi's ``tool_call`` hook for hive's verdict.

Cancelled, the turn closes its open calls and cancels its pending dialogs; in RPC mode it sends ``abort`` and reads
on for ``cancel_grace`` seconds, then closes stdin; SIGINT to the group, and after another ``cancel_grace`` the
group and every process carrying the child's mark are killed. Failing (not installed, exiting at start, printing
no JSON, dying mid-turn, an assistant message ending in ``error``) it raises an error the runner classifies,
quoting the end of Pi's stderr.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import ClassVar

import anyio
from anyio.abc import TaskGroup

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_core.tools import EventSink
from hive_protocol import QuestionRequestEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.backend_shell import TurnProcessBackend
from hive_providers.backends.kit.cli_process import FAILED_CALL_TEXT
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import JudgingContext
from hive_providers.backends.kit.process_turn import ProcessTurn
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.offline import PI_PROVIDER
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.offline import private_home
from hive_providers.backends.probe import require_executable

from .approvals import ToolJudge
from .events import RUN_ENDS
from .events import PiEventMapper
from .events import run_failure
from .rpc import APPROVAL_EXTENSION
from .rpc import DIALOG_METHODS
from .rpc import ApprovalDialog
from .rpc import QuestionDialog
from .rpc import answer_value
from .rpc import cancelled
from .rpc import read_approval
from .rpc import read_dialog
from .rpc import write_extension
from .wire import decode_event

__all__ = ["PiBackend", "PiTurn"]

_log = logging.getLogger(__name__)


class _ExtensionRefused(Exception):
    """Pi exited at start with no output in RPC mode: it would not load hive's extension."""


class PiBackend(TurnProcessBackend):
    """Drives Pi: one hive session's turns, each in a process of its own, in Pi's own session."""

    rpc_mode: ClassVar[str] = "rpc"
    """The ``--mode`` of a turn that is spoken to (the other mode is ``json -p``)."""
    provider: ClassVar[str] = PI_PROVIDER
    """The provider the offline recipe configures for an endpoint (``--provider``)."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        super().__init__(spec, options)
        self.json_fallback = False
        """Whether Pi refused hive's question extension, so turns run without it (no questions)."""
        self._fork_from = options.resume if options.fork else None

    @property
    def home(self) -> Path:
        """The private home (sessions and the question extension live there): the options', else
        ``<hive home>/agents/pi/home``."""
        return private_home(self.spec, self.options)

    @property
    def asks_questions(self) -> bool:
        """Whether the next turn loads the question extension (a question service, and Pi took it)."""
        return self.options.questions is not None and not self.json_fallback

    @property
    def gates_tools(self) -> bool:
        """Whether Pi's tool calls wait for hive's verdict (permission rules or an approval service were given)."""
        return self.options.policy is not None or self.options.approvals is not None

    @property
    def uses_rpc(self) -> bool:
        """Whether the next turn runs in RPC mode (questions asked, or tool calls judged)."""
        return self.asks_questions or self.gates_tools

    def command(self, *, rpc: bool) -> list[str]:
        """The command line of the next turn; raises :class:`BackendNotInstalled`."""
        options = self.options
        executable = require_executable(self.spec, options)
        arguments = ["--mode", self.rpc_mode] if rpc else ["--mode", "json", "-p"]
        arguments += ["--session-dir", str(self.home / "sessions")]
        if options.endpoint is not None:
            arguments += ["--provider", self.provider, "--model", options.endpoint.model]
        elif options.model:
            arguments += ["--model", options.model]
        if self._fork_from:
            arguments += ["--fork", self._fork_from]
        elif self._session_id:
            arguments += ["--session", self._session_id]
        if rpc:
            arguments += self.extensions()
        return [executable, *arguments, *(options.arguments or ())]

    def extensions(self) -> list[str]:
        """The ``-e`` arguments of an RPC turn: hive's question extension, and its approval extension."""
        arguments: list[str] = []
        if self.asks_questions:
            arguments += ["-e", str(write_extension(self.home / "extensions"))]
        if self.gates_tools:
            arguments += ["-e", str(write_extension(self.home / "extensions", APPROVAL_EXTENSION))]
        return arguments

    def environment(self) -> dict[str, str]:
        """Pi's environment: hive's, the spec's quiet settings, the offline recipe's, the options'."""
        return cli_environment(self.spec, self.options)

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in a new Pi process (RPC mode with questions or approvals, else JSON mode)."""
        if self.uses_rpc:
            try:
                await self._run(request.content, emit, rpc=True)
                return
            except _ExtensionRefused as exc:
                if not self.asks_questions:
                    raise BackendStartError(str(exc)) from None
                _log.warning(
                    "Pi would not start with hive's ask_user_question extension; questions are off: %s", exc
                )
                self.json_fallback = True
        try:
            await self._run(request.content, emit, rpc=self.uses_rpc)
        except _ExtensionRefused as exc:
            raise BackendStartError(str(exc)) from None

    async def _run(self, prompt: str, emit: EventSink, *, rpc: bool) -> None:
        process = await self.open_process(self.command(rpc=rpc), self.environment())
        turn = self.open_turn(process, emit, rpc=rpc)
        try:
            await turn.run(prompt)
        finally:
            self._remember(turn.mapper)
            with anyio.CancelScope(shield=True):
                await turn.close()

    def open_turn(self, process: SupervisedProcess, emit: EventSink, *, rpc: bool) -> PiTurn:
        """The turn that drives ``process``."""
        return PiTurn(self, process, emit, rpc=rpc)

    def _remember(self, mapper: PiEventMapper) -> None:
        """Keep the session id a turn reported. A session cancelled before its first answer was never written:
        resuming it would fail at start; a fork is kept only once written, else the next turn copies again."""
        session = mapper.session_id
        if session is None:
            return
        if self._fork_from is not None:
            if mapper.persisted:
                self._session_id, self._fork_from = session, None
        elif mapper.persisted or self._session_id is not None:
            self._session_id = session


class PiTurn(ProcessTurn):
    """One turn's process and stream (OMP's turn refines it: :mod:`hive_providers.backends.omp`)."""

    sweeps_after_exit = True

    def __init__(self, backend: PiBackend, process: SupervisedProcess, emit: EventSink, *, rpc: bool) -> None:
        super().__init__(backend.spec, backend.options, process, emit, call_ids=backend.call_ids)
        self.backend = backend
        self.rpc = rpc
        self.mapper = PiEventMapper(emit, self.tracker)
        self.judge = (
            ToolJudge(
                JudgingContext(
                    tracker=self.tracker,
                    cwd=self.options.cwd.absolute(),
                    policy=self.options.policy,
                    approvals=self.options.approvals,
                )
            )
            if rpc and backend.gates_tools
            else None
        )
        self._state_id = backend.next_request_id("get_state")
        self._prompt_id = backend.next_request_id("prompt")

    def outcome(self) -> TurnEndEvent:
        """The ``turn_end`` of a run that ended; raises the :class:`ChatError` of one that failed."""
        problem = run_failure(self.mapper)
        if problem is not None:
            self._close_calls(FAILED_CALL_TEXT)
            raise ChatError(self.cli.describe(problem), code="internal")
        return self.mapper.finish()

    def _done(self) -> bool:
        return self.mapper.ended

    def _interrupt(self) -> dict[str, Any] | None:
        return {"id": self.backend.next_request_id("abort"), "type": "abort"} if self.rpc else None

    def _awaits_exit(self) -> bool:
        # RPC mode: Pi exits at the end of stdin; JSON mode exits by itself after agent_end.
        return self.rpc or self.mapper.ended

    async def _start(self, group: TaskGroup, prompt: str) -> None:
        """Until Pi is known to run: its first line (JSON mode) or the answer to ``get_state`` (RPC mode)."""
        if self.rpc:
            await self._send({"id": self._state_id, "type": "get_state"})
        else:
            await self._send_prompt_text(prompt)
        await self._await_start(group, lambda: self._started, "did not start")
        if self.rpc:
            await self._send({"id": self._prompt_id, "type": "prompt", "message": prompt})

    async def _send_prompt_text(self, prompt: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            await stdin.send(prompt.encode())
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._settle()
            raise BackendStartError(self.cli.describe(self.cli.describe_exit("at start"))) from None
        await self.transport.close()  # the end of stdin is the end of the prompt

    def _dispatch(self, group: TaskGroup, message: dict[str, Any]) -> None:
        if not self.rpc:
            self._started = True  # JSON mode: Pi runs once it printed a line
        kind = message.get("type")
        if kind == "response":
            self._on_response(message)
        elif kind == "extension_ui_request":
            self._on_ui_request(group, message)
        elif self._cancelling:
            if kind in RUN_ENDS:
                self.mapper.ended = True
        else:
            try:
                self.mapper.on_event(decode_event(message))
            except Exception:
                _log.exception("mapping a Pi event failed")

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = text_of(message.get("id"))
        if message.get("success") is False and request_id in (self._state_id, self._prompt_id):
            error = text_of(message.get("error")) or "no reason given"
            what = "get_state" if request_id == self._state_id else "the prompt"
            raise BackendStartError(self.cli.describe(f"{self.name} refused {what}: {error}"))
        if request_id == self._state_id:
            session = text_of(as_mapping(message.get("data")).get("sessionId"))
            if session is not None:
                self.mapper.session_id = session
            self._started = True

    def _on_ui_request(self, group: TaskGroup, message: dict[str, Any]) -> None:
        request_id = text_of(message.get("id"))
        if request_id is None or message.get("method") not in DIALOG_METHODS:
            return  # a notice (notify, setStatus, ...): nothing to answer
        approval = read_approval(message)
        if approval is not None and self.judge is not None and not self._cancelling:
            group.start_soon(self._approve, approval)
            return
        dialog = read_dialog(message)
        if dialog is None or self._cancelling or self.options.questions is None:
            group.start_soon(self._send_quietly, cancelled(request_id))
            return
        group.start_soon(self._ask, dialog)

    async def _ask(self, dialog: QuestionDialog) -> None:
        questions = self.options.questions
        assert questions is not None

        async def answer() -> dict[str, Any] | None:
            if not dialog.questions:
                return None
            try:
                answers = await questions.ask(
                    QuestionRequestEvent(
                        id=dialog.tool_call_id or dialog.request_id,
                        call_id=self.tracker.running_call_id(dialog.tool_call_id),
                        questions=dialog.questions,
                    )
                )
            except Exception:
                _log.exception("asking a Pi question failed")
                return None
            return None if answers is None else answer_value(dialog.request_id, dialog.questions, answers)

        await self._reply(dialog.request_id, answer)

    async def _approve(self, dialog: ApprovalDialog) -> None:
        """Judge one held call; cancelled or failing, the answer is ``cancelled`` (Pi blocks the call)."""
        judge = self.judge
        assert judge is not None

        async def answer() -> dict[str, Any] | None:
            try:
                return await judge.judge(dialog)
            except Exception:
                _log.exception("judging a Pi tool call failed")
                return None

        await self._reply(dialog.request_id, answer)

    async def _reply(self, request_id: str, answer: Callable[[], Awaitable[dict[str, Any] | None]]) -> None:
        """Send dialog ``request_id`` what ``answer`` makes of it; ``cancelled`` when it makes nothing or is
        cancelled (its scope waits in ``_pending``, where the turn's end cancels it)."""
        scope = anyio.CancelScope()
        self._pending[request_id] = scope
        reply = cancelled(request_id)
        try:
            with scope:
                reply = await answer() or reply
        finally:
            self._pending.pop(request_id, None)
            with anyio.CancelScope(shield=True):
                await self._send_quietly(reply)

    def _broken(self) -> Exception:
        if self._refused_at_start():
            return _ExtensionRefused(self.cli.describe(self.cli.describe_exit("at start")))
        return super()._broken()

    def _refused_at_start(self) -> bool:
        """Whether Pi exited at start the way it does when it will not load an extension (code 1, no output)."""
        return self.rpc and self.process.returncode == 1 and not self._said_anything()

    def _said_anything(self) -> bool:
        return self._started or self.transport.invalid_lines > 0 or bool(self.transport.stderr_tail())
