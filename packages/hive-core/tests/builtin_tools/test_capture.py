from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hive_core.builtin_tools._capture import HeadTailBuffer

_MARKER = re.compile(r"\[\.\.\. ([\d,]+) characters omitted \.\.\.\]\n")

chunks = st.lists(st.text(alphabet="ab\n", max_size=40), max_size=40)


@given(chunks, st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=60))
def test_keeps_everything_that_fits_and_accounts_for_what_it_drops(
    pieces: list[str], head: int, tail: int
) -> None:
    buffer = HeadTailBuffer(limit=head + tail, head=head)
    for piece in pieces:
        buffer.write(piece)
    whole = "".join(pieces)
    kept = buffer.getvalue()
    assert buffer.total == len(whole)
    if len(whole) <= head + tail:
        assert kept == whole
        return
    found = _MARKER.search(kept)
    assert found is not None
    start, omitted, end = kept[: found.start()], int(found.group(1).replace(",", "")), kept[found.end() :]
    assert whole.endswith(end)
    assert len(end) <= tail
    # The head may end with a newline added so that the marker starts a line of its own.
    readings = [start, start[:-1]] if start.endswith("\n") else [start]
    assert any(
        whole.startswith(reading) and len(reading) <= head and len(reading) + omitted + len(end) == len(whole)
        for reading in readings
    )


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "line1\nline2\nline3\nline4\nline5\nline6\n",
            "line1\n[... 18 characters omitted ...]\nline5\nline6\n",
        ),
        ("line1\nline2\nline3\nline4\nline5\nline6", "line1\n[... 18 characters omitted ...]\nline5\nline6"),
        (
            "line1\nline2\nline3\nline4\nline5\nline6\nx",
            "line1\n[... 18 characters omitted ...]\nline5\nline6\nx",
        ),
        # The tail starts right after a line break: nothing of it is dropped.
        (
            "line1\nline2\nline3\nline4\nline5\nline6xyz",
            "line1\n[... 18 characters omitted ...]\nline5\nline6xyz",
        ),
        # The head ends right before a line break: nothing of it is dropped.
        (
            "line1\nli\nline3\nline4\nline5\nline6\n",
            "line1\nli\n[... 13 characters omitted ...]\nline5\nline6\n",
        ),
        (
            "abcdefghij\nlong line with no break anywhere",
            "abcdefgh\n[... 21 characters omitted ...]\nbreak anywhere",
        ),
    ],
)
def test_cuts_at_line_breaks_near_the_limits(text: str, kept: str) -> None:
    buffer = HeadTailBuffer(limit=22, head=8)
    buffer.write(text)
    assert buffer.getvalue() == kept


def test_the_head_must_leave_room_for_a_tail() -> None:
    with pytest.raises(ValueError, match="shorter than the limit"):
        HeadTailBuffer(limit=10, head=10)
