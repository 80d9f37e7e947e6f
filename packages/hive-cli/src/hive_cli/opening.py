"""Opening a session: the host, the session store, the conversation, the backend that runs its turns and the runner.

:func:`open_session` is the one opener, whatever runs the turns and whoever answers what they ask. The turns run in
an :class:`~hive_core.backends.AgentBackend`: hive's own loop served as a :class:`~hive_core.backends.HiveBackend`,
or a coding-agent CLI (``--agent NAME``) under the same rules. Approvals and an agent's questions go to the
:class:`Prompts` the caller passes in (the terminal's, for the interactive mode, ``-p`` and ``hive run``), or with
none to the session's client (``hive run --server``), through waits written to the session's log so they survive
a restart. Nothing of the terminal is built here.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from contextlib import AbstractContextManager
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING
from typing import Protocol

from hive_core import AgentSession
from hive_core import ApprovalService
from hive_core import SessionRunner
from hive_core.backends import HIVE_BACKEND
from hive_core.backends import AgentBackend
from hive_core.backends import HiveBackend
from hive_core.config import find_project_root
from hive_core.questions import QuestionBridge
from hive_core.questions import QuestionService
from hive_core.runners.session import Processor
from hive_core.runners.session import Resume
from hive_core.session_id import new_session_id
from hive_core.sessions import BackendRecorder
from hive_core.sessions import DurableHitlBridge
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SuspendedTurn
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions import keep_grants
from hive_core.sessions import validate_session_id
from hive_core.tracing import TracedAgent
from hive_core.turn_deadline import PausingQuestions
from hive_core.turn_deadline import TurnDeadline

from .assemble import SMALL_MODEL_PROVIDERS
from .assemble import Host
from .assemble import HostOptions
from .assemble import build_host
from .assemble import instructions_for
from .assemble import plugins_for
from .backend_host import AgentOptionError
from .backend_host import build_backend
from .backend_host import canonical_agent
from .backend_host import close_backend
from .conversation import ChosenSession
from .conversation import Conversation
from .conversation import SessionChoice
from .conversation import choose_session
from .conversation import open_conversation
from .questioner import question_timeout
from .session_store import open_session_store
from .telemetry import gen_ai_provider

if TYPE_CHECKING:  # the permissions package loads the shell parser: imported once the local model is loading
    from hive_core.permissions import SessionGrants
    from hive_core.spending import SessionSpending

__all__ = ["Approver", "OpenSession", "Prompts", "Questioner", "open_session", "terminal_prompts"]

Screen = Callable[[], AbstractContextManager[object]]
"""Held while a prompt is on the screen (the renderer's, so its progress line stops)."""


class Approver(ApprovalService, Protocol):
    """Asks a person for approvals: told the session's grants (where an "always" answer goes) and how to stop the
    running turn (an answer that rejects and stops)."""

    grants: SessionGrants | None
    on_stop: Callable[[], object] | None
    screen: Screen


class Questioner(QuestionService, Protocol):
    """Asks a person an agent's questions, waiting at most :attr:`timeout` seconds (set from the configuration)."""

    timeout: float | None
    screen: Screen


@dataclass(frozen=True)
class Prompts:
    """The person who answers a session's approvals and an agent's questions as they come (at a terminal)."""

    approver: Approver
    """Answers approvals."""
    questioner: Questioner
    """Answers an agent's questions."""
    ask_trust: bool = False
    """Whether the person may be asked to trust the project's settings that lower protection."""


class OpenSession(AbstractContextManager["OpenSession"]):
    """A command's session, ready for turns; closing it closes the session store.

    Use it as a context manager around the turns, and :meth:`plugins` around each run of them.
    """

    def __init__(
        self,
        host: Host,
        store: SharedSessionStore,
        conversation: Conversation,
        backend: AgentBackend,
        runner: SessionRunner,
        prompts: Prompts | None,
    ) -> None:
        self.host, self.store, self.conversation = host, store, conversation
        """The configured host; the store the conversation is recorded in; the session, leased."""
        self.backend = backend
        """What runs the turns: hive's own loop (a :class:`~hive_core.backends.HiveBackend`) or a CLI."""
        self.runner = runner
        """Runs the session's turns, recording them."""
        self.prompters = () if prompts is None else (prompts.approver, prompts.questioner)
        """What asks the person at the terminal (approvals, an agent's questions); none for a served session."""
        if host.checkpoints is not None:
            host.checkpoints.bind(store, conversation.session_id)

    def share_screen(self, screen: Screen) -> None:
        """Hold ``screen`` while a question is on the terminal (the renderer's, so its progress line stops)."""
        for prompter in self.prompters:
            prompter.screen = screen

    @property
    def session_id(self) -> str:
        """The session's id."""
        return self.conversation.session_id

    @property
    def spending(self) -> SessionSpending | None:
        """What the session has spent against its ``budget``; ``None`` when a coding-agent CLI runs the turns."""
        agent_session = self.agent_session
        return agent_session.spending if agent_session is not None else None

    @property
    def agent_session(self) -> AgentSession | None:
        """The conversation with hive's agent (its context manager prepares each request); ``None`` when a
        coding-agent CLI runs the turns."""
        return self.backend.session if isinstance(self.backend, HiveBackend) else None

    @property
    def label(self) -> str:
        """What runs the turns, for humans: ``provider/model``, or ``agent NAME`` (and its model)."""
        if self.conversation.backend is None:
            return self.host.model_label
        # The model asked for now (``-m``, ``/model``) before the one the session was created with.
        model = self.host.settings.model or self.conversation.info.model
        return f"agent {self.conversation.backend}" + (f" ({model})" if model else "")

    def set_planning(self, planning: bool) -> bool:
        """Turn hive's planning mode (only read-only tools run) on or off for the turns to come, its instructions
        with it; ``False`` (and nothing changed) when a coding-agent CLI runs the turns: the mode is hive's loop's."""
        agent_session = self.agent_session
        if agent_session is None:
            return False
        host, agent = self.host, agent_session.agent
        agent_session.planning = agent.planning = planning
        small = host.settings.provider in SMALL_MODEL_PROVIDERS
        agent.instructions = (
            instructions_for(host.project_root, planning=planning, small=small) + host.knowledge
        )
        return True

    def plugins(self) -> AbstractAsyncContextManager[None]:
        """What runs beside the turns, stopped at the end of the block: the project's MCP servers for hive's own
        loop, the CLI (with every warm CLI the process keeps) for a coding-agent CLI."""
        if isinstance(self.backend, HiveBackend):
            return plugins_for(self.host)
        return _closing(self.backend)

    def end(self, *, failed: bool = False) -> None:
        """Record how the session ended: ``error`` when ``failed``, else ``ended``.

        A fork whose CLI never got its copy (it cannot fork: an ACP CLI says so only once started) is removed
        instead: it would otherwise resume the original's CLI session under another hive session.
        """
        conversation = self.conversation
        copied_from = conversation.backend_session if conversation.fork_backend else None
        if copied_from is not None and self.backend.session_id in (None, copied_from.session_id):
            self.store.delete(self.session_id)
            return
        self.store.set_status(self.session_id, "error" if failed else "ended")

    def close(self) -> None:
        """Close the session store."""
        self.store.close()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_session(
    options: HostOptions,
    choice: SessionChoice | None = None,
    *,
    prompts: Prompts | None,
    clock: Callable[[], float] | None = None,
    store: SharedSessionStore | None = None,
) -> OpenSession:
    """Build the host for the project at ``options.cwd``, open the session store (``store``, else the configured
    one; closed with the session), the chosen conversation and the
    backend that runs its turns (``options.agent``, else the one the session was recorded with, else hive's own
    loop), and the runner that drives and records them.

    With ``prompts`` a person answers approvals (rejecting and stopping cancels the running turn) and questions.
    Without, the session is served: its client answers through a :class:`~hive_core.sessions.DurableHitlBridge`,
    and the session is the stored session of ``choice.session_id``, its turn left waiting for an approval resumed,
    or a new one (with a new id when ``None``). ``clock`` replaces the agent's clock. Raises a
    :class:`~hive_core.errors.UserError` for a fault the user can fix.
    """
    store = store or open_session_store()
    try:
        return _open(options, choice or SessionChoice(), prompts, store, clock)
    except BaseException:
        store.close()
        raise


def _open(
    options: HostOptions,
    choice: SessionChoice,
    prompts: Prompts | None,
    store: SharedSessionStore,
    clock: Callable[[], float] | None,
) -> OpenSession:
    agent = _agent(options)
    approvals: ApprovalService
    bridge: DurableHitlBridge | None = None
    served_questions: QuestionBridge | None = None
    questions: Questioner | QuestionBridge
    given = choice.session_id
    if prompts is None:
        sid = validate_session_id(given) if given else new_session_id()
        choice = SessionChoice(session_id=sid)
        approvals = bridge = DurableHitlBridge(store, sid)
        questions = served_questions = QuestionBridge()
    else:
        approvals, questions = prompts.approver, prompts.questioner
    chosen = choose_session(store, str(find_project_root(options.cwd)), choice, agent)
    host = build_host(
        options,
        approvals=approvals,
        model_free=chosen.backend is not None,
        ask=prompts is not None and prompts.ask_trust,
    )
    conversation = open_conversation(host, store, chosen)
    sid = conversation.session_id
    questions.timeout = question_timeout(host.config)
    deadline = TurnDeadline()  # a question waiting for its user does not count against --timeout
    grants: SessionGrants | None = None  # a CLI's "always" answers are its own to keep
    resume: Resume | None = None
    processor: Processor
    if host.agent is None:
        backend = _cli(
            host, options, chosen, conversation, store, approvals, PausingQuestions(questions, deadline)
        )
        processor = BackendRecorder(backend, store, sid, resumed=_resumed(chosen))
    else:
        if clock is not None:
            host.agent.clock = clock
        recorder = TranscriptRecorder(
            host.agent.session(store.restore(sid)), store, sid, model=host.settings.model
        )
        backend, processor = HiveBackend(recorder.session), recorder
        grants = _kept_grants(host, store, sid)
        served_questions = None  # hive's own loop asks no questions
        # Only hive's own loop resumes a turn mid-way: a CLI's process is gone, its session is resumed instead.
        suspended = SuspendedTurn.load(store, sid) if bridge is not None and given else None
        if suspended is not None and bridge is not None:
            resume = partial(suspended.resume, recorder, bridge)
    runner = SessionRunner(
        processor,
        session_id=sid,
        bridge=bridge,
        questions=served_questions,
        resume=resume,
        deadline=deadline,
        traced_as=_traced_as(host, conversation),
    )
    if bridge is not None:
        layer = options.layer
        bridge.timeout = (
            layer.approval_timeout
            if layer is not None and layer.approval_timeout is not None
            else host.config.approval_timeout_seconds
        )
        bridge.grants = grants
    if prompts is not None:
        prompts.approver.grants = grants
        prompts.approver.on_stop = runner.cancel
    return OpenSession(host, store, conversation, backend, runner, prompts)


def _traced_as(host: Host, conversation: Conversation) -> TracedAgent:
    """How the session's turns are named in traces: hive's own loop with its provider and model, or the
    coding-agent CLI that runs them (a CLIENT span: another program does the work)."""
    if conversation.backend is not None:
        return TracedAgent(conversation.backend, model=host.settings.model, client=True)
    return TracedAgent(
        HIVE_BACKEND, provider=gen_ai_provider(host.settings.provider), model=host.settings.model
    )


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


def _resumed(chosen: ChosenSession) -> str | None:
    """The CLI's session to resume: the one recorded last in the session."""
    return chosen.backend_session.session_id if chosen.backend_session is not None else None


def _cli(
    host: Host,
    options: HostOptions,
    chosen: ChosenSession,
    conversation: Conversation,
    store: SharedSessionStore,
    approvals: ApprovalService,
    questions: QuestionService,
) -> AgentBackend:
    """The coding-agent CLI that runs the turns, resuming (or forking) the CLI's session recorded last."""
    assert conversation.backend is not None
    try:
        return build_backend(
            host,
            options,
            conversation.backend,
            approvals=approvals,
            questions=questions,
            session_key=conversation.session_id,
            resume=_resumed(chosen),
            fork=conversation.fork_backend,
        )
    except BaseException:
        # Made for this run (new, or a fork the CLI cannot copy): no session is left behind.
        if conversation.fork_backend or not store.entries(conversation.session_id):
            store.delete(conversation.session_id)
        raise


def _kept_grants(host: Host, store: SharedSessionStore, session_id: str) -> SessionGrants:
    """The session's "always" grants, restored from its log and kept there from now on."""
    keep_grants(host.policy.grants, store, session_id)
    return host.policy.grants


def terminal_prompts() -> Prompts:
    """Fresh prompts for a session at the terminal: the person there answers approvals and questions, and may be
    asked to trust the project when stdin is a terminal."""
    from .approver import TerminalApprover
    from .project_trust import at_terminal
    from .questioner import TerminalQuestioner

    return Prompts(TerminalApprover(), TerminalQuestioner(), ask_trust=at_terminal())
