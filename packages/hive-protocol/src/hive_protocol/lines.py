"""Framing: split a byte stream into protocol lines.

Lines end at ``\\n`` only; a ``\\r`` before it is dropped, and U+2028 or any other character is content. Blank
lines are skipped. A line longer than the cap is reported as :class:`LineTooLong` and skipped without ever being
held in memory whole, so a runaway writer cannot exhaust the reader.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Iterator
from typing import Final
from typing import Protocol

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "LineSplitter",
    "LineTooLong",
    "aiter_lines",
    "iter_lines",
]

DEFAULT_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
"""The default cap on one line, 16 MiB, not counting its ``\\n``."""

_CHUNK: Final = 64 * 1024


class LineTooLong:
    """Stands in for a line that exceeded the cap; its bytes were discarded as they arrived."""

    __slots__ = ("limit", "size")

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        """How many bytes the line had (up to the end of the stream if it never ended)."""
        self.limit = limit
        """The cap it exceeded."""

    def __repr__(self) -> str:
        return f"LineTooLong(size={self.size}, limit={self.limit})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LineTooLong) and (self.size, self.limit) == (other.size, other.limit)

    def __hash__(self) -> int:
        return hash((self.size, self.limit))

    @property
    def message(self) -> str:
        """A sentence for the ``error`` event that answers the line."""
        return f"line of {self.size} bytes exceeds the limit of {self.limit} bytes"


class LineSplitter:
    """Incremental splitter: feed it chunks as they arrive, take complete lines out."""

    __slots__ = ("_buf", "_limit", "_skipped")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        if max_line_bytes < 1:
            raise ValueError(f"max_line_bytes must be at least 1, got {max_line_bytes}")
        self._limit = max_line_bytes
        self._buf = bytearray()
        self._skipped: int | None = None

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """Add ``chunk``; return the lines it completed, in order."""
        out: list[bytes | LineTooLong] = []
        start, end, limit, buf = 0, len(chunk), self._limit, self._buf
        while start < end:
            nl = chunk.find(b"\n", start)
            if self._skipped is not None:
                if nl < 0:
                    self._skipped += end - start
                    break
                out.append(LineTooLong(self._skipped + nl - start, limit))
                self._skipped = None
            elif nl < 0:
                if len(buf) + end - start > limit:
                    self._skipped = len(buf) + end - start
                    buf.clear()
                else:
                    buf += chunk[start:]
                break
            elif len(buf) + nl - start > limit:
                out.append(LineTooLong(len(buf) + nl - start, limit))
                buf.clear()
            elif buf:
                buf += chunk[start:nl]
                _emit(bytes(buf), out)
                buf.clear()
            else:
                _emit(chunk[start:nl], out)
            start = nl + 1
        return out

    def close(self) -> list[bytes | LineTooLong]:
        """End of stream: the last line, if it had no ``\\n``."""
        out: list[bytes | LineTooLong] = []
        if self._skipped is not None:
            out.append(LineTooLong(self._skipped, self._limit))
            self._skipped = None
        elif self._buf:
            _emit(bytes(self._buf), out)
            self._buf.clear()
        return out


def _emit(line: bytes, out: list[bytes | LineTooLong]) -> None:
    if line.endswith(b"\r"):
        line = line[:-1]
    if line and not line.isspace():
        out.append(line)


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def iter_lines(
    stream: _Readable, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, chunk_size: int = _CHUNK
) -> Iterator[bytes | LineTooLong]:
    """Lines of a binary stream, read as they become available (``read1`` where the stream has it)."""
    splitter = LineSplitter(max_line_bytes)
    read = getattr(stream, "read1", stream.read)
    while chunk := read(chunk_size):
        yield from splitter.feed(chunk)
    yield from splitter.close()


async def aiter_lines(
    chunks: AsyncIterable[bytes], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> AsyncIterator[bytes | LineTooLong]:
    """Lines of an async stream of byte chunks (an anyio byte stream, an HTTP body, a subprocess pipe)."""
    splitter = LineSplitter(max_line_bytes)
    async for chunk in chunks:
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.close():
        yield line
