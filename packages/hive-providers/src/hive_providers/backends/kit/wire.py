"""Decoding a CLI's JSON messages into typed values once, at the edge, as tolerantly as the CLIs need.

A CLI's wire is not hive's: a newer version adds message kinds and fields, an older one leaves fields out or sends
``null``, and now and then a field has a type its schema does not give it. A message is read into a frozen msgspec
struct: extra fields are ignored, a missing or ``null`` field takes its default.

A wire names each message's kind in one field (``type``, ``subtype``, ``method``, ``sessionUpdate``).
:class:`WireUnion` reads an already parsed JSON object into the struct tagged with that kind (``class
TextDelta(msgspec.Struct, frozen=True, tag="text_delta", tag_field="type")``: the tag is what the wire spells, the
tag field where it spells it). A kind it does not know, or a value that is no object at all, is an
:class:`Unknown` that keeps the object whole, so a handler skips or reports it: a newer CLI never breaks a turn.

A known kind whose fields are not the wire's types is read by the union's policy:

- by default it is an :class:`Unknown` too (with the ``problem``), handled as an unknown kind; ``optional`` names,
  by kind, a nested field that reads as absent instead when it alone does not fit (the API event of Claude Code's
  ``stream_event``: a nested kind hive does not read);
- with ``salvage=True`` it is read field by field (:func:`decode`): a field of the wrong type takes its default,
  an element of the wrong type is dropped from a list.

The fast path, a message that fits (a streamed text delta, many a turn), is one dict lookup and one
:func:`msgspec.convert` to its struct; a kind streamed that often is typed all the way down so that it needs no
second one.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any
from typing import Final
from typing import Generic
from typing import Self
from typing import TypeVar
from typing import cast
from typing import final
from typing import get_args

import msgspec

__all__ = ["Unknown", "WireStruct", "WireUnion", "decode"]

T = TypeVar("T", bound=msgspec.Struct)
S = TypeVar("S", bound=msgspec.Struct)

_NO_OBJECT: Final[Mapping[str, object]] = {}


class WireStruct(msgspec.Struct, frozen=True, kw_only=True):
    """A message (or part of one) of a wire read by :func:`decode`: frozen, every field with a default."""


@final
class Unknown(msgspec.Struct, frozen=True):
    """A message this version does not read: its kind is unknown, or its fields are not the wire's types.

    Never subclassed, so a mapper's per-message check may be ``type(message) is Unknown``: ``isinstance`` against
    a msgspec struct class is several times slower when it fails (a streamed delta pays it)."""

    kind: str | None
    """The message's kind as the wire spells it (``None`` when it has none, or it is not a string)."""
    raw: Mapping[str, object]
    """The whole object as it was read (empty when the value was not an object)."""
    problem: str | None = None
    """Why a message of a known kind could not be read (``None`` for an unknown kind)."""


class WireUnion(Generic[T]):
    """The tagged structs of one wire field, and the decoding of one JSON object into one of them."""

    def __init__(
        self,
        tag_field: str,
        *variants: type[T],
        optional: Mapping[str, str] | None = None,
        salvage: bool = False,
    ) -> None:
        self.tag_field: Final = tag_field
        """The field that names a message's kind."""
        self._variants: Final[dict[str, type[T]]] = {}
        for variant in variants:
            config = variant.__struct_config__
            if config.tag_field != tag_field or not isinstance(config.tag, str):
                raise ValueError(f"{variant.__name__} is not tagged by {tag_field!r}")
            self._variants[config.tag] = variant
        self._optional: Final[Mapping[str, str]] = optional or {}
        """The field, by kind, that reads as absent when the message does not fit with it."""
        self.salvage: Final = salvage
        """Whether a known kind of the wrong types is read field by field (else it is an :class:`Unknown`)."""

    @classmethod
    def of(
        cls,
        tag_field: str,
        union: object,
        *,
        optional: Mapping[str, str] | None = None,
        salvage: bool = False,
    ) -> Self:
        """The union of the structs ``union`` (a type alias of tagged structs, ``A | B``) names: written
        ``WireUnion[Event].of("type", Event)``, so it decodes to ``Event`` (the options as the constructor's)."""
        return cls(tag_field, *get_args(union), optional=optional, salvage=salvage)

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind this union reads."""
        return frozenset(self._variants)

    def decode(self, value: object) -> T | Unknown:
        """The struct ``value`` (a parsed JSON object) is, or an :class:`Unknown` for what cannot be read."""
        # A parsed JSON object is a dict: `type(...) is` spares a streamed delta the Mapping ABC's slow check.
        if type(value) is not dict and not isinstance(value, Mapping):
            return Unknown(None, _NO_OBJECT)
        raw = cast("Mapping[str, object]", value)
        kind = raw.get(self.tag_field)
        variant = self._variants.get(kind) if isinstance(kind, str) else None
        if variant is None:
            return Unknown(kind if isinstance(kind, str) else None, raw)
        try:
            return msgspec.convert(raw, variant)
        except msgspec.ValidationError as exc:
            return self._misfit(raw, cast("str", kind), variant, str(exc))

    def _misfit(self, raw: Mapping[str, object], kind: str, variant: type[T], problem: str) -> T | Unknown:
        """A known kind whose fields are not the wire's types, read by this union's policy."""
        if self.salvage:
            return _salvaged(raw, variant)
        optional = self._optional.get(kind)
        if optional is not None and raw.get(optional) is not None:
            try:
                return msgspec.convert({**raw, optional: None}, variant)
            except msgspec.ValidationError:
                pass
        return Unknown(kind, raw, problem=problem)


# -- field-by-field salvage -------------------------------------------------------------------------------------


class _Missing:
    """No value could be decoded (the field keeps its default)."""


_MISSING: Final = _Missing()


def decode(value: object, cls: type[S]) -> S:
    """``value`` as a ``cls`` (every field with a default), salvaged: the fields that fit, the defaults for the
    rest (a value that is not a JSON object decodes to the defaults)."""
    try:
        return msgspec.convert(value, cls)
    except msgspec.ValidationError:
        return _salvaged(value, cls)


def _salvaged(value: object, cls: type[S]) -> S:
    """``value`` as a ``cls``, field by field (it does not fit as a whole)."""
    fields: dict[str, Any] = {}
    if isinstance(value, Mapping):
        raw = cast("Mapping[str, object]", value)
        for field in msgspec.structs.fields(cls):
            if field.encode_name in raw:
                decoded = _value(raw[field.encode_name], field.type)
                if not isinstance(decoded, _Missing):
                    fields[field.name] = decoded
    return cls(**fields)


def _value(value: object, kind: object) -> object:
    """``value`` as type ``kind``, or what of it can be saved, or :data:`_MISSING`."""
    try:
        return msgspec.convert(value, cast("type[object]", kind))
    except msgspec.ValidationError:
        return _salvage(value, kind)


def _salvage(value: object, kind: object) -> object:
    origin = typing.get_origin(kind)
    arguments = typing.get_args(kind)
    if origin is typing.Union or origin is types.UnionType:
        for argument in arguments:
            if argument is not type(None):
                saved = _salvage(value, argument)
                if not isinstance(saved, _Missing):
                    return saved
        return _MISSING
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        return decode(cast("object", value), kind) if isinstance(value, Mapping) else _MISSING
    if origin is list and isinstance(value, list):
        items = (_value(item, arguments[0]) for item in cast("list[object]", value))
        return [item for item in items if not isinstance(item, _Missing)]
    if origin is dict and isinstance(value, Mapping):
        entries = cast("Mapping[object, object]", value)
        saved_entries = {
            key: _value(item, arguments[1]) for key, item in entries.items() if isinstance(key, str)
        }
        return {key: item for key, item in saved_entries.items() if not isinstance(item, _Missing)}
    return _MISSING
