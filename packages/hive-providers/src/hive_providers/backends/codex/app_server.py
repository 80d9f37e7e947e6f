"""One running ``codex app-server --listen stdio://``: its process and its JSON-RPC connection.

Codex speaks JSON-RPC 2.0 without the ``"jsonrpc"`` field, one message per line; hive
writes the same dialect and reads messages with or without the field. Ids of hive's requests are integers; the
ids of Codex's own requests (approvals) are echoed verbatim, integer or string. Lines that are not JSON objects
are counted and quoted in the error message, never fatal.

Messages are read only inside :meth:`AppServerConnection.reading` (a task group that reads stdout and stderr and
serves Codex's requests), which the backend enters for each step (start, thread, turn); between turns nothing
reads, and Codex waits on its pipe. The end of stdout fails every pending request at once: a turn never waits on
a dead process. The process runs in a process group of its own (:func:`~hive_core.child_processes.open_child`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any, Final

import anyio
from anyio.abc import TaskGroup

from hive_core.child_processes import SupervisedProcess
from hive_core.failures import ChatError
from hive_protocol import ErrorCode
from hive_providers.backends.kit.cli_process import CliProcess, open_cli
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.json_values import as_mapping

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


@dataclass
class _Pending:
    done: anyio.Event = field(default_factory=anyio.Event)
    result: Any = None
    error: BaseException | None = None


class AppServerConnection:
    """A started ``codex app-server`` after ``initialize``; :meth:`start` builds one."""

    def __init__(self, process: SupervisedProcess, *, name: str = "codex") -> None:
        self.cli = CliProcess(name, process)
        """Codex's process, its stdio and how it ends."""
        self.process = process
        """Codex's process (also its process group's leader)."""
        self.name = name
        """The backend's name, for messages."""
        self.transport = self.cli.transport
        """Its stdout and stdin as JSON lines."""
        self.info: dict[str, Any] = {}
        """Codex's answer to ``initialize`` (``userAgent``, ``codexHome``...)."""
        self.on_notification: NotificationHandler | None = None
        """Where notifications go; ``None`` drops them."""
        self.on_request: RequestHandler | None = None
        """Who answers Codex's requests; ``None`` answers them with an error."""
        self.open_requests: dict[str, Any] = {}
        """Codex's requests being served: the key of each id, and the id as Codex sent it."""
        self.faulted_reason: str | None = None
        """Why the connection is not to be used again (it died, was killed, or would not stop a turn)."""
        self._next_id = 0
        self._pending: dict[str, _Pending] = {}
        self._group: TaskGroup | None = None
        self._eof = anyio.Event()
        self._closed = False

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
            async with connection.reading():
                try:
                    with anyio.fail_after(timeout):
                        info = await connection.request(
                            "initialize",
                            {
                                "clientInfo": {"name": "hive", "title": "hive", "version": _hive_version()},
                                "capabilities": {"experimentalApi": True},
                            },
                        )
                        await connection.notify("initialized")
                except TimeoutError:
                    raise BackendStartError(
                        connection.describe(f"{name} did not answer initialize within {timeout:g} s"),
                        code="timeout",
                    ) from None
                except AppServerError as exc:
                    raise AppServerUnavailable(str(exc), code=exc.code) from exc
                except RpcError as exc:
                    raise AppServerUnavailable(
                        connection.describe(f"{name} failed initialize: {exc}")
                    ) from exc
            connection.info = info
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
        return self._eof

    # -- reading --------------------------------------------------------------------------------------------

    @asynccontextmanager
    async def reading(self) -> AsyncGenerator[None]:
        """Read and dispatch Codex's messages (and drain its stderr) while the block runs."""
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                group.start_soon(self._read_loop)
                group.start_soon(self.transport.drain_stderr)
                try:
                    yield
                finally:
                    self._group = None
                    group.cancel_scope.cancel()
        except BaseExceptionGroup as failed:
            # One failure (the step's own error, or a cancellation): raised as itself, not in a group.
            if len(failed.exceptions) == 1:
                raise failed.exceptions[0] from failed.exceptions[0].__cause__
            raise

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and wait for its result (inside :meth:`reading`); :class:`RpcError` for an error
        answer, :class:`AppServerError` when Codex ends first."""
        if self._group is None:
            raise RuntimeError("requests are answered only inside AppServerConnection.reading()")
        if self.faulted:
            raise await self.died(method)
        self._next_id += 1
        request_id = self._next_id
        pending = self._pending[_key(request_id)] = _Pending()
        try:
            await self._send(
                {"id": request_id, "method": method, "params": dict(params or {})}, during=method
            )
            await pending.done.wait()
        finally:
            self._pending.pop(_key(request_id), None)
        if pending.error is not None:
            if isinstance(pending.error, _Ended):
                raise await self.died(method)
            raise pending.error
        return as_mapping(pending.result)

    async def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        """Send a notification."""
        message: dict[str, Any] = {"method": method}
        if params is not None:
            message["params"] = dict(params)
        await self._send(message, during=method)

    async def answer(self, request_id: object, result: Mapping[str, Any]) -> None:
        """Answer Codex's request ``request_id`` (as Codex sent it) with ``result``; a closed pipe is ignored."""
        self.open_requests.pop(_key(request_id), None)
        with contextlib.suppress(AppServerError):
            await self._send({"id": request_id, "result": dict(result)}, during="an answer")

    async def _send(self, message: dict[str, Any], *, during: str) -> None:
        try:
            await self.transport.send(message)
        except ConnectionError as exc:
            raise await self.died(during) from exc

    async def _read_loop(self) -> None:
        while True:
            message = await self.transport.receive()
            if message is None:
                self._ended()
                return
            self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str):
            params = as_mapping(message.get("params"))
            if "id" in message and message["id"] is not None:
                request_id = message["id"]
                self.open_requests[_key(request_id)] = request_id
                if self._group is not None:
                    self._group.start_soon(self._serve, request_id, method, params)
                return
            handler = self.on_notification
            if handler is not None:
                try:
                    handler(method, params)
                except Exception:
                    _log.exception("mapping a Codex notification %s failed", method)
            return
        pending = self._pending.get(_key(message.get("id")))
        if pending is None:
            return  # an answer nobody waits for any more (a request given up on)
        error = message.get("error")
        if error is not None:
            fields = as_mapping(error)
            code = fields.get("code")
            pending.error = RpcError(
                code if isinstance(code, int) else -32603,
                str(fields.get("message") or "error"),
                fields.get("data"),
            )
        else:
            pending.result = message.get("result")
        pending.done.set()

    async def _serve(self, request_id: object, method: str, params: dict[str, Any]) -> None:
        handler = self.on_request
        try:
            if handler is None:
                raise RpcError(-32601, f"hive does not serve {method} now")
            result = await handler(method, params)
        except RpcError as exc:
            reply: dict[str, Any] = {"id": request_id, "error": {"code": exc.code, "message": exc.message}}
        except Exception as exc:
            _log.exception("serving Codex's %s failed", method)
            reply = {"id": request_id, "error": {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}}
        else:
            reply = {"id": request_id, "result": result}
        if _key(request_id) not in self.open_requests:
            return  # answered meanwhile (a cancelled turn answers its open approvals ``cancel``)
        self.open_requests.pop(_key(request_id), None)
        with contextlib.suppress(AppServerError):
            await self._send(reply, during="an answer")

    def _ended(self) -> None:
        self._eof.set()
        for pending in self._pending.values():
            pending.error = _Ended()
            pending.done.set()

    # -- failures -------------------------------------------------------------------------------------------

    async def died(self, during: str) -> AppServerError:
        """The error for Codex having ended (or broken its pipe) during ``during``, once it exited (bounded)."""
        # Its last words on stderr may still be in the pipe (read only inside reading()): they say why it ended.
        await self.cli.settle(stderr_wait=_STDIN_EXIT_WAIT if self._group is not None else 0.0)
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
        carrying its mark after ``grace`` seconds. Leaves no process behind."""
        if self._closed:
            return
        self._closed = True
        await self.cli.stop(grace, exit_wait=min(grace, _STDIN_EXIT_WAIT))


class _Ended(Exception):
    """Codex's stdout ended before the answer came."""


def _key(request_id: object) -> str:
    # 3 and "3" are one id: a peer may echo either.
    return str(request_id)


def _hive_version() -> str:
    try:
        return version("hive-providers")
    except PackageNotFoundError:
        return "0"
