"""JSON-RPC messages over a CLI's stdio: the transport under :class:`acp.connection.Connection`.

One JSON object per line on the CLI's stdout, split on ``\\n`` only (a CLI may put U+2028 in a string). What a
CLI prints that is not a JSON object (a banner, a log line on the wrong stream, a line past the cap) is counted and
kept in a short list for the error message, never fatal: many CLIs print a line or two of noise at start. The
CLI's stderr is drained all the time (a full pipe would stall it) into a bounded tail, quoted when it fails.
"""

from __future__ import annotations

import contextlib
import json
from collections import deque
from collections.abc import Callable
from typing import Any
from typing import Final

import anyio
import msgspec
from anyio.abc import ByteReceiveStream

from hive_core.child_processes import SupervisedProcess
from hive_protocol import LineSplitter
from hive_protocol import LineTooLong
from hive_protocol import excerpt

from .json_values import as_object

__all__ = ["MAX_LINE_BYTES", "ProcessTransport"]

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""The cap on one protocol line: some CLIs send a whole file or a session replay in one message."""
_STDERR_TAIL: Final = 16 * 1024
_KEPT_INVALID: Final = 5
_DECODER: Final = msgspec.json.Decoder()
"""Decodes each line: about 1.1 µs for a typical stream-json event against 6.8 for ``json.loads`` (measured)."""
_EXCERPT: Final = 200

MessageHook = Callable[[dict[str, Any]], bool]
"""Sees each incoming message first, in arrival order; ``True`` when it consumed it (acp never sees it)."""
SendHook = Callable[[dict[str, Any]], None]
"""Sees each outgoing message just before it is written."""


class ProcessTransport:
    """acp's message transport (``send``/``receive``/``close``) over a child process's stdin and stdout."""

    peer = "the agent"
    """What the child is called in the errors of :meth:`send`."""

    def __init__(
        self,
        process: SupervisedProcess,
        *,
        incoming: MessageHook | None = None,
        outgoing: SendHook | None = None,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.process = process
        """The CLI."""
        self.incoming = incoming
        """Called with each message read, before acp gets it (see :data:`MessageHook`)."""
        self.outgoing = outgoing
        """Called with each message sent, before it is written."""
        self.invalid_lines = 0
        """How many stdout lines were not JSON objects (or were longer than the cap)."""
        self.last_invalid: deque[str] = deque(maxlen=_KEPT_INVALID)
        """Excerpts of the last few of them."""
        self.at_eof = False
        """Whether stdout reached its end."""
        self._splitter = LineSplitter(max_line_bytes)
        self._lines: deque[bytes | LineTooLong] = deque()
        self._stderr = bytearray()
        self._send_lock = anyio.Lock()
        self._closed = False
        self.stderr_closed = anyio.Event()
        """Set once stderr reached its end (everything the CLI wrote there is in the tail)."""

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message (:meth:`frame`) on the CLI's stdin; raises :class:`ConnectionError` once it is closed."""
        stdin = self.process.stdin
        if stdin is None or self._closed:
            raise ConnectionError(f"{self.peer}'s stdin is closed")
        if self.outgoing is not None:
            self.outgoing(message)
        try:
            async with self._send_lock:
                await stdin.send(self.frame(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise ConnectionError(f"cannot write to {self.peer}: {type(exc).__name__}") from exc

    def frame(self, message: dict[str, Any]) -> bytes:
        """``message`` as the bytes :meth:`send` writes: one line of compact JSON."""
        return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

    async def receive(self) -> dict[str, Any] | None:
        """The next message for acp; ``None`` at the end of stdout."""
        while True:
            line = await self._next_line()
            if line is None:
                return None
            message = self._decode(line)
            if message is None:
                continue
            if self.incoming is not None and self.incoming(message):
                continue
            return message

    async def close(self) -> None:
        """Close the CLI's stdin (an agent reading it sees its end and may exit on its own)."""
        if self._closed:
            return
        self._closed = True
        if self.process.stdin is not None:
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(anyio.BrokenResourceError, OSError):
                    await self.process.stdin.aclose()

    async def drain_stderr(self) -> None:
        """Read the CLI's stderr until its end, keeping the last few KiB (run in the background). Cancelled, it
        leaves :attr:`stderr_closed` unset: a later drain reads on where it stopped."""
        if self.process.stderr is not None:
            await self._drain(self.process.stderr)
        self.stderr_closed.set()

    def stderr_tail(self) -> str:
        """The end of what the CLI wrote to stderr, decoded leniently."""
        return self._stderr.decode("utf-8", "replace").strip()

    def describe_noise(self) -> str:
        """A sentence on the invalid lines, for an error message; empty when there were none."""
        if not self.invalid_lines:
            return ""
        last = "; ".join(self.last_invalid)
        return f"{self.invalid_lines} line(s) on stdout were not JSON-RPC (last: {last})"

    async def _drain(self, stream: ByteReceiveStream) -> None:
        while True:
            try:
                chunk = await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return
            self._stderr += chunk
            if len(self._stderr) > _STDERR_TAIL:
                del self._stderr[: len(self._stderr) - _STDERR_TAIL]

    async def _next_line(self) -> bytes | LineTooLong | None:
        stdout = self.process.stdout
        while not self._lines:
            if self.at_eof or stdout is None:
                return None
            try:
                chunk = await stdout.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                self.at_eof = True
                self._lines.extend(self._splitter.close())
                continue
            self._lines.extend(self._splitter.feed(chunk))
        return self._lines.popleft()

    def _decode(self, line: bytes | LineTooLong) -> dict[str, Any] | None:
        if isinstance(line, LineTooLong):
            self._invalid(line.message)
            return None
        try:
            message: object = _DECODER.decode(line)
        except (msgspec.DecodeError, RecursionError):  # RecursionError: nested deeper than the decoder goes
            self._invalid(repr(excerpt(line.decode("utf-8", "replace"), _EXCERPT)))
            return None
        decoded = as_object(message)
        if decoded is None:
            self._invalid(repr(excerpt(line.decode("utf-8", "replace"), _EXCERPT)))
        return decoded

    def _invalid(self, text: str) -> None:
        self.invalid_lines += 1
        self.last_invalid.append(text)
