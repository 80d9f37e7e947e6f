"""A lean Server-Sent Events reader for streaming model responses.

The adapters read the raw byte stream of an HTTP response (the SDKs still own configuration, authentication and
error types) and decode each ``data:`` payload themselves with msgspec: building the SDKs' response objects per
chunk costs several times more than the chunk's own parsing.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from collections.abc import AsyncIterator

import msgspec

__all__ = ["ServerSentEvent", "iter_sse"]


class ServerSentEvent(msgspec.Struct, frozen=True, gc=False):
    """One event: its ``event:`` name (empty when unnamed) and its ``data:`` payload."""

    event: str
    """The event's name (``event:`` field), or empty."""
    data: bytes
    """The payload; several ``data:`` lines joined with ``\\n``."""


async def iter_sse(chunks: AsyncIterable[bytes]) -> AsyncIterator[ServerSentEvent]:
    """Events of an SSE byte stream. Lines end at ``\\n``, ``\\r\\n`` or ``\\r``; comments are skipped."""
    buffer = b""
    event = ""
    data: list[bytes] = []
    async for chunk in chunks:
        buffer += chunk
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):
                continue  # a \r\n may be split across chunks
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if not line:
                if data:
                    yield ServerSentEvent(event, b"\n".join(data))
                event, data = "", []
                continue
            field, _, value = line.partition(b":")
            if value.startswith(b" "):
                value = value[1:]
            if field == b"data":
                data.append(value)
            elif field == b"event":
                event = value.decode()
    if buffer.rstrip(b"\r"):
        field, _, value = buffer.rstrip(b"\r").partition(b":")
        if field == b"data":
            data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield ServerSentEvent(event, b"\n".join(data))
