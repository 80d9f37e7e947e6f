"""The bounded line reader reads what Python's universal newlines read, whatever the chunk boundaries."""

from __future__ import annotations

import io
import os
import tempfile

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.builtin_tools import _lines
from hive_core.builtin_tools._lines import text_lines

TEXT = st.lists(st.sampled_from(["a", "é", "\r", "\n", "\r\n", "z", "\u2028", "😀"]), max_size=40).map(
    "".join
)


def _read(data: bytes, encoding: str, limit: int, chunk: int = 65536) -> list[tuple[str, int, bool]]:
    with tempfile.TemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        return [
            (line.text, line.length, line.ended)
            for line in text_lines(handle.fileno(), encoding, limit=limit, chunk_size=chunk)
        ]


def _expected(text: str, limit: int) -> list[tuple[str, int, bool]]:
    lines = io.StringIO(text, newline=None).readlines()
    return [
        (line.rstrip("\n")[:limit], len(line.rstrip("\n")), line.endswith("\n")) for line in lines if line
    ]


@settings(max_examples=300, deadline=None)
@given(
    text=TEXT,
    chunk=st.integers(1, 7),
    limit=st.integers(1, 10),
    encoding=st.sampled_from(["utf-8", "utf-16"]),
)
def test_lines_match_universal_newlines_at_any_chunk_size(
    text: str, chunk: int, limit: int, encoding: str
) -> None:
    assert _read(text.encode(encoding), encoding, limit, chunk) == _expected(text, limit)


def test_bad_bytes_become_replacement_characters() -> None:
    assert _read(b"ok\n\xff\xfe?\n", "utf-8", 100) == [("ok", 2, True), ("\ufffd\ufffd?", 3, True)]


@pytest.mark.parametrize("size", [0, 1, 5])
def test_read_bounded_reads_no_more_than_the_limit(size: int) -> None:
    with tempfile.TemporaryFile() as handle:
        handle.write(b"x" * 10)
        handle.flush()
        assert _lines.read_bounded(handle.fileno(), size) == b"x" * size
        assert os.lseek(handle.fileno(), 0, os.SEEK_CUR) == 10
