"""Canonical encoding and tolerant decoding of protocol lines.

Writing is strict: one compact JSON object, ``type`` first, fields in declaration order, unset optionals left out,
non-ASCII raw, one trailing ``\\n``. Reading is tolerant: fields in any order, unknown fields ignored, an unknown
event type kept as an :class:`UnknownEvent`, and it never fails on hostile input with anything but the protocol's
errors: free-form values nested deeper than :data:`~hive_protocol.MAX_NESTING_DEPTH` are refused, and an error
quotes at most an excerpt of the line.
"""

from __future__ import annotations

import re
from typing import Any
from typing import Final
from typing import cast
from typing import get_args

import msgspec

from .events import ErrorEvent
from .events import Event
from .limits import TOO_DEEP
from .limits import excerpt
from .limits import nested_too_deep
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
    An :class:`UnknownEvent` is written back as it was read. Text that is not valid Unicode (a lone surrogate, as
    Python makes of a file name that is not UTF-8) is written with U+FFFD in its place instead of failing.
    """
    value: object = message.raw if type(message) is UnknownEvent else message
    try:
        return _encoder.encode(value) + b"\n"
    except UnicodeEncodeError:
        return _encoder.encode(_replace_surrogates(msgspec.to_builtins(value))) + b"\n"


def decode_request(line: bytes | str) -> Request | UnreadableRequest:
    """Read one request line. Never raises: an unreadable line becomes an :class:`UnreadableRequest`.

    Its message quotes at most a few hundred characters of the line, however long the line is.
    """
    try:
        return _request_decoder.decode(line)
    except msgspec.DecodeError as exc:
        return UnreadableRequest(_explain(exc, _loads(line), _REQUEST_TYPES, "request"), _as_bytes(line))
    except RecursionError:
        return UnreadableRequest(TOO_DEEP, _as_bytes(line))


def decode_event(line: bytes | str) -> Event | UnknownEvent:
    """Read one event line; an unknown ``type`` gives an :class:`UnknownEvent`.

    Raises :class:`ProtocolError` for malformed JSON, a value that is not an object with a string ``type``, a
    known type whose fields are invalid, or free-form values nested deeper than
    :data:`~hive_protocol.MAX_NESTING_DEPTH`.
    """
    try:
        return _event_decoder.decode(line)
    except msgspec.DecodeError as exc:
        value = _loads(line)
        raw = _as_object(value)
        kind = raw.get("type") if raw is not None else None
        if raw is not None and isinstance(kind, str) and kind not in _EVENT_TYPES:
            if nested_too_deep(raw):
                raise ProtocolError(f"unknown event type {excerpt(repr(kind))}: {TOO_DEEP}") from None
            return UnknownEvent(kind, raw)
        raise ProtocolError(_explain(exc, value, _EVENT_TYPES, "event")) from None
    except RecursionError:
        raise ProtocolError(TOO_DEEP) from None


_MALFORMED: Final = object()
_TOO_DEEP: Final = object()
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _loads(line: bytes | str) -> object:
    try:
        return _any_decoder.decode(line)
    except msgspec.DecodeError:
        return _MALFORMED
    except RecursionError:
        return _TOO_DEEP


def _explain(exc: msgspec.DecodeError, obj: object, known: frozenset[str], what: str) -> str:
    # msgspec's messages may quote the input (an invalid enum value, a tag): never more than an excerpt of it.
    detail = excerpt(str(exc))
    if obj is _MALFORMED:
        return f"malformed JSON: {detail}"
    if obj is _TOO_DEEP:
        return TOO_DEEP
    if obj is None:
        return "expected a JSON object, got null"
    raw = _as_object(obj)
    if raw is None:
        return f"expected a JSON object, got {type(obj).__name__}"
    kind = raw.get("type")
    if kind is None:
        return f"the {what} has no 'type'"
    if not isinstance(kind, str) or kind not in known:
        return f"unknown {what} type {excerpt(repr(kind))}; expected one of {', '.join(sorted(known))}"
    return f"invalid {kind}: {detail}"


def _as_object(value: object) -> dict[str, Any] | None:
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _replace_surrogates(value: object) -> object:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        items = cast("dict[object, object]", value).items()
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in items}
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in cast("list[object]", value)]
    return value


def _as_bytes(line: bytes | str) -> bytes:
    return line.encode() if isinstance(line, str) else bytes(line)
