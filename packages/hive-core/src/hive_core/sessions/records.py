"""What a session store holds: a row per session and, per session, an append-only log of entries.

Each entry carries one typed payload, and the payload's type names the entry's kind:

- ``turn_start`` (:class:`~hive_core.turn_request.TurnRequest`): a turn starts, with the request as the
  client sent it and the working path beside it; written before the model is asked.
- ``message`` (:class:`~hive_core.messages.Message`): a message the turn added to the conversation, written as
  soon as the next event shows it (once per model round, once per tool round).
- ``tool_end`` (``ToolEndEvent``): a call's outcome as it is reported; what restore falls back on when the
  process died before the round's tool message was written.
- ``approval_wait`` (:class:`ApprovalWait`): a ``hitl_request``, written before it is sent.
- ``approval_closed`` (:class:`ApprovalClosed`): that request was answered, expired or cancelled.
- ``turn_resume`` (:class:`TurnResume`): a restarted process resumes a turn suspended on approval waits.
- ``turn_end`` (``TurnEndEvent``): the turn ended (cancelled and failed turns too).
- ``error`` (``ErrorEvent``): the turn failed, or its request was rejected.
- ``backend_session`` (:class:`BackendSession`): the session is served by a coding-agent CLI, which now works in
  a session of its own with that id; the last one is what ``-c`` and ``-r`` resume.
- ``permission_grants`` (:class:`PermissionGrants`): every rule "always" answers granted, after each change (a
  grant made or revoked); the last one is what ``-c``, ``-r`` and a restart restore.
- ``model_request``, ``tool``, ``fallback``, ``compaction``
  (:class:`~hive_core.execution_log.ModelRequestRecord`, :class:`~hive_core.execution_log.ToolRecord`,
  :class:`~hive_core.execution_log.FallbackRecord`, :class:`~hive_core.execution_log.CompactionRecord`): the
  execution log's measurements, written as each request, call, provider failure or compaction ends; with
  ``turn_start``, ``error`` and ``turn_end`` they make the log :func:`~hive_core.sessions.execution_log` reads.
- ``spending`` (:class:`~hive_core.spending.RequestSpend`): one model request's usage, written as it is counted;
  their sum is what a resumed session has spent against its ``budget``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar
from typing import Final
from typing import Literal
from typing import Unpack

import msgspec

from hive_core.approvals import Grant
from hive_core.errors import ErrorPosition
from hive_core.errors import UserError
from hive_core.execution_log import CompactionRecord
from hive_core.execution_log import FallbackRecord
from hive_core.execution_log import ModelRequestRecord
from hive_core.execution_log import ToolRecord
from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.spending import RequestSpend
from hive_core.turn_request import TurnRequest
from hive_protocol import ErrorEvent
from hive_protocol import HitlRequestEvent
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent

__all__ = [
    "ENTRY_KINDS",
    "TITLE_CHARS",
    "ApprovalClosed",
    "ApprovalOutcome",
    "ApprovalWait",
    "BackendSession",
    "Entry",
    "EntryKind",
    "EntryPayload",
    "PendingApproval",
    "PermissionGrants",
    "SessionExists",
    "SessionInUse",
    "SessionInfo",
    "SessionNotFound",
    "SessionStatus",
    "SessionStoreError",
    "TurnResume",
    "UnsupportedSchema",
    "cut_title",
    "decode_payload",
    "entry_kind",
    "last_backend_session",
    "last_grants",
]

TITLE_CHARS: Final = 100
"""The longest session title (the first thing the user wrote), ``...`` included when it was cut."""

SessionStatus = Literal["active", "ended", "error", "forked"]
"""A session's state: in use, ended by its user, ended by an error, or copied into a fork."""

EntryKind = Literal[
    "turn_start",
    "message",
    "tool_end",
    "approval_wait",
    "approval_closed",
    "turn_resume",
    "turn_end",
    "error",
    "backend_session",
    "permission_grants",
    "model_request",
    "tool",
    "fallback",
    "compaction",
    "spending",
]
"""The kinds of log entry; see the module's table."""

ApprovalOutcome = Literal["approved", "rejected", "expired", "cancelled", "superseded"]
"""How an approval wait closed. ``rejected`` covers every fail-closed answer of the bridge; ``expired`` is a
resumed wait whose time ran out across a restart; ``superseded`` is a resumed call that no longer needed asking."""


class SessionInfo(msgspec.Struct, frozen=True, kw_only=True):
    """One session's row."""

    id: str
    """The session's id."""
    project_path: str
    """The absolute path of the project directory it belongs to."""
    created: float
    """When it was created, in Unix seconds."""
    updated: float
    """When an entry was last appended (or the session was created), in Unix seconds."""
    model: str | None = None
    """The model it was started with, when known."""
    provider: str | None = None
    """The provider it was started with, when known."""
    status: SessionStatus = "active"
    """Its state."""
    forked_from: str | None = None
    """The session it was forked from."""
    first_message: str | None = None
    """Its title: the first thing the user wrote, at most :data:`TITLE_CHARS` characters (see :func:`cut_title`)."""
    message_count: int = 0
    """How many user and assistant messages it recorded."""


class ApprovalWait(msgspec.Struct, frozen=True, kw_only=True):
    """A call waits for a human: the ``hitl_request`` exactly as it was sent. The entry's time is the send time."""

    request: HitlRequestEvent
    """The event sent to the client."""
    timeout: float
    """Seconds the request may wait for its answer, counted from the send time (across restarts too)."""


class ApprovalClosed(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An approval wait is over."""

    request_id: str
    """The ``hitl_request.id`` that closed."""
    outcome: ApprovalOutcome
    """How it closed."""
    reason: str | None = None
    """The reason given with the answer, if any."""


class TurnResume(msgspec.Struct, frozen=True, kw_only=True):
    """A restarted process resumes the open turn, re-sending the listed requests."""

    request_ids: list[str]
    """The ``hitl_request.id`` of each wait re-sent."""


class BackendSession(msgspec.Struct, frozen=True, kw_only=True):
    """The coding-agent CLI serving the session, and the id of the CLI's own session."""

    backend: str
    """The backend's canonical name (``gemini``, ``opencode``)."""
    session_id: str
    """The CLI's session id, as it named it: what resuming the hive session passes back to it."""


class PermissionGrants(msgspec.Struct, frozen=True, kw_only=True):
    """Every rule the session's "always" answers granted, as they stand after a change."""

    grants: list[Grant]
    """Oldest first."""


class PendingApproval(msgspec.Struct, frozen=True, kw_only=True):
    """An approval wait still open in a suspended turn: what a restarted server must ask again."""

    request: HitlRequestEvent
    """The ``hitl_request`` as first sent; re-send it unchanged (same ``id``)."""
    call: ToolCallPart
    """The waiting tool call, as the model made it."""
    sent_at: float
    """When the request was first sent, in Unix seconds."""
    timeout: float
    """Seconds it may wait, counted from ``sent_at``."""

    @property
    def expires_at(self) -> float:
        """When it stops waiting and counts as rejected, in Unix seconds."""
        return self.sent_at + self.timeout


EntryPayload = (
    TurnRequest
    | Message
    | ToolEndEvent
    | ApprovalWait
    | ApprovalClosed
    | TurnResume
    | TurnEndEvent
    | ErrorEvent
    | BackendSession
    | PermissionGrants
    | ModelRequestRecord
    | ToolRecord
    | FallbackRecord
    | CompactionRecord
    | RequestSpend
)
"""What one log entry holds; its type names its kind."""

_KINDS: Final[dict[type[EntryPayload], EntryKind]] = {
    TurnRequest: "turn_start",
    Message: "message",
    ToolEndEvent: "tool_end",
    ApprovalWait: "approval_wait",
    ApprovalClosed: "approval_closed",
    TurnResume: "turn_resume",
    TurnEndEvent: "turn_end",
    ErrorEvent: "error",
    BackendSession: "backend_session",
    PermissionGrants: "permission_grants",
    ModelRequestRecord: "model_request",
    ToolRecord: "tool",
    FallbackRecord: "fallback",
    CompactionRecord: "compaction",
    RequestSpend: "spending",
}
_TYPES: Final[dict[str, type[EntryPayload]]] = {kind: cls for cls, kind in _KINDS.items()}

ENTRY_KINDS: Final[tuple[EntryKind, ...]] = tuple(_KINDS.values())
"""Every entry kind, in the order of the module's table."""


@dataclass(frozen=True)
class Entry:
    """One entry of a session's log."""

    seq: int
    """Its position in the session's log, from 1, without gaps."""
    ts: float
    """When it was written, in Unix seconds."""
    kind: str
    """Its kind (an :data:`EntryKind`, or a kind this version does not know)."""
    payload: EntryPayload | None
    """What it holds; ``None`` when it could not be read (an unknown kind or a damaged row): readers skip it."""


def last_backend_session(entries: Iterable[Entry]) -> BackendSession | None:
    """The last ``backend_session`` of a log: the CLI serving the session and its session id; ``None`` for a
    session of hive's own loop."""
    found: BackendSession | None = None
    for entry in entries:
        if isinstance(entry.payload, BackendSession):
            found = entry.payload
    return found


def cut_title(text: str, limit: int = TITLE_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, ending ``...`` when something was cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def entry_kind(payload: EntryPayload) -> EntryKind:
    """The kind of entry ``payload`` makes."""
    return _KINDS[type(payload)]


def decode_payload(kind: str, data: str | bytes) -> EntryPayload | None:
    """Read a stored payload back; ``None`` when the kind is unknown or the JSON does not fit it."""
    cls = _TYPES.get(kind)
    if cls is None:
        return None
    try:
        return msgspec.json.decode(data, type=cls)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


class _SessionIdError(UserError):
    """A fault about one session id; unless a message is given, it is worded from the id."""

    wording: ClassVar[str]
    session_id: str
    """The id concerned."""

    def __init__(
        self,
        problem: str | None = None,
        *,
        session_id: str,
        **position: Unpack[ErrorPosition],
    ) -> None:
        problem = self.wording.format(session_id=session_id) if problem is None else problem
        super().__init__(problem, **position)
        self.session_id = session_id


class SessionNotFound(_SessionIdError, LookupError):
    """No session has the given id."""

    wording = "no session with id {session_id!r}"


class SessionExists(_SessionIdError, ValueError):
    """A session with the given id already exists."""

    wording = "a session with id {session_id!r} already exists"


class UnsupportedSchema(UserError, RuntimeError):
    """The database was written by a newer hive whose schema this version does not understand."""


class SessionStoreError(UserError, RuntimeError):
    """The session database cannot be used: not a database, damaged, or not readable or writable here.

    The message names the file and how to move it aside (or what else to fix); ``source`` is the file.
    """


class SessionInUse(UserError, RuntimeError):
    """Another process serves the session: it holds the session's lease in the store."""

    session_id: str
    """The session asked for."""
    pid: int
    """The process holding it."""
    host: str
    """The host name of the machine that process runs on."""
    since: float
    """When it took the lease (Unix seconds)."""

    def __init__(
        self,
        problem: str | None = None,
        *,
        session_id: str,
        pid: int,
        host: str,
        since: float,
        **position: Unpack[ErrorPosition],
    ) -> None:
        if problem is None:
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since))
            problem = (
                f"session {session_id!r} is in use by process {pid} on {host} since {when}; wait for it to "
                "end, or stop that process (a process that has died gives the session up by itself)"
            )
        super().__init__(problem, **position)
        self.session_id = session_id
        self.pid = pid
        self.host = host
        self.since = since


def last_grants(entries: Iterable[Entry]) -> list[Grant]:
    """The grants the session's log kept last (none when it never recorded any)."""
    grants: list[Grant] = []
    for entry in entries:
        if isinstance(entry.payload, PermissionGrants):
            grants = list(entry.payload.grants)
    return grants
