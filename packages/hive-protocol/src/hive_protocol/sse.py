"""Server-Sent Events, the framing of the protocol's HTTP bindings: each event's ``data`` is one protocol line.

Over HTTP the lines travel as SSE events (the host's inbox of requests for an agent, a session's stream of events
for a client): ``id:`` names the event's position, so a reader that lost its connection asks for the rest with
``Last-Event-ID``. :func:`sse_event` writes one event; :class:`SseDecoder` reads a byte stream of them as the SSE
standard does (lines end in ``\\r\\n``, ``\\n`` or ``\\r``, also split across chunks; ``data`` lines of one event
are joined with ``\\n``; comments and unknown fields are ignored; one leading byte order mark is dropped; an event
is dispatched by the blank line after it). An event larger than the cap is skipped as it arrives and reported as
:class:`~hive_protocol.lines.LineTooLong`, so a runaway host cannot exhaust its reader.

Hand-written rather than taken from a library: the SSE clients of the field bind to one HTTP client (httpx-sse to
httpx) and none caps an event's size.
"""

from __future__ import annotations

from typing import Final

import msgspec

from .lines import DEFAULT_MAX_LINE_BYTES
from .lines import LineTooLong

__all__ = ["ServerSentEvent", "SseDecoder", "sse_event"]

_BOM: Final = b"\xef\xbb\xbf"


class ServerSentEvent(msgspec.Struct, frozen=True):
    """One dispatched event of a stream."""

    data: bytes
    """The event's data lines joined with ``\\n`` (one protocol line, without its ``\\n``)."""
    id: str | None = None
    """The last event id the stream named, at or before this event (``None`` while it named none)."""
    event: str | None = None
    """The event's type, when the stream named one (the protocol's bindings name none)."""


def sse_event(data: bytes, event_id: str | int | None = None) -> bytes:
    """One event whose data is ``data`` (a protocol line without its ``\\n``), with ``id:`` when given."""
    head = b"" if event_id is None else b"id: %s\n" % str(event_id).encode()
    body = b"".join(b"data: " + part + b"\n" for part in data.replace(b"\r\n", b"\n").split(b"\n"))
    return head + body + b"\n"


class SseDecoder:
    """Incremental reader of an event stream: feed it chunks as they arrive, take dispatched events out."""

    __slots__ = (
        "_buffer",
        "_data",
        "_event",
        "_last_id",
        "_limit",
        "_pending_cr",
        "_retry",
        "_size",
        "_skip_line",
        "_started",
    )

    def __init__(self, max_event_bytes: int = DEFAULT_MAX_LINE_BYTES, last_id: str | None = None) -> None:
        if max_event_bytes < 1:
            raise ValueError(f"max_event_bytes must be at least 1, got {max_event_bytes}")
        self._limit = max_event_bytes
        self._buffer = bytearray()
        self._data: list[bytes] | None = []
        """The data lines of the event being read; ``None`` while an event over the cap is being skipped."""
        self._size = 0
        self._event: str | None = None
        self._last_id = last_id
        self._retry: int | None = None
        self._started = False
        self._pending_cr = False
        self._skip_line = False
        """Whether the line being read is the rest of one over the cap (dropped, never parsed)."""

    @property
    def last_id(self) -> str | None:
        """The last event id the stream named (what a reconnect sends as ``Last-Event-ID``)."""
        return self._last_id

    @property
    def retry(self) -> int | None:
        """The reconnection time the stream asked for, in milliseconds (``None`` when it asked none)."""
        return self._retry

    def feed(self, chunk: bytes) -> list[ServerSentEvent | LineTooLong]:
        """Add ``chunk``; return the events it completed, in order."""
        buffer = self._buffer
        buffer += chunk
        if not self._started:
            if len(buffer) < len(_BOM) and _BOM.startswith(bytes(buffer)):
                return []
            self._started = True
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
        out: list[ServerSentEvent | LineTooLong] = []
        start = 0
        if self._pending_cr and buffer.startswith(b"\n"):
            start = 1  # the "\n" of a "\r\n" split across chunks
        self._pending_cr = False
        length = len(buffer)
        while start < length:
            newline = buffer.find(b"\n", start)
            carriage = buffer.find(b"\r", start, newline if newline >= 0 else length)
            end = carriage if carriage >= 0 else newline
            if end < 0:
                break
            self._line(bytes(buffer[start:end]), out)
            if end == carriage:
                if end + 1 == length:
                    self._pending_cr = True
                    start = length
                    break
                start = end + 2 if buffer[end + 1] == 0x0A else end + 1
            else:
                start = end + 1
        del buffer[:start]
        if len(buffer) > self._limit:
            # One line longer than any event may be: skip the event it belongs to as it arrives.
            self._size += len(buffer)
            buffer.clear()
            self._data = None
            self._skip_line = True
        return out

    def _line(self, line: bytes, out: list[ServerSentEvent | LineTooLong]) -> None:
        if self._skip_line:
            self._skip_line = False
            self._size += len(line)
            return
        if not line:
            self._dispatch(out)
            return
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if not name:
            return  # a comment (a keep-alive)
        if name == b"data":
            self._size += len(value) + 1
            if self._data is not None:
                if self._size > self._limit:
                    self._data = None
                else:
                    self._data.append(value)
        elif name == b"id":
            if b"\0" not in value:
                self._last_id = value.decode(errors="replace")
        elif name == b"event":
            self._event = value.decode(errors="replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)

    def _dispatch(self, out: list[ServerSentEvent | LineTooLong]) -> None:
        data, size, event = self._data, self._size, self._event
        self._data, self._size, self._event = [], 0, None
        if data is None:
            out.append(LineTooLong(max(size - 1, 0), self._limit))
        elif data:
            out.append(ServerSentEvent(b"\n".join(data), self._last_id, event))
