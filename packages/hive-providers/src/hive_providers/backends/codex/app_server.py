"""One running ``codex app-server --listen stdio://``: its process and its JSON-RPC connection.

JSON-RPC ids, requests, answers and errors are :class:`acp.connection.Connection`'s, the class ACP and Copilot run
on (message form, over a :class:`~hive_providers.backends.kit.transport.ProcessTransport`). Codex speaks JSON-RPC
2.0 without the ``"jsonrpc"`` field, one message per line. It reads messages that carry the field (Codex 0.171.0
does), but hive writes Codex's own dialect all the same: the transport leaves out ``"jsonrpc"`` and null
``params`` or error ``data``, so the wire is what it was before the Connection. Ids of hive's requests are
integers; Codex's own requests (approvals, questions) are served one task each, so a request waiting on the user
blocks nothing, and answered with their ids verbatim, integer or string. Notifications never reach the
Connection (it runs a task per notification, which does not promise their order): the transport hands each one
to :attr:`AppServerConnection.on_notification` synchronously, in arrival order. Lines that are not JSON objects
are counted and quoted in the error message, never fatal.

Messages are read from the start to the end of the process (with no turn running, notifications are dropped and
requests answered with an error) and stderr is drained into a bounded tail all along. The end of stdout fails
every pending request at once: a turn never waits on a dead process. The process runs in a process group of its
own (:func:`~hive_core.child_processes.open_child`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version
from typing import Any
from typing import Final

import anyio
from acp.connection import Connection
from acp.exceptions import RequestError
from acp.task import TaskSupervisor

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_protocol import ErrorCode
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.cli_process import open_cli
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.handshake import handshake
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.transport import MessageHook
from hive_providers.backends.kit.transport import ProcessTransport

__all__ = [
    "AppServerConnection",
    "AppServerError",
    "AppServerUnavailable",
    "NotificationHandler",
    "RequestHandler",
    "RpcError",
]

NotificationHandler = Callable[[str, dict[str, Any]], None]
"""Sees each notification (method, params), synchronously, in arrival order."""
RequestHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Answers one of Codex's requests (method, params) with its result; raising :class:`RpcError` answers an
error."""

_STDIN_EXIT_WAIT: Final = 0.5
_log = logging.getLogger(__name__)


class AppServerError(ChatError):
    """Codex's process died, closed its output, or broke the protocol: the turn's ``error``."""


class AppServerUnavailable(BackendStartError):
    """The program started but serves no app-server: it rejected ``app-server`` (an old or a stripped build),
    exited or closed its output before answering ``initialize``, or answered it with an error. The backend then
    runs its turns with ``codex exec --json`` instead."""


class RpcError(Exception):
    """A JSON-RPC error: one Codex answered a request of hive's with, or one hive answers Codex with."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        """The JSON-RPC error code."""
        self.message = message
        """The error's message."""
        self.data = data
        """Its ``data``, if any."""


class AppServerConnection:
    """A started ``codex app-server`` after ``initialize``; :meth:`start` builds one (inside a running loop)."""

    def __init__(self, process: SupervisedProcess, *, name: str = "codex") -> None:
        self.process = process
        """Codex's process (also its process group's leader)."""
        self.name = name
        """The backend's name, for messages."""
        self.transport = _CodexTransport(process, incoming=self._incoming, answered=self._answered)
        """Its stdout and stdin as JSON lines, in Codex's dialect."""
        self.cli = CliProcess(name, process, self.transport)
        """Codex's process, its stdio and how it ends."""
        self.info: dict[str, Any] = {}
        """Codex's answer to ``initialize`` (``userAgent``, ``codexHome``...)."""
        self.on_notification: NotificationHandler | None = None
        """Where notifications go; ``None`` drops them."""
        self.on_request: RequestHandler | None = None
        """Who answers Codex's requests; ``None`` answers them with an error."""
        self.faulted_reason: str | None = None
        """Why the connection is not to be used again (it died, was killed, or would not stop a turn)."""
        self._unanswered: set[str] = set()
        self._all_answered = anyio.Event()
        self._serving: dict[anyio.CancelScope, dict[str, Any] | None] = {}
        self._cancel_answer: dict[str, Any] | None = None
        self._closed = False
        self._tasks = TaskSupervisor(source="hive.codex")
        self._tasks.create(self.transport.drain_stderr(), name="hive.codex.stderr")
        self._rpc = Connection(self._serve, self.transport)

    # -- start ----------------------------------------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str],
        timeout: float,
        name: str = "codex",
    ) -> AppServerConnection:
        """Start Codex and ``initialize`` it within ``timeout`` seconds.

        Raises :class:`AppServerUnavailable` when it exits, closes its output or fails ``initialize``, and
        :class:`BackendStartError` when it cannot be started at all or does not answer in time (a program that
        hangs is not retried another way).
        """
        process = await open_cli(name, command, cwd=cwd, env=env)
        connection = cls(process, name=name)
        try:
            async with handshake(
                connection.cli, timeout, ended=AppServerError, rejected=RpcError, failure=AppServerUnavailable
            ):
                connection.info = await connection.request(
                    "initialize",
                    {
                        "clientInfo": {"name": "hive", "title": "hive", "version": _hive_version()},
                        "capabilities": {"experimentalApi": True},
                    },
                )
                await connection.notify("initialized")
        except BaseException:
            with anyio.CancelScope(shield=True):
                await connection.aclose(0.0)
            raise
        return connection

    # -- state ----------------------------------------------------------------------------------------------

    @property
    def faulted(self) -> bool:
        """Whether Codex died, closed its output, was killed, or would not stop: not to be used again."""
        return (
            self.faulted_reason is not None
            or self._closed
            or self.process.returncode is not None
            or self.transport.at_eof
        )

    @property
    def pid(self) -> int:
        """Codex's process id (also its process group's)."""
        return self.process.pid

    @property
    def ended(self) -> anyio.Event:
        """Set once Codex's stdout reached its end."""
        return self.transport.ended

    # -- hive's messages --------------------------------------------------------------------------------------

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and wait for its result: :class:`RpcError` for an error answer, :class:`AppServerError`
        when Codex ends first."""
        if self.faulted:
            raise await self.died(method)
        try:
            result = await self._rpc.send_request(method, dict(params or {}))
        except RequestError as exc:
            raise RpcError(exc.code, str(exc), exc.data) from exc
        except ConnectionError as exc:
            raise await self.died(method) from exc
        return as_mapping(result)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        try:
            await self._rpc.send_notification(method, None if params is None else dict(params))
        except ConnectionError as exc:
            raise await self.died(method) from exc

    # -- Codex's messages -------------------------------------------------------------------------------------

    async def cancel_requests(self, answer: Mapping[str, Any]) -> None:
        """Answer ``answer`` to every request of Codex's still open (those being served stop waiting, on the user
        or anything else), and to any that comes meanwhile; returns once each answer is written."""
        self._cancel_answer = dict(answer)
        try:
            for scope in list(self._serving):
                self._serving[scope] = self._cancel_answer
                scope.cancel()
            while self._unanswered and not self._closed:
                await self._all_answered.wait()
        finally:
            self._cancel_answer = None

    def _incoming(self, message: dict[str, Any]) -> bool:
        method = message.get("method")
        if not isinstance(method, str):
            return False  # an answer to hive: the Connection's
        if message.get("id") is None:
            handler = self.on_notification
            if handler is not None:
                try:
                    handler(method, as_mapping(message.get("params")))
                except Exception:
                    _log.exception("mapping a Codex notification %s failed", method)
            return True
        self._unanswered.add(_key(message["id"]))
        if self._all_answered.is_set():
            self._all_answered = anyio.Event()
        return False

    def _answered(self, request_id: object) -> None:
        self._unanswered.discard(_key(request_id))
        if not self._unanswered:
            self._all_answered.set()

    async def _serve(self, method: str, params: Any, is_notification: bool) -> Any:
        """The Connection's handler: Codex's requests (notifications never come here, see :meth:`_incoming`)."""
        if is_notification:
            return None
        if self._cancel_answer is not None:
            return self._cancel_answer
        handler = self.on_request
        if handler is None:
            raise RequestError(-32601, f"hive does not serve {method} now")
        scope = anyio.CancelScope()
        self._serving[scope] = None
        try:
            with scope:
                return await handler(method, as_mapping(params))
        except RpcError as exc:
            raise RequestError(exc.code, exc.message) from exc
        except Exception as exc:
            _log.exception("serving Codex's %s failed", method)
            raise RequestError(-32603, f"{type(exc).__name__}: {exc}") from exc
        finally:
            cancelled_with = self._serving.pop(scope)
        return cancelled_with  # the scope was cancelled by cancel_requests, with this answer

    # -- failures -------------------------------------------------------------------------------------------

    async def died(self, during: str) -> AppServerError:
        """The error for Codex having ended (or broken its pipe) during ``during``, once it exited (bounded)."""
        # Its last words on stderr may still be in the pipe: they say why it ended.
        await self.cli.settle(stderr_wait=_STDIN_EXIT_WAIT)
        if self.faulted_reason is not None:
            what = f"{self.name} {self.faulted_reason} during {during}"
        else:
            what = self.cli.describe_exit(f"during {during}")
        error_code: ErrorCode = "internal"
        return AppServerError(self.describe(what), code=error_code)

    def describe(self, what: str) -> str:
        """``what``, with the lines that were not JSON and the end of Codex's stderr."""
        return self.cli.describe(what)

    # -- stopping -------------------------------------------------------------------------------------------

    def signal_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to Codex's process group (nothing once it exited)."""
        self.cli.signal_group(sig)

    async def aclose(self, grace: float = 5.0) -> None:
        """Stop Codex: close its stdin, SIGINT its group after a moment, SIGKILL the group and every process
        carrying its mark after ``grace`` seconds; then the connection and its tasks. Leaves no process behind."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            await self.cli.stop(grace, exit_wait=min(grace, _STDIN_EXIT_WAIT))
            # What still runs (a request being served, the stderr drain) is cancelled; a failing write to the
            # dead process is not the caller's error.
            for closing in (self._rpc.close, self._tasks.shutdown):
                try:
                    await closing()
                except Exception:
                    _log.debug("closing the connection to %s failed", self.name, exc_info=True)
            # What was not answered now never is: nobody waits for it.
            self._unanswered.clear()
            self._all_answered.set()


class _CodexTransport(ProcessTransport):
    """:class:`ProcessTransport` writing Codex's dialect of JSON-RPC, saying when stdout ended and when an answer
    to one of Codex's requests was written."""

    def __init__(
        self, process: SupervisedProcess, *, incoming: MessageHook, answered: Callable[[object], None]
    ) -> None:
        super().__init__(process, incoming=incoming)
        self.answered = answered
        """Called with the id of each answer once it is written (or could not be: Codex ended)."""
        self.ended = anyio.Event()
        """Set once stdout reached its end."""

    async def send(self, message: dict[str, Any]) -> None:
        """Write ``message`` (the Connection's own, built for this write) as Codex writes its messages: no
        ``"jsonrpc"``, no null ``params``, no null error ``data``. An answer to a Codex that ended is dropped."""
        message.pop("jsonrpc", None)
        if "params" in message and message["params"] is None:
            del message["params"]
        if "error" in message:
            error = message["error"] = as_mapping(message["error"])
            if error.get("data", True) is None:
                del error["data"]
        if "method" in message:
            await super().send(message)
            return
        with contextlib.suppress(ConnectionError):
            await super().send(message)
        self.answered(message.get("id"))

    async def receive(self) -> dict[str, Any] | None:
        """The next message for the Connection; ``None`` (and :attr:`ended` set) at the end of stdout."""
        message = await super().receive()
        if message is None:
            self.ended.set()
        return message


def _key(request_id: object) -> str:
    # 3 and "3" are one id: a peer may echo either.
    return str(request_id)


def _hive_version() -> str:
    try:
        return version("hive-providers")
    except PackageNotFoundError:
        return "0"
