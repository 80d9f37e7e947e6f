"""Canonical encoding and tolerant decoding of protocol lines.

Writing is strict: one compact JSON object, ``type`` first, fields in declaration order, unset optionals left out,
non-ASCII raw, one trailing ``\\n``. Reading is tolerant: fields in any order, unknown fields ignored, an unknown
event type kept as an :class:`UnknownEvent`.
"""

from __future__ import annotations

from typing import Any, Final, get_args

import msgspec

from .events import ErrorEvent, Event
from .requests import Request

__all__ = [
    "ProtocolError",
    "UnknownEvent",
    "UnreadableRequest",
    "decode_event",
    "decode_request",
    "encode",
]


class ProtocolError(ValueError):
    """A line that cannot be read as a protocol message."""


class UnknownEvent(msgspec.Struct, frozen=True):
    """An event of a type this version does not know, kept whole for forward compatibility."""

    type: str
    """The event's ``type``."""
    raw: dict[str, Any]
    """The whole object as it was read, ``type`` included."""


class UnreadableRequest(msgspec.Struct, frozen=True):
    """A request line that could not be read: malformed JSON, ``null``, an unknown type or invalid fields."""

    message: str
    """Why it could not be read."""
    line: bytes = b""
    """The line as received (possibly truncated by the caller)."""

    def to_event(self) -> ErrorEvent:
        """The ``error`` event a runner answers with; the session goes on."""
        return ErrorEvent(message=f"Unreadable request skipped: {self.message}", code="unreadable_request")


_encoder: Final = msgspec.json.Encoder()
_request_decoder: Final = msgspec.json.Decoder(Request)
_event_decoder: Final = msgspec.json.Decoder(Event)
_any_decoder: Final = msgspec.json.Decoder()
_REQUEST_TYPES: Final = frozenset(t.__struct_config__.tag for t in get_args(Request))
_EVENT_TYPES: Final = frozenset(t.__struct_config__.tag for t in get_args(Event))


def encode(message: Event | Request | UnknownEvent) -> bytes:
    """The canonical line for ``message``, including its trailing ``\\n``.

    Every runner writes exactly these bytes, and the SSE ``data:`` payload is this line without the newline.
    An :class:`UnknownEvent` is written back as it was read.
    """
    if type(message) is UnknownEvent:
        return _encoder.encode(message.raw) + b"\n"
    return _encoder.encode(message) + b"\n"


def decode_request(line: bytes | str) -> Request | UnreadableRequest:
    """Read one request line. Never raises: an unreadable line becomes an :class:`UnreadableRequest`."""
    try:
        return _request_decoder.decode(line)
    except msgspec.DecodeError as exc:
        return UnreadableRequest(_explain(exc, line, _REQUEST_TYPES, "request"), _as_bytes(line))


def decode_event(line: bytes | str) -> Event | UnknownEvent:
    """Read one event line; an unknown ``type`` gives an :class:`UnknownEvent`.

    Raises :class:`ProtocolError` for malformed JSON, a value that is not an object with a string ``type``, or a
    known type whose fields are invalid.
    """
    try:
        return _event_decoder.decode(line)
    except msgspec.DecodeError as exc:
        obj = _loads(line)
        kind = obj.get("type") if isinstance(obj, dict) else None  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(obj, dict) and isinstance(kind, str) and kind not in _EVENT_TYPES:
            return UnknownEvent(kind, obj)  # pyright: ignore[reportUnknownArgumentType]
        raise ProtocolError(_explain(exc, line, _EVENT_TYPES, "event")) from None


_MALFORMED: Final = object()


def _loads(line: bytes | str) -> object:
    try:
        return _any_decoder.decode(line)
    except msgspec.DecodeError:
        return _MALFORMED


def _explain(exc: msgspec.DecodeError, line: bytes | str, known: frozenset[str], what: str) -> str:
    obj = _loads(line)
    if obj is _MALFORMED:
        return f"malformed JSON: {exc}"
    if obj is None:
        return "expected a JSON object, got null"
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"  # pyright: ignore[reportUnknownArgumentType]
    kind = obj.get("type")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    if kind is None:
        return f"the {what} has no 'type'"
    if not isinstance(kind, str) or kind not in known:
        return f"unknown {what} type {kind!r}; expected one of {', '.join(sorted(known))}"
    return f"invalid {kind}: {exc}"


def _as_bytes(line: bytes | str) -> bytes:
    return line.encode() if isinstance(line, str) else bytes(line)
