"""Helpers for the MCP plugin tests: the test server as a plugin, and the signal line it reports on."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from typing import Final

import anyio
from anyio.abc import SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream

from hive_core import ToolOutcome
from hive_core.mcp import PluginConfig

WAIT: Final = 30.0
"""Seconds any single wait of these tests may take (servers start as Python processes importing the SDK)."""

SERVER_SCRIPT: Final = Path(__file__).with_name("mcp_test_server.py")


def stdio_plugin(name: str = "srv", *, timeout: float = 10.0, auto_reconnect: bool = True) -> PluginConfig:
    """The test server over stdio, as plugin ``name``."""
    return PluginConfig(
        name=name,
        command=sys.executable,
        arguments=(str(SERVER_SCRIPT), "stdio"),
        timeout=timeout,
        auto_reconnect=auto_reconnect,
    )


def http_plugin(url: str, name: str = "web", *, timeout: float = 10.0, **headers: str) -> PluginConfig:
    """The test server over streamable HTTP at ``url``, as plugin ``name``."""
    return PluginConfig(
        name=name, transport="http", url=url, headers=dict(headers), timeout=timeout, auto_reconnect=False
    )


def process_exists(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts: it was not reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Signals:
    """A TCP listener the test server's ``slow`` tool reports to: one connection per call, one line per event."""

    def __init__(self) -> None:
        self.port = 0
        self._listener: Any = None
        self._accepted: list[BufferedByteReceiveStream] = []

    @asynccontextmanager
    async def open(self) -> AsyncGenerator[Signals]:
        """Listen on 127.0.0.1 for as long as the block runs; the reports accepted are closed with it."""
        multi = await anyio.create_tcp_listener(local_host="127.0.0.1")
        async with multi:
            self._listener = multi.listeners[0]
            self.port = multi.extra(SocketAttribute.local_port)
            try:
                yield self
            finally:
                for stream in self._accepted:
                    await stream.aclose()

    async def accept(self) -> BufferedByteReceiveStream:
        """The next call's report stream."""
        stream = BufferedByteReceiveStream(await self._listener.accept())
        self._accepted.append(stream)
        return stream


async def next_line(stream: BufferedByteReceiveStream) -> str:
    """One line of a report."""
    return (await stream.receive_until(b"\n", 1024)).decode()


async def assert_cancelled_on_the_server(
    signals: Signals, slow_call: Callable[[int], Awaitable[object]]
) -> None:
    """Start ``slow_call(signal_port)`` (a call of the test server's ``slow`` tool), cancel it once the server
    reports it started, and check that the server reports it cancelled."""
    stop = anyio.CancelScope()

    async def run() -> None:
        with stop:
            await slow_call(signals.port)

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        report = await signals.accept()
        assert await next_line(report) == "started"
        stop.cancel()
        assert await next_line(report) == "cancelled"


def error_of(outcome: ToolOutcome) -> str:
    """The error of a call that must have failed."""
    assert not outcome.success, outcome
    assert outcome.error is not None
    return outcome.error
