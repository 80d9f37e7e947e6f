"""Which sessions ``hive sessions list`` and ``/resume`` show, in what state, and which one an id prefix names.

A session that never got going is clutter in a list: one with no message, or whose first message got no answer
because the turn failed (a provider not set up, a process killed at once). Those are hidden unless asked for
(``--all``). An ``active`` session whose lease no running process holds was left by a process that died: it is
listed as ``dead``, since nothing is serving it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from hive_core.sessions import SessionInfo
from hive_core.sessions import SharedSessionStore

from .conversation import SessionChoiceError
from .session_documents import ListedStatus

__all__ = ["ListedSession", "listed_sessions", "resolve_session_id"]

_CANDIDATES: Final = 10
"""Sessions an ambiguous prefix lists at most."""


@dataclass(frozen=True)
class ListedSession:
    """A session as listed: its row and its state."""

    info: SessionInfo
    """The session's row."""
    status: ListedStatus
    """Its recorded status, or ``dead`` for an active one no running process serves."""

    @property
    def failed_at_start(self) -> bool:
        """Whether it is clutter: no message, or a first message that got no answer in a turn that failed or
        whose process died."""
        count = self.info.message_count
        return count == 0 or (count == 1 and self.status in ("error", "dead"))


def listed_sessions(
    store: SharedSessionStore, project: str, *, limit: int | None, everything: bool = False
) -> tuple[list[ListedSession], int]:
    """The project's sessions, most recently active first, at most ``limit``, and how many of those read were
    hidden as failed at start (none with ``everything``; with a ``limit``, a count among the newest, not all)."""
    served = store.served()
    # Read a few more rows than listed, and more only when hiding left too few: a project of thousands of sessions
    # lists in a query of a few dozen rows.
    window = None if limit is None else max(2 * limit, 20)
    while True:
        infos = store.list_sessions(project_path=project, limit=window)
        listed: list[ListedSession] = []
        hidden = 0
        for info in infos:
            status: ListedStatus = (
                "dead" if info.status == "active" and info.id not in served else info.status
            )
            session = ListedSession(info, status)
            if session.failed_at_start and not everything:
                hidden += 1
            elif limit is None or len(listed) < limit:
                listed.append(session)
        if window is None or len(infos) < window or (limit is not None and len(listed) >= limit):
            return listed, hidden
        window *= 4


def resolve_session_id(store: SharedSessionStore, text: str) -> str:
    """The id of the session ``text`` names: its whole id, or a prefix of exactly one session's id. Raises
    :class:`~hive_cli.conversation.SessionChoiceError` when none matches, or when several do (naming them)."""
    wanted = text.strip()
    if wanted and store.get(wanted) is not None:
        return wanted
    matches = [info for info in store.list_sessions() if wanted and info.id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0].id
    if not matches:
        raise SessionChoiceError(
            f"no session {text!r}; `hive sessions list` shows the sessions of this project"
        )
    shown = ", ".join(info.id for info in matches[:_CANDIDATES])
    more = f" and {len(matches) - _CANDIDATES} more" if len(matches) > _CANDIDATES else ""
    raise SessionChoiceError(
        f"{text!r} is the start of {len(matches)} session ids: {shown}{more}; give more of it"
    )
