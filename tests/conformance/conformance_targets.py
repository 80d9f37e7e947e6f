"""hive's runners as conformance targets: the stdio server as a command, and the same session in process."""

from __future__ import annotations

import math
import os
import shutil
import sys
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Generator
from contextlib import asynccontextmanager
from contextlib import contextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from hive_cli.assemble import HostOptions
from hive_cli.serving import open_server_session
from hive_conformance.targets import Connection
from hive_conformance.workspace import SESSION_ID
from hive_conformance.workspace import Workspace
from hive_protocol import Event
from hive_protocol import LineSplitter
from hive_protocol import LineTooLong
from hive_protocol import encode

__all__ = ["HIVE_SERVER", "InProcessTarget"]

HIVE_SERVER = [shutil.which("hive", path=os.path.dirname(sys.executable)) or "hive", "run", "--server"]
"""``hive run --server``, from this interpreter's environment."""


class InProcessTarget:
    """hive's server session driven in this process: requests decoded from the same bytes a stdio runner reads,
    events encoded with ``hive_protocol.encode``. The agent's clock is frozen, so ``duration_ms`` is 0."""

    description = "hive in process (SessionRunner.serve)"

    @asynccontextmanager
    async def connect(self, workspace: Workspace) -> AsyncGenerator[Connection]:
        """Serve one session in the scenario's project, with its environment in ``os.environ``."""
        incoming_send, incoming = anyio.create_memory_object_stream[bytes | LineTooLong](math.inf)
        output, output_receive = anyio.create_memory_object_stream[bytes](math.inf)
        connection = _InProcessConnection(incoming_send, output_receive)
        with _environment(workspace.environment):
            async with anyio.create_task_group() as group:
                group.start_soon(connection.serve, workspace, incoming, output)
                try:
                    yield connection
                finally:
                    await connection.close_input()
            output_receive.close()


class _InProcessConnection:
    def __init__(
        self,
        incoming: MemoryObjectSendStream[bytes | LineTooLong],
        output: MemoryObjectReceiveStream[bytes],
    ) -> None:
        self._incoming = incoming
        self._output = output
        self._splitter = LineSplitter()
        self._done = anyio.Event()
        self._status = 0
        self._problem = ""

    async def serve(
        self,
        workspace: Workspace,
        incoming: MemoryObjectReceiveStream[bytes | LineTooLong],
        output: MemoryObjectSendStream[bytes],
    ) -> None:
        def emit(event: Event) -> None:
            output.send_nowait(encode(event))

        try:
            async with output, incoming:
                options = HostOptions(cwd=workspace.project)
                async with open_server_session(options, SESSION_ID, clock=lambda: 0.0) as session:
                    await session.serve(incoming, emit)
        except Exception as error:  # the report shows it; the harness sees a failed exit
            self._status = 1
            self._problem = repr(error)
        finally:
            self._done.set()

    async def send(self, data: bytes) -> None:
        for line in self._splitter.feed(data):
            await self._incoming.send(line)

    async def close_input(self) -> None:
        await self._incoming.aclose()

    async def output(self) -> AsyncIterator[bytes]:
        async for line in self._output:
            yield line

    async def wait(self) -> int | None:
        await self._done.wait()
        return self._status

    async def stop(self) -> None:
        await self.close_input()

    def diagnostics(self) -> str:
        return self._problem


@contextmanager
def _environment(variables: dict[str, str]) -> Generator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(variables)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
