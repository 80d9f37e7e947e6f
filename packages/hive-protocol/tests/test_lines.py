from __future__ import annotations

import io
import tracemalloc
from collections.abc import AsyncIterator

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_protocol import LineSplitter
from hive_protocol import LineTooLong
from hive_protocol import aiter_lines
from hive_protocol import iter_lines


def split(chunks: list[bytes], limit: int = 1024) -> list[bytes | LineTooLong]:
    splitter = LineSplitter(limit)
    out: list[bytes | LineTooLong] = []
    for chunk in chunks:
        out += splitter.feed(chunk)
    return out + splitter.close()


def test_splits_on_newline_only() -> None:
    data = 'a\u2028b\rc\x0bd\x0ce\x1cf\u0085g\n{"x":1}\n'.encode()
    assert split([data]) == ["a\u2028b\rc\x0bd\x0ce\x1cf\u0085g".encode(), b'{"x":1}']


def test_crlf_is_a_line_end_and_a_lone_cr_is_content() -> None:
    assert split([b"one\r\ntwo\r\nthr\ree\n"]) == [b"one", b"two", b"thr\ree"]


def test_blank_and_whitespace_lines_are_skipped() -> None:
    assert split([b"\n\n  \t\n\r\nx\n\n"]) == [b"x"]


def test_final_line_without_newline_is_kept() -> None:
    assert split([b"first\nlast"]) == [b"first", b"last"]
    assert split([b"first\nlast\r"]) == [b"first", b"last"]


def test_lines_cross_chunk_boundaries() -> None:
    assert split([b"ab", b"c\nd", b"", b"e\r", b"\nf"]) == [b"abc", b"de", b"f"]


@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=8), st.data())
def test_any_chunking_gives_the_same_lines(lines: list[bytes], data: st.DataObject) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    expected = [line.removesuffix(b"\r") for line in lines]
    expected = [line for line in expected if line and not line.isspace()]
    assert split(chunks, limit=10_000) == expected


def test_line_at_the_cap_passes_and_one_byte_more_is_reported() -> None:
    assert split([b"x" * 10 + b"\n"], limit=10) == [b"x" * 10]
    assert split([b"x" * 11 + b"\nok\n"], limit=10) == [LineTooLong(11, 10), b"ok"]


def test_oversized_line_across_chunks_is_reported_once_with_its_size() -> None:
    chunks = [b"ok1\n" + b"y" * 6, b"y" * 7, b"y" * 8 + b"\nok2\n"]
    assert split(chunks, limit=10) == [b"ok1", LineTooLong(21, 10), b"ok2"]


def test_oversized_unterminated_last_line_is_reported() -> None:
    assert split([b"z" * 30], limit=10) == [LineTooLong(30, 10)]


def test_invalid_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        LineSplitter(0)


class _Endless(io.RawIOBase):
    """A stream producing one huge line, then a normal one, without ever holding the huge line."""

    def __init__(self, huge: int) -> None:
        self.left = huge
        self.tail = b'\n{"type":"cancel"}\n'

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.left > 0:
            n = min(len(buffer), self.left)
            buffer[:n] = b"a" * n
            self.left -= n
            return n
        n = min(len(buffer), len(self.tail))
        buffer[:n] = self.tail[:n]
        self.tail = self.tail[n:]
        return n


def test_a_line_over_the_cap_does_not_exhaust_memory() -> None:
    huge = 64 * 1024 * 1024
    tracemalloc.start()
    try:
        lines = list(iter_lines(io.BufferedReader(_Endless(huge)), max_line_bytes=1024 * 1024))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == [LineTooLong(huge, 1024 * 1024), b'{"type":"cancel"}']
    assert peak < 8 * 1024 * 1024, f"peak {peak} bytes while skipping a {huge}-byte line"


def test_default_cap_is_16_mib() -> None:
    line = b"a" * (16 * 1024 * 1024)
    assert list(iter_lines(io.BytesIO(line + b"\n" + line + b"a\n"))) == [
        line,
        LineTooLong(len(line) + 1, len(line)),
    ]


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def test_async_reader() -> None:
    async def main() -> list[bytes | LineTooLong]:
        return [
            line
            async for line in aiter_lines(_chunks([b"a\nb", b"b\r\n", b"c" * 20, b"\nend"]), max_line_bytes=8)
        ]

    assert anyio.run(main) == [b"a", b"bb", LineTooLong(20, 8), b"end"]


def test_too_long_message_names_size_and_limit() -> None:
    assert LineTooLong(20, 8).message == "line of 20 bytes exceeds the limit of 8 bytes"
