"""The shapes a one-shot prints, shared by the tests of ``hive -p`` and ``hive run`` (one implementation,
:mod:`hive_cli.one_shot`, one vocabulary: the README's table of machine outputs)."""

from __future__ import annotations

from typing import Final

START_KEYS: Final = frozenset({"type", "session_id"})
"""The first ``-o jsonl`` record of a turn whose session opened."""

TURN_KEYS: Final = frozenset(
    {
        "session_id",
        "content",
        "stop_reason",
        "exit_code",
        "duration_ms",
        "tool_calls",
        "refused_tool_calls",
        "failed_tool_calls",
        "calls",
        "thinking",
        "usage",
        "cost_usd",
        "cost",
    }
)
"""Every ``-o json`` turn document has these (``hive -p`` and ``hive run`` alike)."""

FAILURE_KEYS: Final = TURN_KEYS | {"error"}
"""A turn that failed, timed out or was cancelled: the same document, with what it had so far, and ``error``."""

ERROR_RECORD_KEYS: Final = frozenset({"type", "error", "stop_reason", "exit_code"})
"""The last ``-o jsonl`` record of a turn that failed, timed out or was cancelled."""
