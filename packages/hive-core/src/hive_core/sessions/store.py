"""The interface of a session store: :class:`~hive_core.sessions.SqliteSessionStore` and
:class:`~hive_core.sessions.postgres.PostgresSessionStore` are hive's implementations."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol
from typing import Self
from typing import TypedDict
from typing import Unpack
from typing import runtime_checkable

from hive_core.messages import Message

from .checkpoints import CheckpointStore
from .lease import LEASE_EXPIRY
from .lease import SessionLease
from .records import Entry
from .records import EntryPayload
from .records import PendingApproval
from .records import SessionInfo
from .records import SessionStatus
from .replay import replay

__all__ = ["NewSession", "SessionStore", "SharedSessionStore"]


class NewSession(TypedDict, total=False):
    """What :meth:`SessionStore.create` takes besides the project; every key may be left out."""

    model: str | None
    """The model the session runs."""
    provider: str | None
    """The provider of that model."""
    session_id: str | None
    """The session's id (``None``: a new sortable one)."""
    exist_ok: bool
    """Whether an existing id returns that session instead of raising."""


@runtime_checkable
class SessionStore(Protocol):
    """Sessions and their append-only logs.

    Every method is synchronous and short (a local database write or read), so callers on an event loop may
    call them directly. A method given an id that no session has raises
    :class:`~hive_core.sessions.SessionNotFound`, except :meth:`get` and :meth:`delete`. An implementation that
    subclasses this protocol inherits :meth:`restore` and :meth:`pending_approvals`, which read :meth:`entries`.
    """

    def create(self, *, project_path: str | os.PathLike[str], **new: Unpack[NewSession]) -> SessionInfo:
        """Start a session for ``project_path`` (made absolute).

        Without ``session_id`` a sortable id is generated; an explicit one is validated
        (:class:`~hive_core.sessions.InvalidSessionId`). An existing id raises
        :class:`~hive_core.sessions.SessionExists` unless ``exist_ok``, which returns the existing session.
        """
        ...

    def get(self, session_id: str) -> SessionInfo | None:
        """The session's row, or ``None``."""
        ...

    def list_sessions(
        self, *, project_path: str | os.PathLike[str] | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions by most recent activity first, optionally only those of one project, at most ``limit``."""
        ...

    def latest(self, project_path: str | os.PathLike[str]) -> SessionInfo | None:
        """The project's most recently active session (what ``hive -c`` continues), or ``None``."""
        ...

    def delete(self, session_id: str) -> bool:
        """Remove the session and its log; ``False`` when there was no such session."""
        ...

    def fork(self, session_id: str, *, upto: int | None = None, new_id: str | None = None) -> SessionInfo:
        """Copy the session's log (entries up to sequence number ``upto``, or all) into a new session.

        The copy records where it came from (``forked_from``); the original's status becomes ``forked``.
        """
        ...

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        """Change the session's status (``ended`` when its user leaves, ``error`` when it ends in failure)."""
        ...

    def append(self, session_id: str, payload: EntryPayload) -> int:
        """Append one entry in its own transaction, durable when this returns; returns its sequence number."""
        ...

    def entries(self, session_id: str, *, after: int = 0) -> Sequence[Entry]:
        """The session's log in order (only the entries past sequence number ``after``, when given)."""
        ...

    def restore(self, session_id: str) -> list[Message]:
        """The conversation rebuilt from the log, ready to continue (see :func:`~hive_core.sessions.replay`)."""
        return replay(self.entries(session_id)).messages

    def pending_approvals(self, session_id: str) -> list[PendingApproval]:
        """The approval waits a crash left open in the session's last turn, oldest first."""
        suspension = replay(self.entries(session_id)).suspension
        return [] if suspension is None else suspension.pending

    def close(self) -> None:
        """Release the store's resources; it must not be used afterwards."""
        ...


@runtime_checkable
class SharedSessionStore(SessionStore, CheckpointStore, Protocol):
    """A :class:`SessionStore` that many processes share, as hive's command uses it: besides the sessions and
    their logs, who serves each session (leases), change detection for readers following a log, and file
    checkpoints. Both of hive's stores are one; a ``with`` block closes it."""

    def lease(self, session_id: str, *, expiry: float = LEASE_EXPIRY) -> SessionLease:
        """Take the lease of ``session_id`` for this process, or raise :class:`~hive_core.sessions.SessionInUse`."""
        ...

    def served(self) -> frozenset[str]:
        """The sessions whose lease is held by a process that still runs."""
        ...

    def data_version(self) -> int:
        """A number that changes whenever another writer commits: what a reader following a log polls."""
        ...

    def wait_for_entries(self, session_id: str, *, after: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the session to have an entry past sequence number ``after``; whether
        it has one."""
        ...

    def schema_version(self) -> int:
        """The version of the database's schema (connecting to it, creating or upgrading it first)."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...
