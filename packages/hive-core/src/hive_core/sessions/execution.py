"""Reading a session's execution log out of its entries, and timing the tool calls a coding-agent CLI reports.

The measured records (``model_request``, ``tool``, ``fallback``, ``compaction``) are entries of their own; the
turn's start and end are the ``turn_start`` and ``turn_end`` entries the recorders write anyway, with an
``error`` entry folded into the ``turn_end`` after it. :func:`execution_log` (or a :class:`LogReader`, for a log
read in pieces) turns the entries into :data:`~hive_core.execution_log.LogRecord` values in log order.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from collections.abc import Iterator

from hive_core.execution_log import CompactionRecord
from hive_core.execution_log import FallbackRecord
from hive_core.execution_log import LogRecord
from hive_core.execution_log import ModelRequestRecord
from hive_core.execution_log import ToolOutcomeKind
from hive_core.execution_log import ToolRecord
from hive_core.execution_log import TurnEndRecord
from hive_core.execution_log import TurnStartRecord
from hive_core.turn_request import TurnRequest
from hive_protocol import ErrorEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

from .records import Entry

__all__ = ["LogReader", "ToolTimer", "execution_log"]

_MEASURED = (ModelRequestRecord, ToolRecord, FallbackRecord, CompactionRecord)


def execution_log(entries: Iterable[Entry]) -> Iterator[LogRecord]:
    """The execution log in a session's ``entries``, in order."""
    return LogReader().read(entries)


class LogReader:
    """Reads the execution log out of a session's entries given in pieces (as a follower reads them): an ``error``
    read in one piece still reaches the ``turn_end`` of the next."""

    __slots__ = ("_error",)

    def __init__(self) -> None:
        self._error: str | None = None

    def read(self, entries: Iterable[Entry]) -> Iterator[LogRecord]:
        """The records among ``entries``, the log's next piece."""
        for entry in entries:
            payload = entry.payload
            if isinstance(payload, _MEASURED):
                yield payload
            elif isinstance(payload, TurnRequest):
                self._error = None
                yield TurnStartRecord(time=entry.ts)
            elif isinstance(payload, ErrorEvent):
                self._error = payload.message
            elif isinstance(payload, TurnEndEvent):
                yield TurnEndRecord(
                    time=entry.ts,
                    stop_reason=payload.stop_reason,
                    duration_ms=payload.duration_ms,
                    input_tokens=payload.input_tokens,
                    output_tokens=payload.output_tokens,
                    error=self._error,
                )
                self._error = None


class ToolTimer:
    """Times the calls a turn's events report (``tool_start`` to ``tool_end``): how a session run by a
    coding-agent CLI, whose tools hive does not run, gets its ``tool`` records."""

    __slots__ = ("_started",)

    def __init__(self) -> None:
        self._started: dict[str, float] = {}

    def started(self, event: ToolStartEvent) -> None:
        """Note when a call started."""
        self._started[event.call_id] = time.perf_counter()

    def ended(self, event: ToolEndEvent) -> ToolRecord:
        """The record of a call that ended (its duration 0 when its start was not seen)."""
        now = time.perf_counter()
        begun = self._started.pop(event.call_id, now)
        outcome: ToolOutcomeKind = (
            event.refusal if event.refusal is not None else "ok" if event.success else "error"
        )
        return ToolRecord(
            time=time.time(),
            name=event.tool,
            call_id=event.call_id,
            duration_ms=int((now - begun) * 1000),
            outcome=outcome,
        )
