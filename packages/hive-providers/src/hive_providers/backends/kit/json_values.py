"""Tolerant reading of the JSON values a CLI sends: the wrong type reads as empty (or ``None``), never raises."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["as_count", "as_list", "as_mapping"]


def as_mapping(value: object) -> dict[str, Any]:
    """A copy of ``value`` when it is a JSON object, else an empty one."""
    return dict(value) if isinstance(value, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]


def as_list(value: object) -> list[Any]:
    """A copy of ``value`` when it is a JSON array, else an empty one."""
    return list(value) if isinstance(value, list) else []  # pyright: ignore[reportUnknownArgumentType]


def as_count(value: object) -> int | None:
    """``value`` when it is a non-negative integer (a boolean is not), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
