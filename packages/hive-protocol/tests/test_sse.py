"""Server-Sent Events framing: what :func:`sse_event` writes, :class:`SseDecoder` reads back, however it is cut."""

from __future__ import annotations

import pytest

from hive_protocol import LineTooLong
from hive_protocol import ServerSentEvent
from hive_protocol import SseDecoder
from hive_protocol import sse_event


def decode_in_pieces(stream: bytes, size: int, **options: int) -> list[ServerSentEvent | LineTooLong]:
    decoder = SseDecoder(**options)
    out: list[ServerSentEvent | LineTooLong] = []
    for start in range(0, len(stream), size):
        out += decoder.feed(stream[start : start + size])
    return out


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_events_written_are_read_back_whatever_the_chunks(size: int) -> None:
    lines = [b'{"type":"user_message","content":"hi"}', b'{"type":"cancel"}', "é ✓".encode()]
    stream = b"".join(sse_event(line, index) for index, line in enumerate(lines, 1))

    assert decode_in_pieces(stream, size) == [
        ServerSentEvent(line, str(index)) for index, line in enumerate(lines, 1)
    ]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 2, 1000])
def test_every_line_end_of_the_standard_is_read(end: bytes, size: int) -> None:
    stream = end.join([b"id: 7", b"data: one", b"data: two", b"", b"data: three", b"", b""])

    assert decode_in_pieces(stream, size) == [
        ServerSentEvent(b"one\ntwo", "7"),
        ServerSentEvent(b"three", "7"),  # the last id stays until the stream names another
    ]


def test_comments_unknown_fields_types_and_a_byte_order_mark() -> None:
    decoder = SseDecoder()
    stream = b"\xef\xbb\xbf: keep-alive\nevent: note\nfoo: bar\ndata:no space\nretry: 1500\n\n"

    assert decoder.feed(stream) == [ServerSentEvent(b"no space", None, "note")]
    assert decoder.retry == 1500


def test_an_event_with_no_data_is_not_dispatched_but_its_id_is_kept() -> None:
    decoder = SseDecoder(last_id="3")
    assert decoder.feed(b"id: 4\n\n") == []
    assert decoder.last_id == "4"


def test_an_event_over_the_cap_is_skipped_and_what_follows_is_read() -> None:
    # The long event's second line would forge an id if it were parsed from where the cut left it.
    big = b"data: " + b"x" * 50 + b"\ndata: " + b"y" * 20 + b"id: 99\n\n"
    stream = big + sse_event(b"after", 2)

    for size in (1, 8, 1000):
        out = decode_in_pieces(stream, size, max_event_bytes=40)
        assert out[-1] == ServerSentEvent(b"after", "2")
        assert len(out) == 2
        assert isinstance(out[0], LineTooLong)
        assert out[0].limit == 40


def test_a_carriage_return_split_from_its_line_feed_ends_one_line() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n\r\n") == [ServerSentEvent(b"a")]


def test_a_line_with_line_breaks_is_written_as_several_data_lines() -> None:
    assert sse_event(b"a\nb") == b"data: a\ndata: b\n\n"
    assert SseDecoder().feed(sse_event(b"a\nb", "x")) == [ServerSentEvent(b"a\nb", "x")]
