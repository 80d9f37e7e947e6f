"""The Server-Sent Events reader the Anthropic and Gemini adapters stream through."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hive_providers.sse import ServerSentEvent
from hive_providers.sse import iter_sse

pytestmark = pytest.mark.anyio


async def _chunks(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def _events(*chunks: bytes) -> list[ServerSentEvent]:
    return [event async for event in iter_sse(_chunks(*chunks))]


async def test_events_are_named_joined_and_split_at_every_line_ending() -> None:
    events = await _events(
        b": a comment\nevent: ping\ndata: {}\n\n",
        b"data: one\r",
        b"\ndata:two\r\n\r\n",
        b"event: done\rdata: last",
    )
    assert events == [
        ServerSentEvent("ping", b"{}"),
        ServerSentEvent("", b"one\ntwo"),
        ServerSentEvent("done", b"last"),
    ]
    assert (events[0].event, events[0].data) == ("ping", b"{}")


async def test_a_block_without_data_is_no_event() -> None:
    assert await _events(b"event: ping\n\n: only a comment\n\n") == []


def test_an_event_reads_back_in_its_repr() -> None:
    assert repr(ServerSentEvent("ping", b"{}")) == "ServerSentEvent(event='ping', data=b'{}')"
