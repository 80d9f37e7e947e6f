"""Limits on what a reader accepts, so that no input can crash it or make it echo a flood.

Two limits: how deeply a free-form value may nest (:data:`MAX_NESTING_DEPTH`), and how much of a bad input an
error message may quote (:data:`MAX_QUOTED_CHARS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from typing import cast

__all__ = ["MAX_NESTING_DEPTH", "MAX_QUOTED_CHARS", "excerpt", "nested_too_deep"]

MAX_NESTING_DEPTH: Final = 64
"""How deeply arrays and objects may nest in a free-form value, the value itself being level 1.

Free-form values are the ones the protocol does not type: a tool call's arguments (from the model, in
``tool_start.input`` and ``hitl_request.arguments``), ``hitl_response.modified_arguments`` and an unknown event. A
deeper value makes its line unreadable and a model's tool call a refusal. Real tool arguments nest a handful of
levels; 64 leaves room for any of them while keeping every recursive walker downstream (hive's own, an SDK's, a
tool's ``json.dumps``) a few hundred frames deep at most, well inside Python's default limit of 1,000 frames even
on top of a deep async stack. The typed parts of a line cannot nest deeper than their types allow, and a field the
reader ignores is only refused when it is too deep to be skipped at all.
"""

MAX_QUOTED_CHARS: Final = 200
"""How many characters of a bad input an error message quotes at most."""

TOO_DEEP: Final = f"arrays and objects nested deeper than {MAX_NESTING_DEPTH} levels"
"""The reason given for a value over :data:`MAX_NESTING_DEPTH` (or too deep for the decoder's stack)."""


_CONTAINERS: Final = (dict, list)


def nested_too_deep(value: object, limit: int = MAX_NESTING_DEPTH) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels deep in ``value`` (a decoded JSON value).

    A scalar is level 0, ``[]`` and ``{}`` level 1. The walk stops at the first level over the limit, so its cost is
    bounded by the size of the value, never by its depth.
    """
    kind = type(value)
    if kind is dict:
        children: Iterable[object] = cast("dict[object, object]", value).values()
    elif kind is list:
        children = cast("list[object]", value)
    else:
        return False
    if limit < 1:
        return True
    return any(type(child) in _CONTAINERS and nested_too_deep(child, limit - 1) for child in children)


def excerpt(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked with ``…`` and the full length."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters)"
