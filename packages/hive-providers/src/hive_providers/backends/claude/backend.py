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

import contextlib
import itertools
import logging
import os
import signal
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from hive_core.backends import BackendProbe
from hive_core.child_processes import SupervisedProcess, open_child
from hive_core.failures import ChatError
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import UserMessageRequest, excerpt
from hive_providers.backends.acp.connection import AgentProcessError
from hive_providers.backends.acp.tool_calls import ToolCallTracker, text_of
from hive_providers.backends.acp.transport import ProcessTransport
from hive_providers.backends.errors import BackendNotInstalled, BackendStartError
from hive_providers.backends.offline import prepare_offline
from hive_providers.backends.probe import find_executable, probe_backend
from hive_providers.backends.specs import BackendOptions, LaunchSpec

from .control import PermissionResponder, deny
from .stream import StreamMapper, result_failure

__all__ = ["ClaudeCodeBackend"]


_FAILED_CALL_TEXT: Final = "Not finished: the agent failed before this call's outcome was reported."
_CANCELLED_REQUEST: Final = "The turn was cancelled."
_STDERR_QUOTED: Final = 2000
_EXIT_WAIT: Final = 2.0
_WRITE_WAIT: Final = 1.0
_log = logging.getLogger(__name__)


class ClaudeCodeBackend:
    """Drives Claude Code: one hive session's turns, each in a process of its own, in the CLI's own session."""

    def __init__(self, spec: LaunchSpec, options: BackendOptions) -> None:
        self.name = spec.name
        """The backend's canonical name."""
        self.spec = spec
        """How the CLI is found and started."""
        self.options = options
        """Where it works and who judges and answers its requests."""
        self.last_pid: int | None = None
        """The process id of the last turn's CLI (its process group's too)."""
        self.last_command: list[str] | None = None
        """The command line of the last turn."""
        self._session_id = options.resume
        self._forking = options.fork and options.resume is not None
        """Whether the next turn still has to copy the resumed session (until a turn reports the copy's id)."""
        self._call_ids: set[str] = set()
        """Every hive call id given out, across turns: one session never repeats one."""
        self._request_numbers = itertools.count(1)
        self._offline: dict[str, str] | None = None
        """The private configuration's variables, written once per backend (not per turn: 0.4 ms each)."""

    @property
    def session_id(self) -> str | None:
        """The CLI's session id once a turn reported it (or the id to resume, before)."""
        return self._session_id

    async def probe(self) -> BackendProbe:
        """Whether the CLI is installed here, and its version."""
        return await probe_backend(self.spec, self.options)

    async def aclose(self) -> None:
        """Nothing runs between turns: each turn's process ends with it."""

    def command(self) -> list[str]:
        """The command line of the next turn; raises :class:`BackendNotInstalled`."""
        options = self.options
        executable = find_executable(self.spec, options)
        if executable is None:
            raise BackendNotInstalled(self.spec.name, self.spec.executables, self.spec.install_hint)
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
        env = dict(os.environ)
        env.update(self.spec.environment)
        if self.options.endpoint is not None:
            if self._offline is None:
                self._offline = prepare_offline(self.spec, self.options)
            env.update(self._offline)
        env.update(self.options.environment)
        return env

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn in a new Claude Code process."""
        command = self.command()
        env = self.environment()
        self.last_command = command
        try:
            process = await open_child(command, cwd=self.options.cwd, env=env)
        except OSError as exc:
            raise BackendStartError(f"cannot start {self.name} ({command[0]}): {exc}") from exc
        self.last_pid = process.pid
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

    def next_request_id(self, kind: str) -> str:
        """A request id of hive's own for the control channel."""
        return f"hive_{kind}_{next(self._request_numbers)}"


class _Turn:
    """One turn's process, stream and control channel."""

    def __init__(self, backend: ClaudeCodeBackend, process: SupervisedProcess, emit: EventSink) -> None:
        self.backend = backend
        self.process = process
        self.options = backend.options
        self.transport = ProcessTransport(process)
        self.tracker = ToolCallTracker(emit, taken=backend._call_ids)  # pyright: ignore[reportPrivateUsage]
        self.mapper = StreamMapper(emit, self.tracker)
        self.responder = PermissionResponder(
            tracker=self.tracker,
            policy=self.options.policy,
            approvals=self.options.approvals,
            questions=self.options.questions,
        )
        self._emit = emit
        self._pending: dict[str, anyio.CancelScope] = {}
        self._initialize_id = backend.next_request_id("initialize")
        self._initialized = anyio.Event()
        self._cancelling = False

    @property
    def name(self) -> str:
        return self.backend.name

    async def run(self, prompt: str) -> None:
        failure: Exception | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self.transport.drain_stderr)
            try:
                await self._start(group, prompt)
                await self._read(group)
            except anyio.get_cancelled_exc_class():
                # The runner writes the turn_end: it alone knows a cancel from a deadline.
                with anyio.CancelScope(shield=True):
                    await self._cancel(group)
                raise
            except Exception as exc:
                # Raised below, outside the task group: the runner classifies the error itself, not a group.
                failure = exc
            finally:
                group.cancel_scope.cancel()
        if failure is not None:
            with contextlib.suppress(Exception):
                self.tracker.close_all(_FAILED_CALL_TEXT)
                self.mapper.stop_subagents()
            raise failure
        result = self.mapper.result
        assert result is not None
        problem = result_failure(result)
        if problem is not None:
            self.tracker.close_all(_FAILED_CALL_TEXT)
            self.mapper.stop_subagents()
            raise ChatError(self._describe(problem), code="internal")
        self._emit(self.mapper.finish())

    async def _start(self, group: TaskGroup, prompt: str) -> None:
        spec, options = self.backend.spec, self.options
        timeout = options.startup_timeout if options.startup_timeout is not None else spec.startup_timeout
        await self._send(
            {
                "type": "control_request",
                "request_id": self._initialize_id,
                "request": {"subtype": "initialize", "hooks": None},
            }
        )
        try:
            with anyio.fail_after(timeout):
                while not self._initialized.is_set():
                    message = await self.transport.receive()
                    if message is None:
                        await self._settle()
                        raise BackendStartError(self._describe(self._ended("at start")))
                    self._dispatch(group, message)
        except TimeoutError:
            await self._settle()
            raise BackendStartError(
                self._describe(f"{self.name} did not answer initialize within {timeout:g} s"), code="timeout"
            ) from None
        await self._send(
            {
                "type": "user",
                "session_id": "",
                "message": {"role": "user", "content": prompt},
                "parent_tool_use_id": None,
            }
        )

    async def _read(self, group: TaskGroup) -> None:
        while self.mapper.result is None:
            message = await self.transport.receive()
            if message is None:
                await self._settle()
                raise AgentProcessError(self._describe(self._ended("during the turn")), code="internal")
            self._dispatch(group, message)

    def _dispatch(self, group: TaskGroup, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_request":
            self._on_control_request(group, message)
        elif kind == "control_response":
            response = _mapping(message.get("response"))
            if response.get("request_id") == self._initialize_id:
                if response.get("subtype") == "error":
                    error = text_of(response.get("error")) or "no reason given"
                    raise BackendStartError(self._describe(f"{self.name} failed initialize: {error}"))
                self._initialized.set()
            # Anything else: the answer to an interrupt, or the CLI echoing hive's own answers.
        elif kind == "control_cancel_request":
            scope = self._pending.get(text_of(message.get("request_id")) or "")
            if scope is not None:
                scope.cancel()
        elif not self._cancelling:
            try:
                self.mapper.on_message(message)
            except Exception:
                _log.exception("mapping a Claude Code message failed")
        elif message.get("type") == "result":
            self.mapper.result = dict(message)

    def _on_control_request(self, group: TaskGroup, message: dict[str, Any]) -> None:
        request_id = text_of(message.get("request_id"))
        request = _mapping(message.get("request"))
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

    async def _send(self, message: dict[str, Any]) -> None:
        try:
            await self.transport.send(message)
        except ConnectionError:
            await self._settle()
            during = "during the turn" if self._initialized.is_set() else "at start"
            error = self._describe(self._ended(during))
            if self._initialized.is_set():
                raise AgentProcessError(error, code="internal") from None
            raise BackendStartError(error) from None

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError), anyio.move_on_after(_WRITE_WAIT):
            await self.transport.send(message)

    async def _cancel(self, group: TaskGroup) -> None:
        """The cancel sequence (see the module); shielded by the caller."""
        self._cancelling = True
        self.tracker.close_all(CANCELLED_CALL_TEXT)
        self.mapper.stop_subagents()
        for scope in list(self._pending.values()):
            scope.cancel()  # their answers: deny (written by _answer as it ends)
        grace = self.options.cancel_grace
        if self.process.returncode is not None or self.transport.at_eof:
            return
        await self._send_quietly(
            {
                "type": "control_request",
                "request_id": self.backend.next_request_id("interrupt"),
                "request": {"subtype": "interrupt"},
            }
        )
        with anyio.move_on_after(grace):
            while self.mapper.result is None:
                message = await self.transport.receive()
                if message is None:
                    break
                self._dispatch(group, message)

    async def close(self) -> None:
        """End the process: close stdin, wait ``cancel_grace``, SIGINT the group, wait again, kill the group and
        every process carrying the mark. Leaves no process behind."""
        process, grace = self.process, self.options.cancel_grace
        await self.transport.close()
        if process.returncode is None:
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGINT)
            with anyio.move_on_after(grace):
                await process.wait()
        if process.returncode is None:
            process.kill_tree()
        else:
            # It exited: kill what it left in its group; what left the group carries its mark and is killed as
            # aclose reaps it. (kill_tree would scan /proc for the mark too: twice per turn, ~10 % of its CPU.)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        with anyio.move_on_after(_EXIT_WAIT):
            await process.aclose()

    async def _settle(self) -> None:
        """After stdout ended: give the process a moment to exit and its stderr to be read, for the message."""
        with anyio.CancelScope(shield=True):
            if self.process.returncode is None:
                with anyio.move_on_after(_EXIT_WAIT):
                    await self.process.wait()
            with anyio.move_on_after(0.2):
                await self.transport.stderr_closed.wait()

    def _ended(self, during: str) -> str:
        code = self.process.returncode
        if code is None:
            return f"{self.name} closed its output {during}"
        if code < 0:
            return f"{self.name} was killed by signal {-code} {during}"
        return f"{self.name} exited with code {code} {during}"

    def _describe(self, what: str) -> str:
        parts = [what]
        if noise := self.transport.describe_noise():
            parts.append(noise.replace("JSON-RPC", "stream-json"))
        if tail := self.transport.stderr_tail():
            parts.append(f"stderr: {excerpt(tail[-_STDERR_QUOTED:], _STDERR_QUOTED)}")
        return "; ".join(parts)


def _mapping(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownArgumentType]
