"""A small, real HTTP runner speaking the kit's HTTP binding (:mod:`hive_conformance.http`), built by bridging
each session to a fresh stdio runner process (``hive run --server`` by default).

- ``POST /sessions`` with ``{"session_id", "working_directory", "settings"}`` starts the runner command in
  ``working_directory``, with the bridge's environment plus a fresh ``HOME``/``HIVE_HOME`` and
  ``HIVE_SESSION_ID`` = ``session_id``; when ``settings`` is given, the fresh hive home holds the user settings
  it describes (the fixture MCP server and its rules, :func:`~hive_conformance.workspace.write_hive_home`).
  It answers ``{"session_id": handle}``: the handle is the given id or, when that id was opened before (the
  kit opens every scenario as ``conformance``), the id with a ``-2``, ``-3``, … suffix.
- ``GET /sessions/{handle}/events``: the child's stdout lines as Server-Sent Events, ``id:`` the 1-based
  position, ``data:`` the line without its ``\\n``; the stream ends when the child's stdout ends.
  ``Last-Event-ID: N`` replays from event ``N + 1``; every line is kept for the session's lifetime.
- ``POST /sessions/{handle}/requests``: the body goes to the child's stdin as is (409 once the input is closed
  or the child stopped reading); ``POST /sessions/{handle}/close`` closes it. An unknown handle is a 404.

SSE cannot carry a raw ``\\r`` inside a line, nor tell a last line without its ``\\n``: canonical lines have
neither. Use it as a context manager, from sync or async code alike (it serves from a thread of its own)::

    with HttpBridge(environment=env) as bridge:
        target = HttpTarget(bridge.url)
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import socket
import tempfile
from collections.abc import AsyncIterator
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from subprocess import PIPE
from types import TracebackType
from typing import Any
from typing import Final
from typing import Self
from typing import cast

import anyio
import anyio.abc
import anyio.from_thread
import msgspec
import uvicorn
from anyio.abc import Process
from conformance_targets import HIVE_SERVER
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import PlainTextResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Route

from hive_conformance.workspace import ScenarioSettings
from hive_conformance.workspace import write_hive_home

__all__ = ["HttpBridge"]

_READ: Final = 256 * 1024
_CLOSE_TIMEOUT: Final = 10.0


class HttpBridge:
    """Serves the HTTP binding on ``127.0.0.1`` (a free port) from a background thread, one runner process per
    session; closing it kills the runners still running and frees the port."""

    def __init__(
        self, command: Sequence[str] = HIVE_SERVER, *, environment: Mapping[str, str] | None = None
    ) -> None:
        """Bridge to ``command``; its children inherit ``environment`` (default: this process's)."""
        self.command = list(command)
        """The stdio runner started per session."""
        self.environment = dict(os.environ if environment is None else environment)
        """What every child inherits, plus its own ``HOME``, ``HIVE_HOME`` and ``HIVE_SESSION_ID``."""
        self._sessions: dict[str, _Session] = {}
        self._port: int | None = None
        self._stack: contextlib.ExitStack | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._serving: Future[None] | None = None
        self._server: uvicorn.Server | None = None
        self._group: anyio.abc.TaskGroup | None = None
        self._homes = Path()
        self._numbers = itertools.count(1)

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:PORT``."""
        if self._port is None:
            raise RuntimeError("the bridge is not started")
        return f"http://127.0.0.1:{self._port}"

    def pid(self, handle: str) -> int:
        """The process id of a session's runner."""
        return self._sessions[handle].process.pid

    def start(self) -> Self:
        """Bind a free port and serve; returns once requests are accepted (the socket listens already)."""
        if self._stack is not None:
            raise RuntimeError("the bridge is already started")
        with contextlib.ExitStack() as stack:
            listener = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            listener.bind(("127.0.0.1", 0))
            listener.listen(64)
            self._homes = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hive-http-bridge-")))
            routes = [
                Route("/sessions", self._open, methods=["POST"]),
                Route("/sessions/{handle}/events", self._events, methods=["GET"]),
                Route("/sessions/{handle}/requests", self._requests, methods=["POST"]),
                Route("/sessions/{handle}/close", self._close, methods=["POST"]),
            ]
            config = uvicorn.Config(
                Starlette(routes=routes),
                log_level="warning",
                log_config=None,
                lifespan="off",
                timeout_graceful_shutdown=2,
            )
            self._server = uvicorn.Server(config)
            portal = stack.enter_context(anyio.from_thread.start_blocking_portal(name="hive-http-bridge"))
            self._serving, _ = portal.start_task(self._serve, listener)
            self._port = int(listener.getsockname()[1])
            self._portal, self._stack = portal, stack.pop_all()
        return self

    def close(self) -> None:
        """Kill the runners still running, end the open event streams, stop serving and remove the homes."""
        stack, portal, serving = self._stack, self._portal, self._serving
        if stack is None or portal is None or serving is None:
            return
        self._stack = self._portal = self._serving = None
        with stack:
            portal.call(self._shutdown)
            serving.result(timeout=_CLOSE_TIMEOUT)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- on the bridge's event loop --------------------------------------------------------------------------

    async def _serve(
        self, listener: socket.socket, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        assert self._server is not None
        async with anyio.create_task_group() as group:
            self._group = group
            task_status.started()
            try:
                await self._server.serve(sockets=[listener])
            finally:
                with anyio.CancelScope(shield=True):
                    for session in self._sessions.values():
                        await session.kill()
                        await session.release()
                group.cancel_scope.cancel()

    async def _shutdown(self) -> None:
        # The children first: their event streams end, so uvicorn's graceful shutdown has nothing to wait for.
        for session in self._sessions.values():
            await session.kill()
        assert self._server is not None
        self._server.should_exit = True

    async def _open(self, request: Request) -> Response:
        try:
            body = await request.json()
        except ValueError:
            return PlainTextResponse("the body is not JSON", status_code=400)
        fields = cast("dict[str, Any]", body) if isinstance(body, dict) else {}
        session_id, directory = fields.get("session_id"), fields.get("working_directory")
        if not isinstance(session_id, str) or not session_id or not isinstance(directory, str):
            return PlainTextResponse("session_id and working_directory are required strings", status_code=400)
        if not await anyio.Path(directory).is_dir():
            return PlainTextResponse(f"no such directory: {directory}", status_code=400)
        try:
            settings = msgspec.convert(fields.get("settings"), ScenarioSettings | None)
        except msgspec.ValidationError as error:
            return PlainTextResponse(f"settings: {error}", status_code=400)
        home = self._homes / f"session-{next(self._numbers)}"
        if settings is None:
            await anyio.Path(home / ".hive").mkdir(parents=True)
        else:
            write_hive_home(home / ".hive", settings)
        environment = {
            **self.environment,
            "HOME": str(home),
            "HIVE_HOME": str(home / ".hive"),
            "HIVE_SESSION_ID": session_id,
        }
        try:
            # The runner's stderr is the bridge's (pytest shows it with a failing test).
            process = await anyio.open_process(
                self.command,
                stdin=PIPE,
                stdout=PIPE,
                stderr=None,
                cwd=directory,
                env=environment,
                start_new_session=True,
            )
        except (OSError, ValueError) as error:  # ValueError: a NUL byte in the session id
            return PlainTextResponse(f"cannot start the runner: {error}", status_code=502)
        handle, suffix = session_id, 1
        while handle in self._sessions:
            suffix += 1
            handle = f"{session_id}-{suffix}"
        session = self._sessions[handle] = _Session(process)
        assert self._group is not None
        self._group.start_soon(session.pump)
        return JSONResponse({"session_id": handle})

    async def _events(self, request: Request) -> Response:
        session = self._sessions.get(request.path_params["handle"])
        if session is None:
            return _unknown(request)
        last = request.headers.get("last-event-id", "").strip() or "0"
        if not (last.isascii() and last.isdigit()):
            return PlainTextResponse(f"Last-Event-ID is not an event id: {last!r}", status_code=400)

        async def stream() -> AsyncIterator[bytes]:
            async for position, line in session.lines_after(int(last)):
                yield b"id: %d\ndata: %b\n\n" % (position, line)

        return StreamingResponse(
            stream(), media_type="text/event-stream", headers={"cache-control": "no-store"}
        )

    async def _requests(self, request: Request) -> Response:
        session = self._sessions.get(request.path_params["handle"])
        if session is None:
            return _unknown(request)
        if not await session.write(request.stream()):
            return PlainTextResponse("the session's input is closed", status_code=409)
        return Response(status_code=204)

    async def _close(self, request: Request) -> Response:
        session = self._sessions.get(request.path_params["handle"])
        if session is None:
            return _unknown(request)
        await session.close_input()
        return Response(status_code=204)


class _Session:
    """One runner process: its output lines so far (kept for replays) and its input."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self.ended = False
        self._changed = anyio.Event()
        self._input = anyio.Lock()
        self._input_closed = False

    async def pump(self) -> None:
        """Read the child's stdout into :attr:`lines` until it ends."""
        assert self.process.stdout is not None
        buffer = bytearray()
        try:
            while True:
                try:
                    chunk = await self.process.stdout.receive(_READ)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    break
                start = len(buffer)
                buffer += chunk
                while (end := buffer.find(b"\n", start)) >= 0:
                    self.lines.append(bytes(buffer[:end]))
                    del buffer[: end + 1]
                    start = 0
                self._notify()
            if buffer:
                self.lines.append(bytes(buffer))
        finally:
            self.ended = True
            self._notify()

    async def lines_after(self, position: int) -> AsyncIterator[tuple[int, bytes]]:
        """``(id, line)`` for every line after ``position``, as they come, until the output ends."""
        while True:
            while position < len(self.lines):
                position += 1
                yield position, self.lines[position - 1]
            if self.ended:
                return
            await self._changed.wait()

    async def write(self, chunks: AsyncIterator[bytes]) -> bool:
        """Copy a request body to the child's stdin; false when the input is closed or the child is gone."""
        assert self.process.stdin is not None
        async with self._input:
            if self._input_closed:
                return False
            try:
                async for chunk in chunks:
                    if chunk:
                        await self.process.stdin.send(chunk)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                return False
            return True

    async def close_input(self) -> None:
        """Close the child's stdin (end of input); closing twice is fine."""
        assert self.process.stdin is not None
        async with self._input:
            if not self._input_closed:
                self._input_closed = True
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    await self.process.stdin.aclose()

    async def kill(self) -> None:
        """Kill the child's process group if it still runs, and reap it."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()

    async def release(self) -> None:
        """Close the pipes of a child that has exited."""
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self.process.aclose()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()


def _unknown(request: Request) -> Response:
    return PlainTextResponse(f"no session {request.path_params['handle']!r}", status_code=404)
