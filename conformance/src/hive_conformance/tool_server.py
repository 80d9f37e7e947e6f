"""The fixture MCP tool server: six small, deterministic tools served over streamable HTTP on 127.0.0.1.

The harness starts one :class:`FixtureToolServer` for a whole run. Its MCP server is named
:data:`SERVER_NAME`, so a runner offers its tools as ``mcp__conformance__<tool>``. Every tool answers with
one text block and no structured output, so every client reads the same result; a failed call
(``isError``) carries exactly its message, without the SDK's ``Error executing tool`` prefix.

Run it from a shell with ``python -m hive_conformance.tool_server --files DIR [--port N]``: the first line on
stdout is the server's URL; SIGINT or SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Self

import anyio
import anyio.abc
import anyio.from_thread
import anyio.to_thread
import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from mcp.types import TextContent
from mcp.types import ToolAnnotations
from starlette.types import ASGIApp
from starlette.types import Message
from starlette.types import Receive
from starlette.types import Scope
from starlette.types import Send

from hive_conformance import __version__

__all__ = ["SERVER_NAME", "TOOL_NAMES", "FixtureToolServer", "build_tool_server", "main"]

SERVER_NAME = "conformance"
"""The MCP server's name: a runner names its tools ``mcp__conformance__<tool>``."""

TOOL_NAMES: tuple[str, ...] = ("add", "echo", "fail", "read_fixture", "set_value", "slow")
"""The names of the fixture tools, sorted."""

_READ_ONLY = ToolAnnotations(read_only_hint=True)
_DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True)
_CLOSE_TIMEOUT = 5.0
_GRACEFUL_SHUTDOWN = 1


def build_tool_server(files: Path) -> MCPServer:
    """The MCP server :data:`SERVER_NAME` with the fixture tools; ``read_fixture`` reads below ``files``."""
    root = files.resolve()
    server = MCPServer(SERVER_NAME, version=__version__, log_level="WARNING")

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def add(a: int, b: int) -> int:
        """Return the sum of two integers."""
        return a + b

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def fail(message: str) -> CallToolResult:
        """Fail with the given message."""
        return _tool_error(message)

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def slow(seconds: float) -> str:
        """Sleep for the given number of seconds, then return "slept"."""
        await anyio.sleep(seconds)
        return "slept"

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    def read_fixture(path: str) -> CallToolResult:
        """Return the text of a fixture file, given by its path relative to the fixture files directory."""
        # Messages name the path as given, never the directory: they end up in recorded events.
        try:
            target = (root / path).resolve()
        except (OSError, ValueError):  # a NUL byte, a symlink loop
            return _tool_error(f"invalid fixture path: {path}")
        if not target.is_relative_to(root):
            return _tool_error(f"path is outside the fixture files: {path}")
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _tool_error(f"no such fixture file: {path}")
        except UnicodeDecodeError:
            return _tool_error(f"fixture file is not UTF-8 text: {path}")
        except OSError:
            return _tool_error(f"cannot read fixture file: {path}")
        return CallToolResult(content=[TextContent(type="text", text=text)])

    @server.tool(annotations=_DESTRUCTIVE, structured_output=False)
    def set_value(key: str, value: str) -> str:
        """Set a key to a value; returns "key=value"."""
        return f"{key}={value}"

    return server


def _tool_error(message: str) -> CallToolResult:
    """A failed call whose text is exactly ``message`` (a raised ``ToolError`` would get the SDK's
    ``Error executing tool <name>:`` prefix)."""
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


class FixtureToolServer:
    """Serves :func:`build_tool_server` over streamable HTTP at :attr:`url`, from a background thread.

    The server runs on its own event loop in its own thread, so it works from sync code and from inside an
    async test alike. Use it as a context manager (sync or async) or call :meth:`start` and :meth:`close`::

        with FixtureToolServer(files) as tools:
            async with mcp.Client(tools.url) as client:
                ...
    """

    def __init__(self, files: Path, *, host: str = "127.0.0.1", port: int = 0) -> None:
        """Prepare a server whose ``read_fixture`` reads below ``files``; it binds ``host:port`` (0 picks a
        free port) on :meth:`start`."""
        self.files = files
        """The directory ``read_fixture`` reads from."""
        self._host = host
        self._port = port
        self._bound_port: int | None = None
        self._stack: contextlib.ExitStack | None = None
        self._portal: anyio.from_thread.BlockingPortal | None = None
        self._serving: Future[None] | None = None
        self._uvicorn: _Uvicorn | None = None
        self._requests: _Requests | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind the port and serve; returns once the server accepts requests."""
        if self._stack is not None:
            raise RuntimeError("the fixture tool server is already started")
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        stack = contextlib.ExitStack()
        stack.callback(listener.close)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((self._host, self._port))
            listener.listen(64)
            requests = _Requests(build_tool_server(self.files).streamable_http_app(host=self._host))
            config = uvicorn.Config(
                requests,
                log_level="warning",
                log_config=None,
                lifespan="on",
                timeout_graceful_shutdown=_GRACEFUL_SHUTDOWN,
            )
            portal = stack.enter_context(
                anyio.from_thread.start_blocking_portal(name="conformance-tool-server")
            )
            server = _Uvicorn(config)
            self._serving, _ = portal.start_task(server.serve_started, listener)
        except BaseException:
            stack.close()
            raise
        self._bound_port = int(listener.getsockname()[1])
        self._stack, self._portal = stack, portal
        self._uvicorn, self._requests = server, requests
        return self

    def close(self) -> None:
        """Stop serving within a few seconds: end open requests (a ``slow`` call still sleeping too), close
        the connections, and free the port."""
        stack, portal, serving = self._stack, self._portal, self._serving
        server, requests = self._uvicorn, self._requests
        if stack is None or portal is None or serving is None or server is None or requests is None:
            return
        self._stack = self._portal = self._serving = self._uvicorn = self._requests = self._bound_port = None
        with stack:
            with contextlib.suppress(RuntimeError):
                portal.call(_stop, server, requests)
            try:
                serving.result(timeout=_CLOSE_TIMEOUT)
            except TimeoutError:
                # Last resort: cancel whatever still runs rather than hang the caller.
                with contextlib.suppress(RuntimeError):
                    portal.call(portal.stop, True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await anyio.to_thread.run_sync(self.close)

    # -- where it is -----------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port."""
        if self._bound_port is None:
            raise RuntimeError("the fixture tool server is not started")
        return self._bound_port

    @property
    def url(self) -> str:
        """The MCP endpoint, ``http://HOST:PORT/mcp`` (``http://127.0.0.1:PORT/mcp`` by default)."""
        return f"http://{self._host}:{self.port}/mcp"


def _stop(server: _Uvicorn, requests: _Requests) -> None:
    """On the server's loop: end the open requests and tell uvicorn to shut down."""
    requests.close()
    server.should_exit = True


class _Uvicorn(uvicorn.Server):
    """A uvicorn server that reports to an anyio task status once it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED

    async def serve_started(
        self, listener: socket.socket, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        self._task_status = task_status
        await self.serve(sockets=[listener])

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._task_status.started()


class _Requests:
    """ASGI middleware running each HTTP request in a cancel scope, so that closing can end the requests that
    would otherwise stay open (a tool call still running, a client's listen stream) and hold up the shutdown."""

    def __init__(self, app: ASGIApp) -> None:
        self._app = app
        self._scopes: set[anyio.CancelScope] = set()
        self._closing = False

    def close(self) -> None:
        """Cancel the open requests and answer new ones with 503."""
        self._closing = True
        for scope in list(self._scopes):
            scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        if self._closing:
            await _unavailable(send)
            return
        state = _Response(send)
        with anyio.CancelScope() as cancel:
            self._scopes.add(cancel)
            try:
                await self._app(scope, receive, state.send)
            finally:
                self._scopes.discard(cancel)
        # A cancelled request still ends its HTTP message, so the connection closes cleanly.
        if not state.started:
            await _unavailable(send)
        elif not state.complete:
            await send({"type": "http.response.body", "body": b"", "more_body": False})


class _Response:
    """Tracks how far a request's response has gone."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.complete = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.started = True
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            self.complete = True
        await self._send(message)


async def _unavailable(send: Send) -> None:
    body = b"the fixture tool server is closing"
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m hive_conformance.tool_server``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m hive_conformance.tool_server",
        description=f"Serve the fixture MCP tools (server {SERVER_NAME!r}) over streamable HTTP.",
    )
    parser.add_argument("--files", type=Path, required=True, help="the directory read_fixture reads from")
    parser.add_argument("--port", type=int, default=0, help="the port to bind (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    args = parser.parse_args(argv)
    files: Path = args.files
    if not files.is_dir():
        print(f"error: {files} is not a directory", file=sys.stderr)
        return 2

    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, request_stop)

    server = FixtureToolServer(files, host=args.host, port=args.port)
    try:
        server.start()
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        print(server.url, flush=True)
        stop.wait()
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
