"""Opening a command's session: the host, the session store, the conversation and the runner that drives it.

Every command that talks to a model opens its session with :func:`open_session`: the interactive mode, ``-p`` and
``hive run`` ask approvals at the terminal; ``hive run --server`` (``served``) asks its client, through waits
written to the session's log so they survive a restart. With ``--agent NAME`` a coding-agent CLI runs the turns
instead of hive's own loop, under the same rules and asking through the same services (and its questions: the
terminal's :class:`~hive_cli.questioner.TerminalQuestioner`, or a :class:`~hive_core.questions.QuestionBridge`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, AbstractContextManager, asynccontextmanager
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING

from hive_core import AgentSession, ApprovalService, SessionRunner
from hive_core.backends import HIVE_BACKEND, AgentBackend
from hive_core.config import find_project_root
from hive_core.questions import QuestionBridge, QuestionService
from hive_core.session_id import new_session_id
from hive_core.sessions import (
    BackendRecorder,
    DurableHitlBridge,
    SqliteSessionStore,
    SuspendedTurn,
    keep_grants,
    validate_session_id,
)
from hive_core.turn_deadline import PausingQuestions, TurnDeadline

from .approver import TerminalApprover
from .assemble import Host, HostOptions, build_host, plugins_for
from .backend_host import AgentOptionError, build_backend, canonical_agent, close_backend
from .conversation import Conversation, SessionChoice, open_conversation, serving_backend
from .project_trust import at_terminal
from .questioner import TerminalQuestioner, question_timeout
from .session_store import open_session_store

if TYPE_CHECKING:  # the permissions package loads the shell parser: imported once the local model is loading
    from hive_core.permissions import SessionGrants

__all__ = ["OpenSession", "open_session"]


class OpenSession:
    """A command's session, ready for turns; closing it closes the session store.

    Use it as a context manager around the turns, and :meth:`plugins` around each run of them.
    """

    def __init__(
        self,
        host: Host,
        store: SqliteSessionStore,
        conversation: Conversation,
        runner: SessionRunner,
        backend: AgentBackend | None = None,
        prompters: tuple[TerminalApprover | TerminalQuestioner, ...] = (),
    ) -> None:
        self.host = host
        """The configured agent and what it was made from."""
        self.store = store
        """The session store the conversation is recorded in."""
        self.conversation = conversation
        """The session, restored and recorded."""
        self.runner = runner
        """Runs the session's turns."""
        self.backend = backend
        """The coding-agent CLI that runs the turns; ``None`` for hive's own loop."""
        self.prompters = prompters
        """What asks the person at the terminal (approvals, an agent's questions); none for a served session."""
        if host.checkpoints is not None:
            host.checkpoints.bind(store, conversation.session_id)

    def share_screen(self, screen: Callable[[], AbstractContextManager[object]]) -> None:
        """Hold ``screen`` while a question is on the terminal (the renderer's, so its progress line stops)."""
        for prompter in self.prompters:
            prompter.screen = screen

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.conversation.session_id

    @property
    def agent_session(self) -> AgentSession | None:
        """The conversation with hive's agent (its context manager prepares each request); ``None`` when a
        coding-agent CLI runs the turns."""
        recorder = self.conversation.recorder
        return recorder.session if recorder is not None else None

    @property
    def label(self) -> str:
        """What runs the turns, for humans: ``provider/model``, or ``agent NAME`` (and its model)."""
        if self.conversation.backend is None:
            return self.host.model_label
        # The model asked for now (``-m``, ``/model``) before the one the session was created with.
        model = self.host.settings.model or self.conversation.info.model
        return f"agent {self.conversation.backend}" + (f" ({model})" if model else "")

    def plugins(self) -> AbstractAsyncContextManager[None]:
        """The project's MCP servers running, or the coding-agent CLI, stopped at the end of the block with
        every warm CLI the process keeps."""
        if self.backend is not None:
            return _closing(self.backend)
        return plugins_for(self.host)

    def end(self, *, failed: bool = False) -> None:
        """Record how the session ended: ``error`` when ``failed``, else ``ended``.

        A fork whose CLI never got its copy (it cannot fork: an ACP CLI says so only once started) is removed
        instead: it would otherwise resume the original's CLI session under another hive session.
        """
        conversation, backend = self.conversation, self.backend
        copied_from = conversation.backend_session if conversation.fork_backend else None
        if (
            copied_from is not None
            and backend is not None
            and backend.session_id in (None, copied_from.session_id)
        ):
            self.store.delete(self.session_id)
            return
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


@asynccontextmanager
async def _closing(backend: AgentBackend) -> AsyncGenerator[None]:
    try:
        yield
    finally:
        await close_backend(backend)


def _agent(options: HostOptions) -> str | None:
    """The canonical ``--agent`` name; planning mode is hive's own loop's."""
    agent = canonical_agent(options.agent)
    if agent not in (None, HIVE_BACKEND) and options.planning:
        raise AgentOptionError(
            "--plan and --dry-run are modes of hive's own loop; they cannot be used with --agent"
        )
    return agent


def _backend(
    host: Host,
    options: HostOptions,
    conversation: Conversation,
    store: SqliteSessionStore,
    approvals: ApprovalService,
    questions: QuestionService,
) -> tuple[BackendRecorder, AgentBackend]:
    assert conversation.backend is not None
    recorded = conversation.backend_session
    resume = recorded.session_id if recorded is not None else None
    try:
        backend = build_backend(
            host,
            options,
            conversation.backend,
            approvals=approvals,
            questions=questions,
            session_key=conversation.session_id,
            resume=resume,
            fork=conversation.fork_backend,
        )
    except BaseException:
        # Made for this run (new, or a fork the CLI cannot copy): no session is left behind.
        if conversation.fork_backend or not store.entries(conversation.session_id):
            store.delete(conversation.session_id)
        raise
    return BackendRecorder(backend, store, conversation.session_id, resumed=resume), backend


def _runs_in_cli(
    options: HostOptions, agent: str | None, store: SqliteSessionStore, choice: SessionChoice
) -> bool:
    """Whether a coding-agent CLI runs the turns: ``--agent NAME``, or the backend the resumed session was
    recorded with (asking for another is an error, raised here before the host is built)."""
    return serving_backend(store, str(find_project_root(options.cwd)), choice, agent) is not None


def _host(
    options: HostOptions,
    approvals: ApprovalService,
    clock: Callable[[], float] | None,
    *,
    model_free: bool = False,
    ask: bool = False,
) -> Host:
    host = build_host(options, approvals=approvals, model_free=model_free, ask=ask)
    if clock is not None:
        host.agent.clock = clock
    return host


def _kept_grants(host: Host, store: SqliteSessionStore, conversation: Conversation) -> SessionGrants | None:
    """The session's "always" grants, restored from its log and kept there from now on; ``None`` when hive's
    policy does not judge the turns (a coding-agent CLI's session)."""
    from hive_core.permissions import PermissionPolicy

    policy = host.agent.policy
    if conversation.recorder is None or not isinstance(policy, PermissionPolicy):
        return None
    keep_grants(policy.grants, store, conversation.session_id)
    return policy.grants


def _at_terminal(
    options: HostOptions, choice: SessionChoice, store: SqliteSessionStore, clock: Callable[[], float] | None
) -> OpenSession:
    agent = _agent(options)
    approver = TerminalApprover()
    host = _host(
        options, approver, clock, model_free=_runs_in_cli(options, agent, store, choice), ask=at_terminal()
    )
    conversation = open_conversation(host, store, choice, agent=agent, agent_model=options.model)
    approver.grants = _kept_grants(host, store, conversation)
    if conversation.recorder is not None:
        runner = SessionRunner(conversation.recorder, session_id=conversation.session_id)
        approver.on_stop = runner.cancel
        return OpenSession(host, store, conversation, runner, prompters=(approver,))
    questioner = TerminalQuestioner(timeout=question_timeout(host.config))
    deadline = TurnDeadline()  # a question waiting for its user does not count against --timeout
    recorder, backend = _backend(
        host, options, conversation, store, approver, PausingQuestions(questioner, deadline)
    )
    runner = SessionRunner(recorder, session_id=conversation.session_id, deadline=deadline)
    approver.on_stop = runner.cancel
    return OpenSession(host, store, conversation, runner, backend, prompters=(approver, questioner))


def _served(
    options: HostOptions, session_id: str | None, store: SqliteSessionStore, clock: Callable[[], float] | None
) -> OpenSession:
    agent = _agent(options)
    sid = validate_session_id(session_id) if session_id else new_session_id()
    bridge = DurableHitlBridge(store, sid)
    choice = SessionChoice(session_id=sid)
    host = _host(options, bridge, clock, model_free=_runs_in_cli(options, agent, store, choice))
    bridge.timeout = host.config.approval_timeout_seconds
    conversation = open_conversation(host, store, choice, agent=agent, agent_model=options.model)
    bridge.grants = _kept_grants(host, store, conversation)
    recorder = conversation.recorder
    if recorder is None:
        # A CLI's turn cannot be resumed mid-way: its process is gone; the CLI's session is resumed instead.
        questions = QuestionBridge(timeout=question_timeout(host.config))
        deadline = TurnDeadline()
        processor, backend = _backend(
            host, options, conversation, store, bridge, PausingQuestions(questions, deadline)
        )
        runner = SessionRunner(
            processor, session_id=sid, bridge=bridge, questions=questions, deadline=deadline
        )
        return OpenSession(host, store, conversation, runner, backend)
    suspended = SuspendedTurn.load(store, sid) if session_id else None
    resume = partial(suspended.resume, recorder, bridge) if suspended is not None else None
    runner = SessionRunner(recorder, session_id=sid, bridge=bridge, resume=resume)
    return OpenSession(host, store, conversation, runner)
