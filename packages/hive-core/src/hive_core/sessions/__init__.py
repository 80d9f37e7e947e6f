"""Sessions: every turn recorded as it happens, so a conversation can be listed, resumed, forked and deleted.

A :class:`SessionStore` keeps a row per session and an append-only log of entries per session;
:class:`SqliteSessionStore` is hive's, one SQLite database (WAL) at the path it is given (the CLI's is
``<hive home>/sessions.db``), shared safely by concurrent ``hive`` processes, of which one at a time serves a session (its
:meth:`~SqliteSessionStore.lease`). :class:`TranscriptRecorder` records an :class:`~hive_core.AgentSession`'s turns
into it; :meth:`SessionStore.restore` rebuilds the conversation exactly (thinking signatures, raw and parsed
tool arguments, results with their errors and refusals), closing a turn a crash cut short;
:class:`DurableHitlBridge` and :class:`SuspendedTurn` let an approval wait survive a crash and be asked again.
:class:`BackendRecorder` records the turns a coding-agent CLI runs, with the CLI's own session id
(``backend_session``, read back by :func:`last_backend_session`) that resuming the hive session resumes.
:mod:`~hive_core.sessions.checkpoints` keeps each file's state before a turn changed it through hive's file tools
(the pipeline step :class:`~hive_core.sessions.checkpoint_keeper.CheckpointKeeper`), for undoing turns.
"""

from .backend_recorder import BackendRecorder
from .durable import RESUMED_NOTE, DurableHitlBridge, SuspendedTurn
from .ids import MAX_SESSION_ID_LENGTH, InvalidSessionId, validate_session_id
from .kept_grants import keep_grants
from .lease import LEASE_EXPIRY, LeaseHolder, SessionLease
from .recorder import TranscriptRecorder, TurnLog
from .records import (
    ENTRY_KINDS,
    TITLE_CHARS,
    ApprovalClosed,
    ApprovalOutcome,
    ApprovalWait,
    BackendSession,
    Entry,
    EntryKind,
    EntryPayload,
    PendingApproval,
    PermissionGrants,
    SessionExists,
    SessionInfo,
    SessionInUse,
    SessionNotFound,
    SessionStatus,
    SessionStoreError,
    TurnResume,
    UnsupportedSchema,
    cut_title,
    decode_payload,
    entry_kind,
    last_backend_session,
    last_grants,
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
from .sqlite import DEFAULT_BUSY_TIMEOUT, SCHEMA_VERSION, SqliteSessionStore
from .store import SessionStore

__all__ = [
    "ABANDONED_APPROVAL_TEXT",
    "DEFAULT_BUSY_TIMEOUT",
    "ENTRY_KINDS",
    "INTERRUPTED_NOTE",
    "LEASE_EXPIRY",
    "MAX_SESSION_ID_LENGTH",
    "NOT_FINISHED_TEXT",
    "RESUMED_NOTE",
    "SCHEMA_VERSION",
    "TITLE_CHARS",
    "ApprovalClosed",
    "ApprovalOutcome",
    "ApprovalWait",
    "BackendRecorder",
    "BackendSession",
    "DurableHitlBridge",
    "Entry",
    "EntryKind",
    "EntryPayload",
    "InvalidSessionId",
    "LastTurn",
    "LeaseHolder",
    "PendingApproval",
    "PermissionGrants",
    "Replay",
    "SessionExists",
    "SessionInUse",
    "SessionInfo",
    "SessionLease",
    "SessionNotFound",
    "SessionStatus",
    "SessionStore",
    "SessionStoreError",
    "SqliteSessionStore",
    "SuspendedTurn",
    "Suspension",
    "TranscriptRecorder",
    "TurnLog",
    "TurnResume",
    "UnsupportedSchema",
    "cut_title",
    "decode_payload",
    "entry_kind",
    "keep_grants",
    "last_backend_session",
    "last_grants",
    "replay",
    "validate_session_id",
]
