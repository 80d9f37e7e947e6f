"""Copilot's server protocol framing: JSON-RPC messages with ``Content-Length`` headers (LSP style) over stdio.

:class:`FramedTransport` is :class:`~hive_providers.backends.kit.transport.ProcessTransport` (acp's transport:
the hooks, the stderr tail, the noise count) with Copilot's framing instead of one JSON object per line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from typing import Final

import anyio

from hive_protocol import LineTooLong
from hive_providers.backends.kit.transport import MAX_LINE_BYTES
from hive_providers.backends.kit.transport import ProcessTransport

__all__ = ["FramedTransport", "frame"]

_HEADER_END: Final = b"\r\n\r\n"
_MAX_HEADER: Final = 8192


def frame(message: dict[str, Any]) -> bytes:
    """``message`` as one framed JSON-RPC message."""
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FramedTransport(ProcessTransport):
    """acp's message transport over a Copilot server's stdin and stdout, ``Content-Length`` framed.

    ``on_end`` is called once when stdout ends or its framing breaks (nothing more can be read after either).
    """

    peer = "the Copilot server"
    _buffer = b""
    on_end: Callable[[], None] | None = None

    def frame(self, message: dict[str, Any]) -> bytes:
        """``message`` as :meth:`send` writes it: ``Content-Length`` framed."""
        return frame(message)

    async def _next_line(self) -> bytes | LineTooLong | None:
        """The next message body (a "line" to the base class's decoder); ``None`` at the end of stdout."""
        while True:
            end = self._buffer.find(_HEADER_END)
            if end >= 0:
                length = _content_length(self._buffer[:end])
                start = end + len(_HEADER_END)
                if length is None or length > MAX_LINE_BYTES:
                    # Unreadable framing: nothing after it can be trusted to line up. The headers go to the
                    # decoder as a "line" that is not JSON, so the error message quotes them.
                    headers, self._buffer = self._buffer[:end], b""
                    self.at_eof = True
                    return headers
                if len(self._buffer) >= start + length:
                    body = self._buffer[start : start + length]
                    self._buffer = self._buffer[start + length :]
                    return body
            elif len(self._buffer) > _MAX_HEADER:
                noise, self._buffer = self._buffer[:_MAX_HEADER], b""
                self.at_eof = True
                return noise
            if self.at_eof or self.process.stdout is None:
                self.at_eof = True
                if self.on_end is not None:
                    on_end, self.on_end = self.on_end, None
                    on_end()
                return None
            try:
                chunk = await self.process.stdout.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                self.at_eof = True
                continue
            self._buffer += chunk


def _content_length(headers: bytes) -> int | None:
    for line in headers.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None
