"""What every wire API shares: the request context, stream frames, and the interface each API implements."""

from __future__ import annotations

import http
from abc import ABC
from abc import abstractmethod
from dataclasses import dataclass
from typing import Any
from typing import ClassVar
from typing import cast

import msgspec

from hive_conformance.script import Round
from hive_conformance.script import ScriptToolCall

from .recording import Endpoint

__all__ = [
    "CREATED",
    "Call",
    "Frame",
    "WireApi",
    "arguments_value",
    "dumps",
    "joined",
    "sse_event",
    "stock_message",
]

CREATED = 1_700_000_000
"""The fixed creation time (Unix seconds) written into every response, so replies are the same every run."""

_extra_phrases = {529: "Overloaded"}


@dataclass(frozen=True, slots=True)
class Call:
    """The request a round answers."""

    round_index: int
    """The round's position in the script (0-based); ids in the reply derive from it."""
    model: str
    """The model name the reply reports: the one the request named, else the server's."""
    body: dict[str, Any]
    """The request's JSON object (empty when the body was not an object)."""
    stream: bool
    """Whether the client asked for a streamed reply."""
    sse: bool = True
    """Whether a stream is server-sent events; only Gemini without ``alt=sse`` streams a JSON array."""


@dataclass(frozen=True, slots=True)
class Frame:
    """One piece of a streamed reply, written and flushed at once."""

    data: bytes
    """The bytes on the wire (a whole SSE event, or a whole array element)."""
    chunks: int = 0
    """How many script chunks the frame carries; 0 for framing events (starts, stops, headers)."""
    closing: bool = False
    """Whether the frame belongs to the stream's ending (finish reason, usage, terminator)."""


class WireApi(ABC):
    """One model API's wire format: how a round becomes a stream, a body, or an error."""

    endpoint: ClassVar[Endpoint]
    """The endpoint name recorded for requests this API answers."""

    @abstractmethod
    def stream(self, round_: Round, call: Call) -> list[Frame]:
        """The round as stream frames, opening events first and closing events last."""

    @abstractmethod
    def body(self, round_: Round, call: Call) -> Any:
        """The round assembled into the API's non-streaming JSON body."""

    @abstractmethod
    def malformed_event(self, call: Call) -> bytes:
        """A stream event whose data is not valid JSON."""

    @abstractmethod
    def error_body(self, status: int, message: str) -> Any:
        """The API's own error body for an HTTP status."""

    @abstractmethod
    def context_length_error(self, message: str | None) -> tuple[int, Any]:
        """The status and body the API answers a prompt too long for the model with."""

    def stream_end(self, call: Call) -> bytes:
        """Bytes that end a stream cut short by a malformed event (a JSON array's closing bracket)."""
        return b""

    def stream_content_type(self, call: Call) -> str:
        """The ``content-type`` of a streamed reply."""
        return "text/event-stream; charset=utf-8"

    def headers(self, call: Call) -> dict[str, str]:
        """Headers the API adds to every reply (request ids)."""
        return {}


def dumps(value: Any) -> bytes:
    """Compact JSON, keys in insertion order, non-ASCII written raw."""
    return msgspec.json.encode(value)


def sse_event(data: Any, *, event: str | None = None, newline: bytes = b"\n") -> bytes:
    """One server-sent event: an optional ``event:`` line, one ``data:`` line, and a blank line."""
    payload = data if isinstance(data, bytes) else dumps(data)
    head = b"event: " + event.encode() + newline if event is not None else b""
    return head + b"data: " + payload + newline + newline


def joined(chunks: list[str]) -> str:
    """A part's chunks as one string."""
    return "".join(chunks)


def arguments_value(part: ScriptToolCall) -> Any:
    """A tool call's arguments for APIs that carry an object: the parsed object, else the raw text."""
    text = joined(part.arguments)
    if not text:
        return {}
    try:
        value = msgspec.json.decode(text)
    except msgspec.DecodeError:
        return text
    return cast("dict[str, Any]", value) if isinstance(value, dict) else text


def stock_message(status: int) -> str:
    """A short stock message for an HTTP status."""
    try:
        phrase = http.HTTPStatus(status).phrase
    except ValueError:
        phrase = _extra_phrases.get(status, "Error")
    return f"scripted failure: {status} {phrase}"
