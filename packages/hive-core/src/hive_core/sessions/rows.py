"""What every session store makes of its rows: sessions, entries and lease holders, and each session's summary.

Shared by :mod:`~hive_core.sessions.sqlite` and :mod:`~hive_core.sessions.postgres`, so that both stores decode
their rows, and title and count a session's messages, the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import msgspec

from hive_core.messages import Message
from hive_core.turn_request import TurnRequest

from .lease import LeaseHolder
from .records import Entry
from .records import EntryPayload
from .records import SessionInfo
from .records import cut_title
from .records import decode_payload

__all__ = [
    "HOLDER_FIELDS",
    "INFO_FIELDS",
    "DamagedRow",
    "counts_as_message",
    "entry_from_row",
    "holder_from_row",
    "info_from_row",
    "project_key",
    "summarise",
    "title_of",
]

INFO_FIELDS: Final = (
    "id",
    "project_path",
    "created",
    "updated",
    "model",
    "provider",
    "status",
    "forked_from",
    "first_message",
    "message_count",
)
"""The columns of a session's row, in the order :func:`info_from_row` reads them."""

HOLDER_FIELDS: Final = ("pid", "host", "machine", "started", "since", "renewed")
"""The columns of a lease's holder, in the order :func:`holder_from_row` reads them."""


class DamagedRow(Exception):
    """A row is not what hive wrote (the message says what)."""


def project_key(path: str | os.PathLike[str]) -> str:
    """How a project's path is stored and looked up: absolute, ``~`` expanded, links resolved."""
    return str(Path(path).expanduser().resolve())


def info_from_row(row: Iterable[object]) -> SessionInfo:
    """A session's row (its :data:`INFO_FIELDS`) as a :class:`SessionInfo`."""
    return msgspec.convert(dict(zip(INFO_FIELDS, row, strict=True)), SessionInfo)


def holder_from_row(row: Iterable[object]) -> LeaseHolder:
    """A lease's row (its :data:`HOLDER_FIELDS`) as a :class:`LeaseHolder`."""
    return msgspec.convert(dict(zip(HOLDER_FIELDS, row, strict=True)), LeaseHolder)


def entry_from_row(seq: object, ts: object, kind: object, data: object) -> Entry:
    """An entry's row as an :class:`Entry`; :class:`DamagedRow` when its values are of the wrong types."""
    if not (
        isinstance(seq, int)
        and isinstance(ts, int | float)
        and isinstance(kind, str)
        and isinstance(data, str)
    ):
        raise DamagedRow(f"an entry's row holds values of the wrong types ({seq!r}, {ts!r}, {kind!r})")
    return Entry(seq, float(ts), kind, decode_payload(kind, data))


def counts_as_message(payload: EntryPayload) -> bool:
    """Whether the entry counts in a session's ``message_count`` (a user's or the assistant's message)."""
    return isinstance(payload, Message) and payload.role in ("user", "assistant")


def title_of(payload: EntryPayload) -> str | None:
    """The session title an entry gives, when it is the first to give one: what the user wrote."""
    if isinstance(payload, TurnRequest):
        text = payload.content
    elif isinstance(payload, Message) and payload.role == "user":
        text = payload.text
    else:
        return None
    return cut_title(text.strip()) or None


def summarise(entries: Iterable[Entry]) -> tuple[int, str | None]:
    """A log's message count and title (what a fork's row starts with)."""
    count = 0
    first: str | None = None
    for entry in entries:
        payload = entry.payload
        if payload is None:
            continue
        if counts_as_message(payload):
            count += 1
        if first is None:
            first = title_of(payload)
    return count, first
