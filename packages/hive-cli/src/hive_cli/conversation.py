"""Which conversation a command continues: a new session, the latest (``-c``), a given one (``-r``), or a fork."""

from __future__ import annotations

from dataclasses import dataclass

from hive_core.sessions import SessionInfo, SessionStore, TranscriptRecorder

from .assemble import Host

__all__ = ["Conversation", "SessionChoiceError", "open_conversation"]


class SessionChoiceError(LookupError):
    """The session asked for does not exist (exit code 1)."""


@dataclass
class Conversation:
    """A session of the store, restored into the host's agent and recorded as it goes."""

    info: SessionInfo
    recorder: TranscriptRecorder

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.info.id


def open_conversation(
    host: Host,
    store: SessionStore,
    *,
    continue_latest: bool = False,
    resume: str | None = None,
    fork: bool = False,
    session_id: str | None = None,
) -> Conversation:
    """Find or create the session, restore its messages into a new agent session, and record from there."""
    project = str(host.project_root)
    info: SessionInfo | None
    if resume is not None:
        info = store.get(resume)
        if info is None:
            raise SessionChoiceError(
                f"no session {resume!r}; `hive sessions list` shows the sessions of this project"
            )
    elif continue_latest:
        info = store.latest(project)
        if info is None and fork:
            raise SessionChoiceError("there is no earlier session in this project to fork")
    else:
        info = None
    if info is not None and fork:
        info = store.fork(info.id)
    if info is None:
        info = store.create(
            project_path=project,
            model=host.settings.model,
            provider=host.settings.provider,
            session_id=session_id,
            exist_ok=session_id is not None,
        )
    session = host.agent.session(store.restore(info.id))
    return Conversation(info, TranscriptRecorder(session, store, info.id))
