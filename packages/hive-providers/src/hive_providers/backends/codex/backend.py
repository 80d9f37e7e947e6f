"""Codex CLI on its app-server, as an :class:`~hive_core.backends.AgentBackend`.

The first turn starts ``codex app-server --listen stdio://`` (its private ``CODEX_HOME`` from
:mod:`.offline` when the options name an endpoint), ``initialize`` s it, and opens the thread: ``thread/resume``
of the options' ``resume`` id, else ``thread/start`` with the model, the project directory, ``approvalPolicy:
"untrusted"`` (Codex asks before any command it does not know to be safe) and the ``workspace-write`` sandbox
(bubblewrap; it works as root here). The thread id is :attr:`CodexBackend.session_id`. Each turn is one
``turn/start``; its notifications become hive events (:mod:`.items`) until ``turn/completed``. Codex's approval
requests are judged by the permission rules, then the approval service: ``accept``, ``acceptForSession`` (the human
approved always), ``decline``.

Cancelled, the turn's open approvals are answered ``cancel`` (as are any a turn leaves open when it ends),
``turn/interrupt`` is sent and the turn waits ``cancel_grace`` seconds for ``turn/completed``; then SIGINT to the
process group, then SIGKILL to the group, and the next turn starts a new process that resumes the thread. The
process is kept between turns (one per backend, never pooled) and stopped by :meth:`CodexBackend.aclose`.

With :attr:`~.BackendOptions.fork` (and ``resume``), the thread is opened with ``thread/fork`` of the resume id:
Codex copies it under a new id, which becomes :attr:`CodexBackend.session_id`; the original is left as it was.
Sub-agents (collab tool calls and their child threads on the same app-server) become ``agent_work`` snapshots
(:mod:`.subagents`).

Where the app-server is unavailable (:class:`~.app_server.AppServerUnavailable`: the program rejects
``app-server``, exits at start, or fails ``initialize``), this and every later turn runs as one ``codex exec
--json`` process per turn instead (:mod:`.exec_mode`, :mod:`.exec_events`): ``exec resume <thread>`` continues
the thread and ``exec fork <thread>`` copies it. exec cannot ask for approvals, so it runs in the read-only
sandbox unless the mode names another, with one warning (:attr:`CodexBackend.notes` and the log). Arguments that
start with ``exec`` (``BackendOptions.arguments``) choose exec from the first turn.
"""

from __future__ import annotations

import contextlib
import logging
import signal
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any
from typing import Final
from typing import Literal

import anyio

from hive_core.failures import ChatError
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.backend_shell import BackendShell
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.judging import judge_call
from hive_providers.backends.kit.judging import verdict_of
from hive_providers.backends.kit.kept_connection import usable
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.wire import decode
from hive_providers.backends.offline import cli_environment
from hive_providers.backends.probe import find_executable

from .app_server import AppServerConnection
from .app_server import AppServerError
from .app_server import AppServerUnavailable
from .app_server import RpcError
from .exec_events import ExecTurn
from .exec_events import ExecUsage
from .exec_mode import APPROVAL_WARNING
from .exec_mode import ASKING_MODES
from .exec_mode import BYPASS_MODE
from .exec_mode import exec_arguments
from .exec_mode import run_exec_turn
from .items import TurnItems
from .items import command_line
from .items import item_arguments
from .subagents import SubThreads
from .wire import FileChange
from .wire import decode_notification

__all__ = [
    "APPROVAL_POLICY",
    "APPROVAL_REQUESTS",
    "CANCEL_DECISION",
    "SANDBOX",
    "CodexBackend",
    "Interface",
    "approval_decision",
]

APPROVAL_POLICY: Final = "untrusted"
"""The thread's approval policy: Codex asks before every command outside its short list of safe ones."""
APPROVAL_POLICIES: Final = ("untrusted", "on-failure", "on-request", "never")
"""The policies ``--agent-mode`` may choose instead."""
SANDBOX: Final = "workspace-write"
"""The thread's sandbox: writes inside the project only (bubblewrap on Linux, which runs as root here)."""
Interface = Literal["auto", "app_server", "exec"]
"""How turns run: the app-server with the exec fallback, the app-server only, or exec only."""
APPROVAL_REQUESTS: Final = {
    "item/commandExecution/requestApproval": EXECUTE_COMMAND,
    "item/fileChange/requestApproval": EDIT_FILE,
}
"""Codex's approval requests, with the hive tool each is judged as."""

CANCEL_DECISION: Final = {"decision": "cancel"}
"""The answer to an approval request nobody will decide any more (the turn was cancelled or ended)."""
_FAILED_CALL_TEXT: Final = "Not finished: Codex failed before this call's outcome was reported."
_log = logging.getLogger(__name__)


def approval_decision(approved: bool, *, always: bool = False) -> dict[str, Any]:
    """The answer to an approval request: ``accept``, ``acceptForSession`` or ``decline``."""
    if not approved:
        return {"decision": "decline"}
    return {"decision": "acceptForSession" if always else "accept"}


class CodexBackend(BackendShell):
    """Drives Codex's app-server: one hive session's turns in one Codex thread."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions, *, interface: Interface = "auto") -> None:
        super().__init__(spec, options)
        self.connection: AppServerConnection | None = None
        """The running app-server, between turns too; ``None`` before the first turn and after a kill."""
        self.notes: list[str] = []
        """What could not be done as asked (a thread Codex could not resume, the exec fallback's warnings)."""
        arguments = options.arguments or ()
        self.uses_exec = interface == "exec" or (interface == "auto" and arguments[:1] == ("exec",))
        """Whether turns run as ``codex exec --json`` processes (asked for, or the app-server was unavailable)."""
        self.interface: Interface = interface
        """How turns run (see :data:`Interface`)."""
        self.subthreads = SubThreads()
        """The thread's sub-agents, across its turns."""
        self._thread_open = False
        self._forking = options.fork and options.resume is not None
        self._exec_usage: ExecUsage | None = (0, 0, 0) if options.resume is None else None
        self._warned = False
        self._exec_started = False

    async def aclose(self) -> None:
        """Stop the app-server, leaving no process behind."""
        connection, self.connection = self.connection, None
        if connection is not None:
            await connection.aclose(self.options.cancel_grace)

    # -- a turn ---------------------------------------------------------------------------------------------

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in Codex's thread (on the app-server, or as ``codex exec`` where it is unavailable)."""
        if not self.uses_exec:
            try:
                connection = await self._ready()
            except AppServerUnavailable as exc:
                if self.interface != "auto" or self.options.arguments is not None:
                    raise
                note = f"{self.name}'s app-server is unavailable ({exc}); turns run with codex exec --json"
                self.notes.append(note)
                _log.warning("%s", note)
                self.uses_exec = True
                try:
                    await self._exec_turn(request, emit)
                except ChatError as failed:
                    if self._exec_started:
                        raise  # exec ran the turn: its failure is the turn's
                    self.uses_exec = False  # neither way runs: the next turn tries the app-server again
                    raise BackendStartError(
                        f"{exc}; the codex exec fallback failed too: {failed}"
                    ) from failed
                return
            await self._app_server_turn(connection, request, emit)
            return
        await self._exec_turn(request, emit)

    async def _app_server_turn(
        self, connection: AppServerConnection, request: UserMessageRequest, emit: EventSink
    ) -> None:
        tracker = ToolCallTracker(emit, taken=self.call_ids)
        items = TurnItems(emit, tracker)
        subthreads = self.subthreads
        subthreads.main_thread = self._session_id
        done = anyio.Event()

        def notified(method: str, params: dict[str, Any]) -> None:
            notification = decode_notification(method, params)
            if subthreads.on_notification(notification):
                return  # a sub-agent's thread
            thread = notification.thread_id or None
            if thread is not None and thread != self._session_id:
                return  # another thread's
            items.on_notification(notification)
            if items.completed is not None:
                done.set()

        async def approve(method: str, params: dict[str, Any]) -> dict[str, Any]:
            return await self._approve(method, params, tracker)

        connection.on_notification, connection.on_request = notified, approve
        subthreads.emit = emit
        subthreads.flush()
        try:
            with _calls_closed_early(tracker, subthreads):
                try:
                    started = await connection.request(
                        "turn/start",
                        {"threadId": self._session_id, "input": [{"type": "text", "text": request.content}]},
                    )
                    items.turn_id = items.turn_id or text_of(as_mapping(started.get("turn")).get("id"))
                    subthreads.turn_id = subthreads.turn_id or items.turn_id
                    await _first(done, connection.ended)
                    if not done.is_set():
                        raise await connection.died("the turn")
                except anyio.get_cancelled_exc_class():
                    # The runner writes the turn_end: it alone knows a cancel from a deadline.
                    with anyio.CancelScope(shield=True):
                        await self._interrupt(connection, items, done)
                    raise
        finally:
            connection.on_notification = connection.on_request = None
            # A request of Codex's the turn leaves open (it failed under it) is answered now: it must not wait
            # on a user who is no longer asked, nor reach a later turn.
            with anyio.CancelScope(shield=True), anyio.move_on_after(self.options.cancel_grace):
                await connection.cancel_requests(CANCEL_DECISION)
        emit(items.finish())

    # -- a turn with codex exec -----------------------------------------------------------------------------

    async def _exec_turn(self, request: UserMessageRequest, emit: EventSink) -> None:
        options = self.options
        mode = options.mode
        if (mode is None or mode in ASKING_MODES) and not self._warned:
            self._warned = True
            self.notes.append(APPROVAL_WARNING)
            _log.warning("%s", APPROVAL_WARNING)
        arguments = options.arguments or ()
        extra = arguments[1:] if arguments[:1] == ("exec",) else ()
        model = options.model or (options.endpoint.model if options.endpoint is not None else None)
        command = [
            self._executable(),
            *exec_arguments(
                prompt=request.content,
                thread_id=self._session_id,
                fork=self._forking,
                model=model,
                mode=mode,
                extra=extra,
            ),
        ]
        tracker = ToolCallTracker(emit, taken=self.call_ids)
        subthreads = self.subthreads
        subthreads.emit = emit
        turn = ExecTurn(emit, tracker, subthreads, usage_before=self._exec_usage)
        pids: list[int] = []
        try:
            with _calls_closed_early(tracker, subthreads):
                await run_exec_turn(
                    command,
                    turn,
                    cwd=options.cwd,
                    env=self._environment(),
                    grace=options.cancel_grace,
                    name=self.name,
                    started=pids,
                )
        finally:
            self.last_pid = pids[0] if pids else self.last_pid
            self._exec_started = turn.thread_id is not None
            self._adopt_thread(turn.thread_id)
            for warning in turn.warnings:
                _log.info("%s said: %s", self.name, warning)
        end = turn.finish()
        self._exec_usage = turn.usage_after
        emit(end)

    def _adopt_thread(self, reported: str | None) -> None:
        if reported is None:
            return
        # Forking, only a new id is the copy's: the original's must never be continued in place.
        if self._forking and reported == self._session_id:
            return
        self._forking = False
        self._session_id = reported

    async def _interrupt(self, connection: AppServerConnection, items: TurnItems, done: anyio.Event) -> None:
        grace = self.options.cancel_grace
        with anyio.move_on_after(grace):
            await connection.cancel_requests(CANCEL_DECISION)
        if items.turn_id is not None and not connection.faulted:
            with contextlib.suppress(RpcError, AppServerError), anyio.move_on_after(grace):
                await connection.request(
                    "turn/interrupt", {"threadId": self._session_id, "turnId": items.turn_id}
                )
        with anyio.move_on_after(grace):
            await _first(done, connection.ended)
        if done.is_set():
            return
        # Codex ignored the interrupt: it may be stuck, and is not trusted again.
        connection.faulted_reason = "did not stop its turn when interrupted"
        connection.signal_group(signal.SIGINT)
        with anyio.move_on_after(grace):
            await connection.ended.wait()
        self.connection = None
        await connection.aclose(0.0)

    async def _approve(self, method: str, params: dict[str, Any], tracker: ToolCallTracker) -> dict[str, Any]:
        tool = APPROVAL_REQUESTS.get(method)
        if tool is None:
            raise RpcError(-32601, f"hive does not serve {method}")
        item_id = text_of(params.get("itemId"))
        call = None
        if tool == EXECUTE_COMMAND:
            arguments: dict[str, Any] = {"command": command_line(params.get("command"))}
        else:
            known = tracker.get(item_id) if item_id is not None else None
            arguments = as_mapping(known.input) if known is not None else {}
            if not arguments:
                arguments = item_arguments(decode({"changes": params.get("changes")}, FileChange))
        call_id = tracker.correlate(
            {
                "toolCallId": item_id,
                "kind": "execute" if tool == EXECUTE_COMMAND else "edit",
                "title": arguments.get("command") or arguments.get("path") or tool,
                "rawInput": arguments,
            }
        )
        call = tracker.get(call_id)
        assert call is not None
        options = self.options
        # A command runs in its ``cwd``; a file change's ``grantRoot`` asks for writes anywhere under that root.
        cwd = params.get("cwd") if tool == EXECUTE_COMMAND else params.get("grantRoot")
        root = None
        if tool == EDIT_FILE and cwd is not None:
            root = verdict_of(options.policy, tool, {"path": cwd}, cwd=cwd, project=options.cwd)
        said = text_of(params.get("reason"))

        def codex_says(reason: str) -> str:
            return f"{reason}; Codex says: {said}" if reason else (said or "")

        judged = await judge_call(
            call_id,
            tool,
            arguments,
            policy=options.policy,
            approvals=options.approvals,
            tracker=tracker,
            cwd=cwd,
            project=options.cwd,
            also=root,
            said=codex_says if said else None,
        )
        if judged.outcome == "approved":
            assert judged.decision is not None
            return approval_decision(True, always=judged.decision.always_approve)
        return approval_decision(judged.runs)

    # -- start ----------------------------------------------------------------------------------------------

    async def _ready(self) -> AppServerConnection:
        connection = self.connection = await usable(self.connection)
        if connection is None:
            self._thread_open = False
            connection = await AppServerConnection.start(
                self._command(),
                cwd=self.options.cwd,
                env=self._environment(),
                timeout=self._startup_timeout,
                name=self.name,
            )
            self.connection = connection
            self.last_pid = connection.pid
        if not self._thread_open:
            try:
                with anyio.fail_after(self._startup_timeout):
                    await self._open_thread(connection)
            except TimeoutError:
                connection.faulted_reason = "did not open its thread in time"
                raise AppServerError(
                    connection.describe(
                        f"{self.name} did not open its thread within {self._startup_timeout:g} s"
                    ),
                    code="timeout",
                ) from None
            except BaseException:
                if connection.faulted:
                    self.connection = None
                    with anyio.CancelScope(shield=True):
                        await connection.aclose(0.0)
                raise
        return connection

    async def _open_thread(self, connection: AppServerConnection) -> None:
        options = self.options
        bypass = options.mode == BYPASS_MODE
        settings: dict[str, Any] = {
            "cwd": str(options.cwd),
            "approvalPolicy": "never"
            if bypass
            else options.mode
            if options.mode in APPROVAL_POLICIES
            else APPROVAL_POLICY,
            "sandbox": "danger-full-access" if bypass else SANDBOX,
        }
        model = options.model or (options.endpoint.model if options.endpoint is not None else None)
        if model:
            settings["model"] = model
        opened: dict[str, Any] | None = None
        if self._forking and self._session_id is not None:
            try:
                opened = await connection.request(
                    "thread/fork", {"threadId": self._session_id, "excludeTurns": True, **settings}
                )
            except RpcError as exc:
                raise AppServerError(
                    f"{self.name} could not fork thread {self._session_id}: {exc}", code="request_rejected"
                ) from exc
            forked = text_of(as_mapping(opened.get("thread")).get("id"))
            if forked == self._session_id:
                connection.faulted_reason = "answered thread/fork with the original thread's id"
                raise await connection.died("thread/fork")
        elif self._session_id is not None:
            try:
                opened = await connection.request(
                    "thread/resume", {"threadId": self._session_id, "excludeTurns": True, **settings}
                )
            except RpcError as exc:
                note = f"{self.name} could not resume thread {self._session_id} ({exc}); a new thread was started"
                self.notes.append(note)
                _log.warning("%s", note)
        if opened is None:
            opened = await connection.request("thread/start", settings)
        thread_id = text_of(as_mapping(opened.get("thread")).get("id"))
        if thread_id is None:
            connection.faulted_reason = "answered without a thread id"
            raise await connection.died("thread/start")
        self._session_id = thread_id
        self._thread_open = True
        self._forking = False

    @property
    def _startup_timeout(self) -> float:
        timeout = self.options.startup_timeout
        return timeout if timeout is not None else self.spec.startup_timeout

    def _executable(self) -> str:
        options = self.options
        executable = options.executable or find_executable(self.spec, options)
        if executable is None:
            raise BackendNotInstalled(self.spec.name, self.spec.executables, self.spec.install_hint)
        return executable

    def _command(self) -> list[str]:
        options = self.options
        arguments = options.arguments if options.arguments is not None else self.spec.arguments
        return [self._executable(), *arguments]

    def _environment(self) -> dict[str, str]:
        return cli_environment(self.spec, self.options)


@contextmanager
def _calls_closed_early(tracker: ToolCallTracker, subthreads: SubThreads) -> Generator[None]:
    """Close the turn's open calls (and stop its running sub-agents) when it ends early: cancelled, or failed."""
    try:
        yield
    except anyio.get_cancelled_exc_class():
        tracker.close_all(CANCELLED_CALL_TEXT)
        subthreads.stop_running()
        raise
    except BaseException:
        with contextlib.suppress(Exception):
            tracker.close_all(_FAILED_CALL_TEXT)
        raise
    finally:
        subthreads.emit = None


async def _first(*events: anyio.Event) -> None:
    """Wait until one of ``events`` is set."""
    async with anyio.create_task_group() as group:
        for event in events:

            async def wait(event: anyio.Event = event) -> None:
                await event.wait()
                group.cancel_scope.cancel()

            group.start_soon(wait)
