"""Decoding a CLI's JSON messages, once, into frozen msgspec structs, as tolerantly as the CLIs need.

A CLI's wire is not hive's: a newer version adds message kinds and fields, an older one leaves fields out or sends
``null``, and now and then a field has a type its schema does not give it. :func:`decode` turns one JSON value
(already parsed) into a :class:`WireStruct`: what fits is kept, extra fields are ignored, a missing or ``null``
field takes its default, and a field of the wrong type takes its default too instead of failing the whole
message (an element of the wrong type is dropped from a list). :func:`decode_tagged` picks the struct of a tagged
union by its tag (the struct's msgspec ``tag``) and gives the caller's *unknown* value for a tag it does not know,
so a message kind a newer CLI adds is skipped, never an error.

The fast path is one :func:`msgspec.convert`; only a message that does not fit is taken apart field by field.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, cast

import msgspec

__all__ = ["WireStruct", "decode", "decode_tagged", "tags_of"]

S = TypeVar("S", bound="WireStruct")
U = TypeVar("U")


class WireStruct(msgspec.Struct, frozen=True, kw_only=True):
    """A message (or part of one) of a CLI's wire: frozen, every field optional (give each a default)."""


class _Missing:
    """No value could be decoded (the field keeps its default)."""


_MISSING: Final = _Missing()


def decode(value: object, cls: type[S]) -> S:
    """``value`` as a ``cls``: the fields that fit, the defaults for the rest (a value that is not a JSON object
    decodes to the defaults)."""
    try:
        return msgspec.convert(value, cls)
    except msgspec.ValidationError:
        pass
    fields: dict[str, Any] = {}
    if isinstance(value, Mapping):
        raw = cast("Mapping[str, object]", value)
        for field in msgspec.structs.fields(cls):
            if field.encode_name in raw:
                decoded = _value(raw[field.encode_name], field.type)
                if not isinstance(decoded, _Missing):
                    fields[field.name] = decoded
    return cls(**fields)


def decode_tagged(
    value: object, tag_field: str, variants: Mapping[str, type[S]], unknown: Callable[[str | None], U]
) -> S | U:
    """The variant of a tagged union ``value`` is (by its ``tag_field``), decoded with :func:`decode`; for a tag
    not in ``variants`` (or none), ``unknown(tag)``."""
    message: object = value
    tag = cast("Mapping[str, object]", message).get(tag_field) if isinstance(message, Mapping) else None
    kind = tag if isinstance(tag, str) else None
    cls = variants.get(kind) if kind is not None else None
    return unknown(kind) if cls is None else decode(value, cls)


def tags_of(*classes: type[S]) -> dict[str, type[S]]:
    """The variants of a tagged union by their msgspec ``tag`` (for :func:`decode_tagged`)."""
    variants: dict[str, type[S]] = {}
    for cls in classes:
        tag = cls.__struct_config__.tag
        if not isinstance(tag, str):
            raise TypeError(f"{cls.__name__} has no string tag")
        variants[tag] = cls
    return variants


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
    if isinstance(kind, type) and issubclass(kind, WireStruct):
        return decode(value, kind) if _is_object(value) else _MISSING
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


def _is_object(value: object) -> bool:
    return isinstance(value, Mapping)
