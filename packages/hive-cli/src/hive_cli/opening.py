"""Opening a command's session: the host, the session store, the conversation and the runner that drives it.

Every command that talks to a model opens its session with :func:`open_session`: the interactive mode, ``-p`` and
``hive run`` ask approvals at the terminal; ``hive run --server`` (``served``) asks its client, through waits
written to the session's log so they survive a restart.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from functools import partial
from types import TracebackType

from hive_core import AgentSession, ApprovalService, SessionRunner
from hive_core.session_id import new_session_id
from hive_core.sessions import DurableHitlBridge, SqliteSessionStore, SuspendedTurn, validate_session_id

from .approver import TerminalApprover
from .assemble import Host, HostOptions, build_host, plugins_for
from .conversation import Conversation, SessionChoice, open_conversation
from .session_store import open_session_store

__all__ = ["OpenSession", "open_session"]


class OpenSession:
    """A command's session, ready for turns; closing it closes the session store.

    Use it as a context manager around the turns, and :meth:`plugins` around each run of them.
    """

    def __init__(
        self, host: Host, store: SqliteSessionStore, conversation: Conversation, runner: SessionRunner
    ) -> None:
        self.host = host
        """The configured agent and what it was made from."""
        self.store = store
        """The session store the conversation is recorded in."""
        self.conversation = conversation
        """The session, restored and recorded."""
        self.runner = runner
        """Runs the session's turns."""

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.conversation.session_id

    @property
    def agent_session(self) -> AgentSession:
        """The conversation with the agent (its context manager prepares each request)."""
        return self.conversation.recorder.session

    def plugins(self) -> AbstractAsyncContextManager[None]:
        """The project's MCP servers, running (see :func:`~hive_cli.assemble.plugins_for`)."""
        return plugins_for(self.host)

    def end(self, *, failed: bool = False) -> None:
        """Record how the session ended: ``error`` when ``failed``, else ``ended``."""
        self.store.set_status(self.session_id, "error" if failed else "ended")

    def close(self) -> None:
        """Close the session store."""
        self.store.close()

    def __enter__(self) -> OpenSession:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def open_session(
    options: HostOptions,
    choice: SessionChoice | None = None,
    *,
    served: bool = False,
    clock: Callable[[], float] | None = None,
) -> OpenSession:
    """Build the host for the project at ``options.cwd``, open the session store and the chosen conversation.

    Approvals are asked at the terminal (rejecting and stopping cancels the running turn), or with ``served``
    through a :class:`~hive_core.sessions.DurableHitlBridge`: a served session is the stored session of
    ``choice.session_id``, its turn left waiting for an approval resumed, or a new one (with a new id when
    ``None``). ``clock`` replaces the agent's clock. Raises a :class:`~hive_core.errors.UserError` for a fault the user
    can fix.
    """
    store = open_session_store()
    try:
        if served:
            return _served(options, choice.session_id if choice else None, store, clock)
        return _at_terminal(options, choice or SessionChoice(), store, clock)
    except BaseException:
        store.close()
        raise


def _host(options: HostOptions, approvals: ApprovalService, clock: Callable[[], float] | None) -> Host:
    host = build_host(options, approvals=approvals)
    if clock is not None:
        host.agent.clock = clock
    return host


def _at_terminal(
    options: HostOptions, choice: SessionChoice, store: SqliteSessionStore, clock: Callable[[], float] | None
) -> OpenSession:
    approver = TerminalApprover()
    host = _host(options, approver, clock)
    conversation = open_conversation(host, store, choice)
    runner = SessionRunner(conversation.recorder, session_id=conversation.session_id)
    approver.on_stop = runner.cancel
    return OpenSession(host, store, conversation, runner)


def _served(
    options: HostOptions, session_id: str | None, store: SqliteSessionStore, clock: Callable[[], float] | None
) -> OpenSession:
    sid = validate_session_id(session_id) if session_id else new_session_id()
    bridge = DurableHitlBridge(store, sid)
    host = _host(options, bridge, clock)
    bridge.timeout = host.config.approval_timeout_seconds
    conversation = open_conversation(host, store, SessionChoice(session_id=sid))
    recorder = conversation.recorder
    suspended = SuspendedTurn.load(store, sid) if session_id else None
    resume = partial(suspended.resume, recorder, bridge) if suspended is not None else None
    runner = SessionRunner(recorder, session_id=sid, bridge=bridge, resume=resume)
    return OpenSession(host, store, conversation, runner)
