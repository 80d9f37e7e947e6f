"""Sessions: every turn recorded as it happens, so a conversation can be listed, resumed, forked and deleted.

A :class:`SessionStore` keeps a row per session and an append-only log of entries per session;
:class:`SqliteSessionStore` is hive's, one SQLite database (WAL) at ``<hive home>/sessions.db`` shared safely by
concurrent ``hive`` processes. :class:`TranscriptRecorder` records an :class:`~hive_core.AgentSession`'s turns
into it; :meth:`SessionStore.restore` rebuilds the conversation exactly (thinking signatures, raw and parsed
tool arguments, results with their errors and refusals), closing a turn a crash cut short;
:class:`DurableHitlBridge` and :class:`SuspendedTurn` let an approval wait survive a crash and be asked again.
"""

from .documents import (
    FIRST_MESSAGE_CHARS,
    CommandError,
    SessionDeleted,
    SessionSummary,
    encode_document,
    iso_time,
    session_summaries,
    summarise,
)
from .durable import RESUMED_NOTE, DurableHitlBridge, SuspendedTurn
from .ids import MAX_SESSION_ID_LENGTH, InvalidSessionId, new_session_id, validate_session_id
from .recorder import TranscriptRecorder, TurnLog
from .records import (
    ENTRY_KINDS,
    ApprovalClosed,
    ApprovalOutcome,
    ApprovalWait,
    Entry,
    EntryKind,
    EntryPayload,
    PendingApproval,
    SessionExists,
    SessionInfo,
    SessionNotFound,
    SessionStatus,
    TurnResume,
    UnsupportedSchema,
    decode_payload,
    entry_kind,
)
from .replay import (
    ABANDONED_APPROVAL_TEXT,
    INTERRUPTED_NOTE,
    NOT_FINISHED_TEXT,
    LastTurn,
    Replay,
    Suspension,
    replay,
)
from .sqlite import DEFAULT_BUSY_TIMEOUT, SCHEMA_VERSION, SqliteSessionStore, default_path, default_store
from .store import SessionStore

__all__ = [
    "ABANDONED_APPROVAL_TEXT",
    "DEFAULT_BUSY_TIMEOUT",
    "ENTRY_KINDS",
    "FIRST_MESSAGE_CHARS",
    "INTERRUPTED_NOTE",
    "MAX_SESSION_ID_LENGTH",
    "NOT_FINISHED_TEXT",
    "RESUMED_NOTE",
    "SCHEMA_VERSION",
    "ApprovalClosed",
    "ApprovalOutcome",
    "ApprovalWait",
    "CommandError",
    "DurableHitlBridge",
    "Entry",
    "EntryKind",
    "EntryPayload",
    "InvalidSessionId",
    "LastTurn",
    "PendingApproval",
    "Replay",
    "SessionDeleted",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "SessionStatus",
    "SessionStore",
    "SessionSummary",
    "SqliteSessionStore",
    "SuspendedTurn",
    "Suspension",
    "TranscriptRecorder",
    "TurnLog",
    "TurnResume",
    "UnsupportedSchema",
    "decode_payload",
    "default_path",
    "default_store",
    "encode_document",
    "entry_kind",
    "iso_time",
    "new_session_id",
    "replay",
    "session_summaries",
    "summarise",
    "validate_session_id",
]
