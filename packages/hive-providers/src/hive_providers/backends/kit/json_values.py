"""Tolerant reading of the JSON values a CLI sends: the wrong type reads as empty (or ``None``), never raises.

The ``cast`` calls here follow an ``isinstance`` check: a decoded JSON object has string keys, and what its
values are is for the caller to read with these same helpers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import cast

__all__ = ["as_array", "as_count", "as_list", "as_mapping", "as_object", "as_texts"]


def as_object(value: object) -> dict[str, Any] | None:
    """``value`` itself when it is a JSON object, else ``None``."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def as_array(value: object) -> list[Any] | None:
    """``value`` itself when it is a JSON array, else ``None``."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def as_mapping(value: object) -> dict[str, Any]:
    """A copy of ``value`` when it is a JSON object, else an empty one."""
    return dict(cast("Mapping[str, Any]", value)) if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[Any]:
    """A copy of ``value`` when it is a JSON array, else an empty one."""
    return list(cast("list[Any]", value)) if isinstance(value, list) else []


def as_texts(value: object) -> list[str] | None:
    """A copy of ``value`` when it is a non-empty JSON array of strings only, else ``None``."""
    items = as_list(value)
    return items if items and all(isinstance(part, str) for part in items) else None


def as_count(value: object) -> int | None:
    """``value`` when it is a non-negative integer (a boolean is not), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
