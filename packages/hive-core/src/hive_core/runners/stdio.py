"""The stdio runner: requests as JSON Lines on standard input, events as JSON Lines on standard output."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import BinaryIO

import anyio
import anyio.to_thread
import msgspec

from hive_core.hitl import HitlBridge
from hive_protocol import DEFAULT_MAX_LINE_BYTES
from hive_protocol import Event
from hive_protocol import LineSplitter
from hive_protocol import LineTooLong
from hive_protocol import ProtocolExtension
from hive_protocol import encode

from .session import Processor
from .session import RequestHandler
from .session import SessionRunner

__all__ = ["StdioRunner", "run_stdio"]

_CHUNK = 64 * 1024


class StdioRunner:
    """Serves a :class:`SessionRunner` over a pair of byte streams (by default the process's stdin and stdout).

    Each event is encoded, written and flushed in one synchronous step, so lines never interleave: every write
    in the process goes through this one writer, which is the runner's lock.
    """

    def __init__(
        self,
        session: SessionRunner,
        *,
        stdin: BinaryIO | None = None,
        stdout: BinaryIO | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.session = session
        self._stdin = stdin if stdin is not None else sys.stdin.buffer
        self._stdout = stdout if stdout is not None else sys.stdout.buffer
        self._max_line_bytes = max_line_bytes
        self._write = self._stdout.write
        self._flush = self._stdout.flush
        self.closed = False
        """Whether the output was found closed; later events are dropped."""

    def write(self, event: Event | msgspec.Struct) -> None:
        """Write one event as one flushed line; once the client closed its end, events are dropped."""
        if self.closed:
            return
        line = encode(event)  # outside the ``try``: a ValueError here is not the client going away
        try:
            self._write(line)
            self._flush()
        except (BrokenPipeError, ValueError):
            # The reader went away (or stdout was closed): nobody can read what follows.
            self.closed = True

    async def run(self) -> int:
        """Serve until ``shutdown`` or end of input; the exit code is 0."""
        await self.session.serve(self._lines(), self.write)
        return 0

    async def _lines(self) -> AsyncIterator[bytes | LineTooLong]:
        splitter = LineSplitter(self._max_line_bytes)
        read = getattr(self._stdin, "read1", self._stdin.read)
        while True:
            # A blocking read in a worker thread: pipes, files and terminals all work the same way.
            chunk: bytes = await anyio.to_thread.run_sync(read, _CHUNK, abandon_on_cancel=True)
            if not chunk:
                break
            for line in splitter.feed(chunk):
                yield line
        for line in splitter.close():
            yield line


def run_stdio(
    processor: Processor,
    *,
    session_id: str | None = None,
    bridge: HitlBridge | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    extension: ProtocolExtension | None = None,
    on_request: RequestHandler | None = None,
) -> int:
    """Serve ``processor`` on this process's stdin and stdout until the input ends; returns the exit code.

    ``bridge`` carries approvals over the wire (it must be the agent's approval service too); ``extension`` adds
    request and event types, and ``on_request`` acts on the added requests. For the other settings of
    :class:`SessionRunner`, build the runner: ``anyio.run(StdioRunner(SessionRunner(...)).run)``.
    """
    session = SessionRunner(
        processor, session_id=session_id, bridge=bridge, extension=extension, on_request=on_request
    )
    runner = StdioRunner(session, max_line_bytes=max_line_bytes)
    return anyio.run(runner.run)
