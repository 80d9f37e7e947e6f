"""Which conversation a command continues: a new session, the latest (``-c``), a given one (``-r``), or a fork.

A session a coding-agent CLI serves (``--agent NAME``) keeps its conversation in the CLI's own session: resuming it
resumes that session, with the backend it was recorded with, and forking it asks the CLI for a copy of its session
(a backend whose CLI cannot copy one says so). It cannot be continued by another backend.
"""

from __future__ import annotations

from dataclasses import dataclass

from hive_core.backends import HIVE_BACKEND
from hive_core.errors import UserError
from hive_core.sessions import BackendSession
from hive_core.sessions import SessionInfo
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import last_backend_session

from .assemble import Host

__all__ = [
    "ChosenSession",
    "Conversation",
    "SessionChoice",
    "SessionChoiceError",
    "choose_session",
    "open_conversation",
]


class SessionChoiceError(UserError, LookupError):
    """The session asked for does not exist (exit code 1)."""


@dataclass(frozen=True, kw_only=True)
class SessionChoice:
    """The session a command asked for; by default a new one."""

    continue_latest: bool = False
    """Continue the latest session of the project (``-c``); it must exist."""
    resume: str | None = None
    """Resume the session of this id, or of the one id it starts (``-r ID``); it must exist."""
    fork: bool = False
    """With ``continue_latest`` or ``resume``: continue in a copy, leaving the original as it was."""
    session_id: str | None = None
    """For a new session: its id, or the session of that id when it exists (``run --server --session-id``)."""


@dataclass(frozen=True)
class ChosenSession:
    """The session a :class:`SessionChoice` names, found before anything is built."""

    choice: SessionChoice
    """What the command asked for."""
    info: SessionInfo | None
    """The stored session; ``None`` for a new one."""
    backend_session: BackendSession | None
    """The CLI's own session recorded last in it, to resume; ``None`` for a new one."""
    backend: str | None
    """The canonical name of the coding-agent CLI that will serve it; ``None`` for hive's own loop."""


@dataclass
class Conversation:
    """A session of the store, leased, and the backend that serves it."""

    info: SessionInfo
    """The session's row."""
    backend: str | None = None
    """The canonical name of the CLI that serves the session; ``None`` for hive's own loop."""
    backend_session: BackendSession | None = None
    """The CLI's own session recorded last, to resume; ``None`` for a new one."""
    fork_backend: bool = False
    """Whether this session is a fork whose CLI must continue in a copy of :attr:`backend_session`."""

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.info.id


def choose_session(
    store: SharedSessionStore, project: str, choice: SessionChoice, agent: str | None
) -> ChosenSession:
    """The session ``choice`` names in the project at ``project``, and the backend that will serve it.

    ``agent`` is the canonical backend name of ``--agent`` (``hive`` for the built-in loop), ``None`` when it was
    not given: a resumed session then keeps the backend it was recorded with. Raises :class:`SessionChoiceError`
    for a session that does not exist, or that another backend than ``agent`` was recorded with.
    """
    info = _lookup(store, project, choice)
    recorded = last_backend_session(store.entries(info.id)) if info is not None else None
    return ChosenSession(choice, info, recorded, _backend_for(info, recorded, agent))


def open_conversation(host: Host, store: SharedSessionStore, chosen: ChosenSession) -> Conversation:
    """Create the session ``chosen`` names if it is new (or its fork), and take its lease.

    A new session is recorded with the host's model (for a CLI: the one asked for, else the CLI's own default).
    The lease (given up when the store closes) comes before the history is read: a session another process
    serves raises :class:`~hive_core.sessions.SessionInUse` instead of interleaving two transcripts.
    """
    choice, info, recorded, backend = chosen.choice, chosen.info, chosen.backend_session, chosen.backend
    forked = info is not None and choice.fork
    if info is not None and choice.fork:
        info = store.fork(info.id)
    if info is None:
        info = store.create(
            project_path=str(host.project_root),
            model=host.settings.model,
            provider=backend or host.settings.provider,
            session_id=choice.session_id,
            exist_ok=choice.session_id is not None,
        )
    store.lease(info.id)
    if backend is None:
        return Conversation(info)
    return Conversation(info, backend, recorded, fork_backend=forked and recorded is not None)


def _lookup(store: SharedSessionStore, project: str, choice: SessionChoice) -> SessionInfo | None:
    """The stored session ``choice`` continues; ``None`` for a new one."""
    if choice.resume is not None:
        from .session_listing import resolve_session_id

        info = store.get(resolve_session_id(store, choice.resume))
        assert info is not None
        return info
    if choice.continue_latest:
        info = store.latest(project)
        if info is None:
            # As `claude -c` does: a continuation asked for and not possible is an error, not a silent new start.
            raise SessionChoiceError(
                "no earlier session in this project to continue; run hive without -c to start one"
            )
        return info
    if choice.session_id is not None:
        return store.get(choice.session_id)
    return None


def _backend_for(info: SessionInfo | None, recorded: BackendSession | None, agent: str | None) -> str | None:
    """The backend that serves the session (``None``: hive's own loop), or the error of asking for another."""
    wanted = None if agent == HIVE_BACKEND else agent
    if info is None:
        return wanted
    had = recorded.backend if recorded is not None else _recorded_backend(info)
    if agent is None or had == wanted:
        return had
    if had is not None:
        raise SessionChoiceError(
            f"session {info.id!r} was recorded with agent backend {had!r}; resume it with --agent {had} "
            "(or without --agent)"
        )
    if info.message_count:
        raise SessionChoiceError(
            f"session {info.id!r} is a session of hive's own loop: agent backend {wanted!r} cannot take over its "
            "history; resume it without --agent, or start a new session"
        )
    return wanted


def _recorded_backend(info: SessionInfo) -> str | None:
    """The backend a session was created for before the CLI named a session of its own (its first turn failed)."""
    if info.provider is None:
        return None
    from hive_providers.backends.registry import backend_specs

    return info.provider if any(spec.name == info.provider for spec in backend_specs()) else None
