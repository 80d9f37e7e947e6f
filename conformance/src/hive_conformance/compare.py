"""Comparing a runner's event lines with a scenario's expected bytes.

Lines are compared as bytes. Before that, the values of a few named fields may be taken from the expected line
into the actual one (so they cannot differ): :data:`MEASURED_FIELDS` for every runner, and, for a runner that is
not hive, :data:`RUNNER_CHOSEN_FIELDS` plus the scenario's own ``varies``. A field is only ever taken over when
both lines are events of the same type that both carry it: presence and every other byte still count.
"""

from __future__ import annotations

import difflib
import zlib
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any
from typing import Final
from typing import cast

import msgspec

__all__ = ["MEASURED_FIELDS", "RUNNER_CHOSEN_FIELDS", "diff_lines", "mask_line", "same_lines"]

MEASURED_FIELDS: Final = frozenset({"turn_end.duration_ms"})
"""Measurements, not protocol output: any non-negative integer matches for every runner."""

RUNNER_CHOSEN_FIELDS: Final = frozenset({"session_started.session_id", "hitl_request.id"})
"""Ids a runner that is not hive may choose its own way (hive derives them: the session id it is given and
``hitl-<call id>``)."""

_EXCERPT = 240


def mask_line(actual: bytes, expected: bytes, fields: Iterable[str]) -> bytes:
    """``actual`` with the values of ``fields`` (``<type>.<field>``) copied from ``expected``.

    Returns ``actual`` unchanged unless both lines are JSON objects of the same ``type`` that share one of the
    fields; otherwise the line is re-encoded with that field replaced, keeping key order. A measured field is
    only copied when the actual value is a non-negative integer.
    """
    wanted = [name.partition(".") for name in fields]
    if not wanted or b"{" not in actual[:1]:
        return actual
    try:
        got: Any = msgspec.json.decode(actual)
        want: Any = msgspec.json.decode(expected)
    except (msgspec.DecodeError, RecursionError):
        return actual
    if not isinstance(got, dict) or not isinstance(want, dict):
        return actual
    got_map, want_map = cast("dict[str, Any]", got), cast("dict[str, Any]", want)
    kind = got_map.get("type")
    if kind != want_map.get("type"):
        return actual
    changed = False
    for event_type, _, field in wanted:
        if event_type != kind or field not in got_map or field not in want_map:
            continue
        if f"{event_type}.{field}" in MEASURED_FIELDS and not _count(got_map[field]):
            continue
        if got_map[field] != want_map[field]:
            got_map[field] = want_map[field]
            changed = True
    return msgspec.json.encode(got_map) + b"\n" if changed else actual


def same_lines(
    actual: Sequence[bytes], expected: Sequence[bytes], fields: Iterable[str]
) -> tuple[bool, list[bytes]]:
    """Whether the lines match once ``fields`` are masked; also returns the masked actual lines."""
    names = list(fields)
    masked = [
        mask_line(line, expected[index], names) if index < len(expected) else line
        for index, line in enumerate(actual)
    ]
    return list(expected) == masked, masked


def diff_lines(actual: Sequence[bytes], expected: Sequence[bytes], *, context: int = 2) -> str:
    """A unified diff, expected → actual, one event per line, long lines cut (with their size)."""
    return "".join(
        line if line.endswith("\n") else line + "\n"
        for line in difflib.unified_diff(
            [_show(line) for line in expected],
            [_show(line) for line in actual],
            fromfile="expected",
            tofile="actual",
            n=context,
            lineterm="",
        )
    )


def _show(line: bytes) -> str:
    text = line.removesuffix(b"\n").decode("utf-8", "backslashreplace")
    ending = "" if line.endswith(b"\n") else "  (no newline)"
    if len(text) > _EXCERPT:
        digest = f"{zlib.crc32(line):08x}"
        text = f"{text[:_EXCERPT]}… ({len(line)} bytes, #{digest})"
    return text + ending


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
