"""Canonical encoding and tolerant decoding of protocol lines.

Writing is strict: one compact JSON object, ``type`` first, fields in declaration order, unset optionals left out,
non-ASCII raw, one trailing ``\\n``. Reading is tolerant: fields in any order, unknown fields ignored, an unknown
event type kept as an :class:`UnknownEvent`, and it never fails on hostile input with anything but the protocol's
errors: free-form values nested deeper than :data:`~hive_protocol.MAX_NESTING_DEPTH` are refused, and an error
quotes at most an excerpt of the line.

An embedder adds request and event types of its own with a :class:`ProtocolExtension`, whose decoders know them
besides the built-in ones; the module's :func:`decode_request` and :func:`decode_event` know only the built-in
types, so to every reader without the extension its events stay :class:`UnknownEvent`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from typing import Final
from typing import Union
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
    "ExtensionClash",
    "ProtocolError",
    "ProtocolExtension",
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


class ExtensionClash(ValueError):
    """A :class:`ProtocolExtension` type that cannot be added: its ``type`` is built in or taken, or its struct
    would not be written in the canonical form."""


_encoder: Final = msgspec.json.Encoder()
_any_decoder: Final = msgspec.json.Decoder()
_BUILT_IN_REQUESTS: Final[tuple[type[msgspec.Struct], ...]] = get_args(Request)
_BUILT_IN_EVENTS: Final[tuple[type[msgspec.Struct], ...]] = get_args(Event)


def _tag(kind: type[msgspec.Struct]) -> str:
    return cast("str", kind.__struct_config__.tag)


_BUILT_IN_TYPES: Final = frozenset(_tag(kind) for kind in (*_BUILT_IN_REQUESTS, *_BUILT_IN_EVENTS))


class ProtocolExtension:
    """Request and event types an embedder adds to the protocol, and the decoders that read them.

    Each type is a ``msgspec.Struct`` declared like the built-in ones: ``tag_field="type"``, a ``tag`` of its
    own (its wire ``type``, which must not be a built-in request or event type, nor given twice) and
    ``omit_defaults=True`` (so :func:`encode` writes it in the canonical form). Anything else raises
    :class:`ExtensionClash`. Give the same extension to the runner (which reads requests with it) and to the
    embedder's client (which reads events with it)::

        class Ping(msgspec.Struct, tag_field="type", tag="x_ping", omit_defaults=True, frozen=True):
            note: str = ""

        extension = ProtocolExtension(requests=[Ping], events=[Pong])
        extension.decode_request(b'{"type":"x_ping"}')  # Ping(note='')
    """

    __slots__ = ("_event_decoder", "_event_types", "_request_decoder", "_request_types", "events", "requests")

    def __init__(
        self, *, requests: Iterable[type[msgspec.Struct]] = (), events: Iterable[type[msgspec.Struct]] = ()
    ) -> None:
        self.requests: tuple[type[msgspec.Struct], ...] = tuple(requests)
        """The added request types."""
        self.events: tuple[type[msgspec.Struct], ...] = tuple(events)
        """The added event types."""
        taken: set[str] = set()
        for kind in (*self.requests, *self.events):
            taken.add(_check_extension_type(kind, taken))
        request_types = (*_BUILT_IN_REQUESTS, *self.requests)
        event_types = (*_BUILT_IN_EVENTS, *self.events)
        self._request_decoder = msgspec.json.Decoder(Union[request_types])  # noqa: UP007
        self._event_decoder = msgspec.json.Decoder(Union[event_types])  # noqa: UP007
        self._request_types = frozenset(_tag(kind) for kind in request_types)
        self._event_types = frozenset(_tag(kind) for kind in event_types)

    def decode_request(self, line: bytes | str) -> Request | msgspec.Struct | UnreadableRequest:
        """Read one request line, of a built-in or an added type. Never raises: an unreadable line becomes an
        :class:`UnreadableRequest`, whose message quotes at most a few hundred characters of the line."""
        try:
            return cast("Request | msgspec.Struct", self._request_decoder.decode(line))
        except msgspec.DecodeError as exc:
            return UnreadableRequest(
                _explain(exc, _loads(line), self._request_types, "request"), _as_bytes(line)
            )
        except RecursionError:
            return UnreadableRequest(TOO_DEEP, _as_bytes(line))

    def decode_event(self, line: bytes | str) -> Event | msgspec.Struct | UnknownEvent:
        """Read one event line, of a built-in or an added type; any other ``type`` gives an
        :class:`UnknownEvent`. Raises :class:`ProtocolError` as :func:`decode_event` does."""
        try:
            return cast("Event | msgspec.Struct", self._event_decoder.decode(line))
        except msgspec.DecodeError as exc:
            value = _loads(line)
            raw = _as_object(value)
            kind = raw.get("type") if raw is not None else None
            if raw is not None and isinstance(kind, str) and kind not in self._event_types:
                if nested_too_deep(raw):
                    raise ProtocolError(f"unknown event type {excerpt(repr(kind))}: {TOO_DEEP}") from None
                return UnknownEvent(kind, raw)
            raise ProtocolError(_explain(exc, value, self._event_types, "event")) from None
        except RecursionError:
            raise ProtocolError(TOO_DEEP) from None


def _check_extension_type(kind: object, taken: set[str]) -> str:
    """The wire ``type`` of an added type, once it is known to be one that can be added."""
    if not (isinstance(kind, type) and issubclass(kind, msgspec.Struct)):
        raise ExtensionClash(f"{kind!r} is not a msgspec.Struct class")
    config = kind.__struct_config__
    name = kind.__qualname__
    if config.tag_field != "type" or not isinstance(config.tag, str):
        raise ExtensionClash(f"{name} must be declared with tag_field='type' and a tag naming its wire type")
    if not config.omit_defaults:
        raise ExtensionClash(f"{name} must be declared with omit_defaults=True (unset fields are left out)")
    if config.tag in _BUILT_IN_TYPES:
        raise ExtensionClash(
            f"{name}: the type {config.tag!r} is a built-in protocol type; choose another name"
        )
    if config.tag in taken:
        raise ExtensionClash(f"{name}: the type {config.tag!r} is added twice")
    return config.tag


_BUILT_IN: Final = ProtocolExtension()


def encode(message: Event | Request | UnknownEvent | msgspec.Struct) -> bytes:
    """The canonical line for ``message``, including its trailing ``\\n``.

    Every runner writes exactly these bytes, and the SSE ``data:`` payload is this line without the newline.
    An :class:`UnknownEvent` is written back as it was read; a type of a :class:`ProtocolExtension` like a
    built-in one. Text that is not valid Unicode (a lone surrogate, as Python makes of a file name that is not
    UTF-8) is written with U+FFFD in its place instead of failing.
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
    return cast("Request | UnreadableRequest", _BUILT_IN.decode_request(line))


def decode_event(line: bytes | str) -> Event | UnknownEvent:
    """Read one event line; an unknown ``type`` gives an :class:`UnknownEvent`.

    Raises :class:`ProtocolError` for malformed JSON, a value that is not an object with a string ``type``, a
    known type whose fields are invalid, or free-form values nested deeper than
    :data:`~hive_protocol.MAX_NESTING_DEPTH`.
    """
    return cast("Event | UnknownEvent", _BUILT_IN.decode_event(line))


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
