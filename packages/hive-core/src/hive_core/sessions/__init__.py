"""Sessions: every turn recorded as it happens, so a conversation can be listed, resumed, forked and deleted.

A :class:`SessionStore` keeps a row per session and an append-only log of entries per session;
:class:`SqliteSessionStore` is hive's, one SQLite database (WAL) at the path it is given (the CLI's is
``<hive home>/sessions.db``), shared safely by concurrent ``hive`` processes, of which one at a time serves a session (its
:meth:`~SqliteSessionStore.lease`); :class:`~hive_core.sessions.postgres.PostgresSessionStore` (the ``postgresql``
extra, imported from its module only) keeps the same in a PostgreSQL database shared across machines. Both are a
:class:`SharedSessionStore`. :class:`TranscriptRecorder` records an :class:`~hive_core.AgentSession`'s turns
into it; :meth:`SessionStore.restore` rebuilds the conversation exactly (thinking signatures, raw and parsed
tool arguments, results with their errors and refusals), closing a turn a crash cut short;
:class:`DurableHitlBridge` and :class:`SuspendedTurn` let an approval wait survive a crash and be asked again.
:class:`BackendRecorder` records the turns a coding-agent CLI runs, with the CLI's own session id
(``backend_session``, read back by :func:`last_backend_session`) that resuming the hive session resumes.
:mod:`~hive_core.sessions.checkpoints` keeps each file's state before a turn changed it through hive's file tools
(the pipeline step :class:`~hive_core.sessions.checkpoint_keeper.CheckpointKeeper`), for undoing turns.
Both recorders also write the execution log (model requests, tool calls, fallbacks, compactions), which
:func:`execution_log` reads back with the turns' starts and ends.
"""

from .backend_recorder import BackendRecorder
from .durable import RESUMED_NOTE
from .durable import DurableHitlBridge
from .durable import SuspendedTurn
from .execution import LogReader
from .execution import execution_log
from .ids import MAX_SESSION_ID_LENGTH
from .ids import InvalidSessionId
from .ids import validate_session_id
from .kept_grants import keep_grants
from .lease import LEASE_EXPIRY
from .lease import LeaseHolder
from .lease import SessionLease
from .recorder import TranscriptRecorder
from .recorder import TurnLog
from .records import ENTRY_KINDS
from .records import TITLE_CHARS
from .records import ApprovalClosed
from .records import ApprovalOutcome
from .records import ApprovalWait
from .records import BackendSession
from .records import Entry
from .records import EntryKind
from .records import EntryPayload
from .records import PendingApproval
from .records import PermissionGrants
from .records import SessionExists
from .records import SessionInfo
from .records import SessionInUse
from .records import SessionNotFound
from .records import SessionStatus
from .records import SessionStoreError
from .records import TurnResume
from .records import UnsupportedSchema
from .records import cut_title
from .records import decode_payload
from .records import entry_kind
from .records import last_backend_session
from .records import last_grants
from .replay import ABANDONED_APPROVAL_TEXT
from .replay import INTERRUPTED_NOTE
from .replay import NOT_FINISHED_TEXT
from .replay import LastTurn
from .replay import Replay
from .replay import Suspension
from .replay import replay
from .sqlite import DEFAULT_BUSY_TIMEOUT
from .sqlite import SCHEMA_VERSION
from .sqlite import SqliteSessionStore
from .store import SessionStore
from .store import SharedSessionStore
from .store_url import is_postgres_url

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
    "LogReader",
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
    "SharedSessionStore",
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
    "execution_log",
    "is_postgres_url",
    "keep_grants",
    "last_backend_session",
    "last_grants",
    "replay",
    "validate_session_id",
]
