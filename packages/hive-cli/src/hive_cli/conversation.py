"""Which conversation a command continues: a new session, the latest (``-c``), a given one (``-r``), or a fork."""

from __future__ import annotations

from dataclasses import dataclass

from hive_core.errors import UserError
from hive_core.sessions import SessionInfo, SqliteSessionStore, TranscriptRecorder

from .assemble import Host

__all__ = ["Conversation", "SessionChoice", "SessionChoiceError", "open_conversation"]


class SessionChoiceError(UserError, LookupError):
    """The session asked for does not exist (exit code 1)."""


@dataclass(frozen=True, kw_only=True)
class SessionChoice:
    """The session a command asked for; by default a new one."""

    continue_latest: bool = False
    """Continue the latest session of the project (``-c``); a new one when there is none."""
    resume: str | None = None
    """Resume the session of this id (``-r ID``); it must exist."""
    fork: bool = False
    """With ``continue_latest`` or ``resume``: continue in a copy, leaving the original as it was."""
    session_id: str | None = None
    """For a new session: its id, or the session of that id when it exists (``run --server --session-id``)."""


@dataclass
class Conversation:
    """A session of the store, restored into the host's agent and recorded as it goes."""

    info: SessionInfo
    recorder: TranscriptRecorder

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.info.id


def open_conversation(host: Host, store: SqliteSessionStore, choice: SessionChoice) -> Conversation:
    """Find or create the session, take its lease, restore its messages into a new agent session, and record from
    there.

    The lease (given up when the store closes) comes before the history is read: a session another process
    serves raises :class:`~hive_core.sessions.SessionInUse` instead of interleaving two transcripts.
    """
    project = str(host.project_root)
    info: SessionInfo | None
    if choice.resume is not None:
        info = store.get(choice.resume)
        if info is None:
            raise SessionChoiceError(
                f"no session {choice.resume!r}; `hive sessions list` shows the sessions of this project"
            )
    elif choice.continue_latest:
        info = store.latest(project)
        if info is None and choice.fork:
            raise SessionChoiceError("there is no earlier session in this project to fork")
    else:
        info = None
    if info is not None and choice.fork:
        info = store.fork(info.id)
    if info is None:
        info = store.create(
            project_path=project,
            model=host.settings.model,
            provider=host.settings.provider,
            session_id=choice.session_id,
            exist_ok=choice.session_id is not None,
        )
    store.lease(info.id)
    session = host.agent.session(store.restore(info.id))
    return Conversation(info, TranscriptRecorder(session, store, info.id))
