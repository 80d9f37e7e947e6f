"""The execution log as ``hive logs`` and ``hive serve`` show it: one JSON object a record, or one line of text.

JSON (``hive logs -o json``, ``GET /api/sessions/{id}/log``) is the record's fields as
:mod:`hive_core.execution_log` declares them, ``kind`` first, with ``time`` as ISO-8601 in UTC (as every machine
output of ``hive`` writes times); unset fields are left out.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from hive_core.execution_log import CompactionRecord
from hive_core.execution_log import FallbackRecord
from hive_core.execution_log import LogRecord
from hive_core.execution_log import ModelRequestRecord
from hive_core.execution_log import ToolRecord
from hive_core.execution_log import TurnEndRecord
from hive_core.execution_log import TurnStartRecord
from hive_core.execution_log import record_kind

from .session_documents import iso_time

__all__ = ["log_json", "log_text"]


def log_json(record: LogRecord) -> str:
    """The record as one line of JSON, without the newline."""
    fields: dict[str, Any] = msgspec.to_builtins(record)
    fields["time"] = iso_time(record.time)
    return msgspec.json.encode(fields).decode()


def log_text(record: LogRecord) -> str:
    """The record as one line for people: the local time, the kind, then what it measured."""
    moment = time.strftime("%H:%M:%S", time.localtime(record.time)) + f".{int(record.time % 1 * 1000):03d}"
    return f"{moment}  {record_kind(record):<13}  {_details(record)}".rstrip()


def _details(record: LogRecord) -> str:
    if isinstance(record, TurnStartRecord):
        return ""
    if isinstance(record, ModelRequestRecord):
        tokens = (
            f"  {record.input_tokens or 0} in / {record.output_tokens or 0} out"
            if record.input_tokens is not None or record.output_tokens is not None
            else ""
        )
        failed = f"  failed: {record.error}" if record.error else ""
        return f"{record.model or 'model'}  {record.duration_ms} ms  {_size(record.request_bytes)} sent{tokens}{failed}"
    if isinstance(record, ToolRecord):
        return f"{record.name}  {record.call_id}  {record.duration_ms} ms  {record.outcome}"
    if isinstance(record, FallbackRecord):
        return f"{record.step}  provider {record.provider_index + 1} ({record.category}, attempt {record.attempt}): {record.message}"
    if isinstance(record, CompactionRecord):
        return (
            f"{record.messages_before} → {record.messages_after} messages, "
            f"{record.tokens_before:,} → {record.tokens_after:,} tokens"
            + ("" if record.summarized else " (no summary)")
        )
    ended: TurnEndRecord = record
    parts = [ended.stop_reason or "ended"]
    if ended.duration_ms is not None:
        parts.append(f"{ended.duration_ms} ms")
    if ended.input_tokens is not None or ended.output_tokens is not None:
        parts.append(f"{ended.input_tokens or 0} in / {ended.output_tokens or 0} out")
    if ended.error:
        parts.append(f"error: {ended.error}")
    return "  ".join(parts)


def _size(count: int) -> str:
    return f"{count} B" if count < 1024 else f"{count / 1024:.1f} KiB"
