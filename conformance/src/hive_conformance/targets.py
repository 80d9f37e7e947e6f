"""The runners under test: how the harness reaches one, feeds it lines and reads its lines back.

A :class:`Target` opens one :class:`Connection` per scenario. :class:`StdioTarget` starts a fresh process per
scenario and speaks JSON Lines on its stdin and stdout; :class:`HttpTarget` (in :mod:`hive_conformance.http`)
opens a fresh session on a running HTTP runner.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import asynccontextmanager
from subprocess import PIPE
from typing import Protocol

import anyio
from anyio.abc import ByteReceiveStream
from anyio.abc import Process

from hive_conformance.workspace import Workspace

__all__ = ["STDERR_TAIL_BYTES", "Connection", "StdioTarget", "Target"]

STDERR_TAIL_BYTES = 20_000
"""How much of a runner's stderr a report keeps (the end of it)."""

_READ = 256 * 1024


class Connection(Protocol):
    """One scenario's link to the runner under test."""

    async def send(self, data: bytes) -> None:
        """Write request bytes (whole lines, each ending in ``\\n``)."""
        ...

    async def close_input(self) -> None:
        """Signal the end of input (close stdin, or end the HTTP session's input)."""
        ...

    def output(self) -> AsyncIterator[bytes]:
        """The runner's output bytes, in chunks as they come; ends when the runner closes its output."""
        ...

    async def wait(self) -> int | None:
        """Wait for the runner to finish; its exit status (``None`` where there is none, as over HTTP)."""
        ...

    async def stop(self) -> None:
        """Make the runner stop now (close input, then SIGTERM, then SIGKILL); never raises."""
        ...

    def diagnostics(self) -> str:
        """What the runner wrote besides its events (the end of its stderr), for the report."""
        ...


class Target(Protocol):
    """A runner under test."""

    description: str
    """How the report names the runner."""

    def connect(self, workspace: Workspace) -> contextlib.AbstractAsyncContextManager[Connection]:
        """Start (or reach) the runner for one scenario, in ``workspace``."""
        ...


class StdioTarget:
    """A runner started as ``command`` in the scenario's project directory, a fresh process per scenario."""

    def __init__(self, command: Sequence[str], *, grace: float = 2.0) -> None:
        if not command:
            raise ValueError("the runner's command is empty")
        self.command = list(command)
        self.grace = grace
        """Seconds each step of the stop ladder (close input, SIGTERM, SIGKILL) waits."""
        self.description = " ".join(self.command)

    @asynccontextmanager
    async def connect(self, workspace: Workspace) -> AsyncGenerator[Connection]:
        """Start the command; on leaving, stop whatever is still running."""
        try:
            process = await anyio.open_process(
                self.command,
                stdin=PIPE,
                stdout=PIPE,
                stderr=PIPE,
                cwd=workspace.project,
                env=workspace.environment,
                start_new_session=True,
            )
        except OSError as error:
            raise RunnerStartError(f"cannot start {self.description!r}: {error}") from error
        connection = _ProcessConnection(process, self.grace)
        async with anyio.create_task_group() as group:
            group.start_soon(connection.collect_stderr)
            try:
                yield connection
            finally:
                with anyio.CancelScope(shield=True):
                    await connection.stop()
                group.cancel_scope.cancel()


class RunnerStartError(RuntimeError):
    """The runner could not be started at all."""


class _ProcessConnection:
    def __init__(self, process: Process, grace: float) -> None:
        self.process = process
        self.grace = grace
        self._stderr = bytearray()
        self._input_closed = False

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(data)

    async def close_input(self) -> None:
        if self._input_closed:
            return
        self._input_closed = True
        assert self.process.stdin is not None
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self.process.stdin.aclose()

    async def output(self) -> AsyncIterator[bytes]:
        stdout = self.process.stdout
        assert stdout is not None
        async for chunk in _chunks(stdout):
            yield chunk

    async def wait(self) -> int | None:
        return await self.process.wait()

    async def stop(self) -> None:
        if self.process.returncode is not None:
            return
        await self.close_input()
        for send in (None, signal.SIGTERM, signal.SIGKILL):
            if send is not None:
                # The runner started a session of its own: its children go down with it.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, send)
            with anyio.move_on_after(self.grace):
                await self.process.wait()
                return

    async def collect_stderr(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        async for chunk in _chunks(stderr):
            self._stderr += chunk
            if len(self._stderr) > 2 * STDERR_TAIL_BYTES:
                del self._stderr[:-STDERR_TAIL_BYTES]

    def diagnostics(self) -> str:
        return bytes(self._stderr[-STDERR_TAIL_BYTES:]).decode("utf-8", "replace")


async def _chunks(stream: ByteReceiveStream) -> AsyncIterator[bytes]:
    while True:
        try:
            chunk = await stream.receive(_READ)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        yield chunk
