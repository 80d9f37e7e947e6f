"""Checking and converting single values against their field's spec."""

from __future__ import annotations

import math
import re
from typing import Final

from .errors import ConfigError
from .schema import FieldSpec

__all__ = ["describe", "infer_value", "number_problem", "parse_bool", "parse_for_field"]

_INT: Final = re.compile(r"[+-]?\d+")
_FLOAT: Final = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


def parse_bool(text: str) -> bool | None:
    """``true`` or ``false`` in any case (surrounding spaces ignored); ``None`` for anything else."""
    lowered = text.strip().lower()
    return True if lowered == "true" else False if lowered == "false" else None


def infer_value(text: str) -> bool | int | float | str:
    """A value typed on the command line for a key of no known type: a boolean, else a whole number, else a
    number, else the text."""
    as_bool = parse_bool(text)
    if as_bool is not None:
        return as_bool
    if _INT.fullmatch(text.strip()):
        return int(text)
    if _FLOAT.fullmatch(text.strip()):
        return float(text)
    return text


def describe(value: object) -> str:
    """A value's type in words, for messages."""
    if isinstance(value, bool):
        return f"the boolean {'true' if value else 'false'}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def number_problem(spec: FieldSpec, value: float) -> str | None:
    """Why a number does not fit ``spec`` (not finite, negative, zero where it must be positive, or above its
    maximum), else ``None``."""
    if not math.isfinite(value):
        return "must be a finite number"
    if value < 0:
        return "must not be negative"
    if spec.positive and value == 0:
        return "must be greater than zero"
    if spec.maximum is not None and value > spec.maximum:
        return f"must be at most {spec.maximum:g}"
    return None


def parse_for_field(text: str, spec: FieldSpec, key: str) -> object:
    """A value typed on the command line, converted to ``spec``'s type; raises :class:`ConfigError` when it
    does not fit. A list is written comma-separated (``a, b``; empty for no items)."""
    value: object
    match spec.kind:
        case "str":
            if text and spec.choices and text not in spec.choices:
                raise ConfigError(f"'{key}' must be one of {', '.join(spec.choices)}, not {text!r}", key=key)
            return text
        case "bool":
            value = parse_bool(text)
            if value is None:
                raise ConfigError(f"'{key}' must be true or false, not {text!r}", key=key)
            return value
        case "int":
            if not _INT.fullmatch(text.strip()):
                raise ConfigError(f"'{key}' must be a whole number, not {text!r}", key=key)
            value = int(text)
        case "number":
            stripped = text.strip()
            if _INT.fullmatch(stripped):
                value = int(stripped)
            elif _FLOAT.fullmatch(stripped):
                value = float(stripped)
            else:
                raise ConfigError(f"'{key}' must be a number, not {text!r}", key=key)
        case "str_list":
            return [item.strip() for item in text.split(",") if item.strip()]
        case "mapping_list":
            raise ConfigError(
                f"'{key}' is a list of mappings; edit the configuration file to change it", key=key
            )
    problem = number_problem(spec, value)
    if problem is not None:
        raise ConfigError(f"'{key}' {problem}, not {text!r}", key=key)
    return value
