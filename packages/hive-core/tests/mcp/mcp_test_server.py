"""An MCP server written with the ``mcp`` SDK, for the hive-core MCP tests.

Run as ``python mcp_test_server.py stdio`` (the protocol on stdin/stdout) or ``python mcp_test_server.py http``
(streamable HTTP on 127.0.0.1, on a port the system picks: the first line on stdout is that port, printed once
the socket listens).

A slow call reports over TCP when a ``signal_port`` is given: ``started`` when it begins, ``cancelled`` when the
client cancels it, so a test can wait for either without polling.
"""

from __future__ import annotations

import os
import socket
import sys
import time

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("hive-test-server", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def environment(key: str) -> str:
    """The value of an environment variable of the server (empty when unset)."""
    return os.environ.get(key, "")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def cwd() -> str:
    """The server's working directory."""
    return os.getcwd()


@server.tool()
async def slow(seconds: float, signal_port: int = 0) -> str:
    """Sleep for a while."""
    if not signal_port:
        await anyio.sleep(seconds)
        return "slept"
    async with await anyio.connect_tcp("127.0.0.1", signal_port) as signal:
        await signal.send(b"started\n")
        try:
            await anyio.sleep(seconds)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await signal.send(b"cancelled\n")
            raise
    return "slept"


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message."""
    raise ToolError(message)


@server.tool()
def crash() -> str:
    """Ends the server process at once."""
    os._exit(3)


@server.tool()
async def hang() -> str:
    """Blocks the server's event loop: the whole server stops answering."""
    time.sleep(3600)  # noqa: ASYNC251 - the point is a server that no longer answers anything
    return "never"


@server.tool(name="dotted.name")
def dotted() -> str:
    """A tool whose name is not a valid model tool name."""
    return "dotted"


@server.tool()
def header(key: str, ctx: Context) -> str:
    """The value of an HTTP request header (empty over stdio)."""
    headers = ctx.headers or {}
    return headers.get(key.lower(), headers.get(key, ""))


def extra(value: int) -> int:
    """A tool that appears after ``grow``."""
    return value * 2


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the ``extra`` tool and announce the change."""
    server.add_tool(extra, name="extra")
    # A 2026-era client hears of it on its listen stream, a 2025-era one by the session notification.
    await ctx.notify_tools_changed()
    if ctx.protocol_version is not None and ctx.protocol_version < "2026":
        await ctx.session.send_tool_list_changed()
    return "grown"


async def _serve_http() -> None:
    import uvicorn

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    await uvicorn.Server(config).serve(sockets=[listener])


if __name__ == "__main__":
    if sys.argv[1:] == ["http"]:
        anyio.run(_serve_http)
    else:
        server.run()
