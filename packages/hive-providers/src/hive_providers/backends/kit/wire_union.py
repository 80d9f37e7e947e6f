"""Decoding a CLI's JSON messages into typed values once, at the edge: a tagged union that tolerates what a newer
CLI adds.

A CLI's wire names each message's kind in one field (``type``, ``subtype``, ``method``). :class:`WireUnion` reads
an already parsed JSON object into the frozen msgspec struct tagged with that kind: extra fields are ignored, a
missing or ``null`` field takes its default. What it cannot read (a kind it does not know, an object whose known
kind has fields of the wrong type, a value that is no object at all) becomes an :class:`Unknown` that keeps the
object whole, so a handler skips or reports it exactly as it would an unknown kind: a newer CLI never breaks a
turn.

A struct joins a union by its ``tag`` (``class TextDelta(msgspec.Struct, frozen=True, tag="text_delta",
tag_field="type")``): the tag is what the wire spells, the tag field where it spells it.

A kind streamed many times a turn (a text delta) is typed all the way down, so it decodes in one
:func:`msgspec.convert` instead of one per level: its nested union (the API event of Claude Code's
``stream_event``) is a field of the struct, and ``optional`` names it: a message whose nested value does not fit
(a nested kind hive does not read, or fields of the wrong type) still decodes, with that field absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Generic, Self, TypeVar, cast, get_args

import msgspec

__all__ = ["Unknown", "WireUnion"]

T = TypeVar("T", bound=msgspec.Struct)

_NO_OBJECT: Final[Mapping[str, object]] = {}


class Unknown(msgspec.Struct, frozen=True):
    """A message this version does not read: its kind is unknown, or its fields are not the wire's types."""

    kind: str | None
    """The message's kind as the wire spells it (``None`` when it has none, or it is not a string)."""
    raw: Mapping[str, object]
    """The whole object as it was read (empty when the value was not an object)."""
    problem: str | None = None
    """Why a message of a known kind could not be read (``None`` for an unknown kind)."""


class WireUnion(Generic[T]):
    """The tagged structs of one wire field, and the decoding of one JSON object into one of them."""

    def __init__(self, tag_field: str, *variants: type[T], optional: Mapping[str, str] | None = None) -> None:
        self.tag_field: Final = tag_field
        """The field that names a message's kind."""
        self._variants: Final[dict[object, type[T]]] = {}
        for variant in variants:
            config = variant.__struct_config__
            if config.tag_field != tag_field or not isinstance(config.tag, str):
                raise ValueError(f"{variant.__name__} is not tagged by {tag_field!r}")
            self._variants[config.tag] = variant
        self._optional: Final[Mapping[str, str]] = optional or {}
        """The field, by kind, that reads as absent when the message does not fit with it."""

    @classmethod
    def of(cls, tag_field: str, union: object, *, optional: Mapping[str, str] | None = None) -> Self:
        """The union of the structs ``union`` (a type alias of tagged structs, ``A | B``) names: written
        ``WireUnion[Event].of("type", Event)``, so it decodes to ``Event`` (``optional`` as the constructor's)."""
        return cls(tag_field, *get_args(union), optional=optional)

    @property
    def kinds(self) -> frozenset[str]:
        """Every kind this union reads."""
        return frozenset(cast("dict[str, type[T]]", self._variants))

    def decode(self, value: object) -> T | Unknown:
        """The struct ``value`` (a parsed JSON object) is, or an :class:`Unknown` for what cannot be read."""
        # A parsed JSON object is a dict: checked first, as the ABC's own check is slow (a streamed delta pays it).
        raw = cast("Mapping[str, object]", value) if isinstance(value, dict | Mapping) else _NO_OBJECT
        kind = raw.get(self.tag_field)
        variant = self._variants.get(kind) if isinstance(kind, str) else None
        if variant is None:
            return Unknown(kind if isinstance(kind, str) else None, raw)
        try:
            return msgspec.convert(raw, variant)
        except msgspec.ValidationError as exc:
            problem = str(exc)
        kind = cast("str", kind)
        optional = self._optional.get(kind)
        if optional is not None and raw.get(optional) is not None:
            try:
                return msgspec.convert({**raw, optional: None}, variant)
            except msgspec.ValidationError:
                pass
        return Unknown(kind, raw, problem=problem)
