"""The real GitHub Copilot CLI asking its user a question (``ask_user``) through :class:`CopilotBackend`.

Over ACP Copilot 1.0.102 offers no ``ask_user``; on its own server protocol (``copilot --headless --stdio``) it
does. The scripted model calls ``ask_user`` when the prompt holds ``ASKME`` ("Which database?", SQLite or
PostgreSQL as string choices) and then repeats what the tool gave it back. Each turn runs under a
:class:`~hive_core.runners.SessionRunner` with a :class:`~hive_core.questions.QuestionBridge` publishing the
``question_request`` on the wire, and the test answers it there: answered (the model receives ``SQLite``), declined
(the model receives Copilot's "unable to respond"), a refused answer (not one value) declines too, cancelled while
the question waits (``turn_end`` cancelled, no process left); the approval of a shell command, approved and
rejected. The whole stream is judged by :func:`hive_protocol.verify`. Skipped, saying why, when Copilot is not
installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec
import pytest
from agent_clis_harness import (
    MODEL,
    SLOW_PROMPT,
    TIMEOUT,
    TOOL_FILE,
    TOOL_PROMPT,
    ModelServers,
    model_requests,
    owned_processes,
    request_text,
    require_cli,
    wait_until,
)

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY, QUESTION_OPTIONS, QUESTION_TEXT
from hive_core.approvals import ApprovalDecision, ApprovalRequest
from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner, collect_turn
from hive_protocol import (
    PROTOCOL_VERSION,
    Event,
    QuestionRequestEvent,
    QuestionResponseRequest,
    SessionStartedEvent,
    TextDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
    TurnEndEvent,
    UserMessageRequest,
    verify,
)
from hive_providers.backends.copilot import CopilotBackend
from hive_providers.backends.registry import resolve_backend
from hive_providers.backends.specs import BackendOptions, ModelEndpoint

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASK_PROMPT: Final = "ASKME please"
"""A prompt the scripted model answers by calling ``ask_user``."""
UNANSWERED: Final = "unable to respond"
"""What Copilot tells the model when the question was declined."""


class _Session:
    """One hive session on Copilot with a question bridge; ``on_question`` decides what each question gets."""

    def __init__(self, tmp: Path, server: ScriptedModelServer) -> None:
        self.project = tmp / "project"
        self.project.mkdir(exist_ok=True)
        self.questions = QuestionBridge(timeout=TIMEOUT)
        self.approve: bool | None = None
        self.cancel_on_approval = False
        self.cancel_on_text = False
        self.approvals: list[ApprovalRequest] = []
        self.backend = CopilotBackend(
            resolve_backend("copilot"),
            BackendOptions(
                cwd=self.project,
                model=MODEL,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
                home=tmp / "home",
                executable=str(require_cli("copilot")),
                questions=self.questions,
                approvals=self,
                cancel_grace=3.0,
            ),
        )
        self.runner = SessionRunner(self.backend, questions=self.questions)
        self.events: list[Event] = [
            SessionStartedEvent(session_id="copilot-questions", protocol_version=PROTOCOL_VERSION)
        ]
        self.on_question: Callable[[QuestionRequestEvent], None] = lambda _: None
        self.questions.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if self.cancel_on_text and isinstance(event, TextDeltaEvent):
            self.cancel_on_text = False
            assert self.runner.cancel()
        if isinstance(event, QuestionRequestEvent):
            self.on_question(event)

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """The approval service: ``approve`` decides (``None``: the test expects no approval at all)."""
        self.approvals.append(request)
        if self.cancel_on_approval:
            assert self.runner.cancel()
            await anyio.sleep_forever()
        assert self.approve is not None, f"unexpected approval request {request}"
        return ApprovalDecision(approved=self.approve, reason=None if self.approve else "not today")

    def answer(self, event: QuestionRequestEvent, answers: dict[str, str | list[str]] | None) -> None:
        """Answer ``event`` on the wire, as a client's ``question_response`` does."""
        assert self.questions.answer(QuestionResponseRequest(id=event.id, answers=answers))

    async def turn(self, prompt: str) -> list[Event]:
        start = len(self.events)
        with anyio.fail_after(TIMEOUT):
            await self.runner.run_turn(UserMessageRequest(content=prompt), self._emit)
        return self.events[start:]

    def stream(self) -> list[bytes]:
        return [msgspec.json.encode(event) for event in self.events]


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def _stop(events: list[Event]) -> str | None:
    end = events[-1]
    assert isinstance(end, TurnEndEvent), events
    return end.stop_reason


def _text(events: list[Event]) -> str:
    return "".join(event.content for event in _of(events, TextDeltaEvent))


def _assert_gone(pid: int | None) -> None:
    assert pid is not None
    wait_until(lambda: not _alive(pid), timeout=15.0, what=f"Copilot ({pid}) to end")
    mark = f"HIVE_OWNER={os.getpid()}:".encode()
    left = [p for p in owned_processes(os.getpid()) if p == pid or (_carries(p, mark) and _is_copilot(p))]
    assert not left, f"Copilot processes left: {left}"


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _carries(pid: int, mark: bytes) -> bool:
    try:
        return mark in (Path("/proc") / str(pid) / "environ").read_bytes()
    except OSError:
        return False


def _is_copilot(pid: int) -> bool:
    try:
        return b"copilot" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


def _the_question(asked: list[QuestionRequestEvent]) -> QuestionRequestEvent:
    assert len(asked) == 1, asked
    [question] = asked[0].questions
    assert question.question == QUESTION_TEXT
    assert [option.label for option in question.options] == list(QUESTION_OPTIONS)
    assert not question.multi_select
    return asked[0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_an_answered_question_reaches_the_model(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    asked: list[QuestionRequestEvent] = []

    def answer_sqlite(event: QuestionRequestEvent) -> None:
        asked.append(event)
        session.answer(event, {QUESTION_TEXT: "SQLite"})

    session.on_question = answer_sqlite
    turn = await session.turn(ASK_PROMPT)
    _the_question(asked)
    assert _stop(turn) == "completed", turn
    reply = _text(turn)
    assert reply.startswith(ANSWERED_REPLY), turn
    assert "SQLite" in reply.removeprefix(ANSWERED_REPLY), reply
    assert "PostgreSQL" not in reply.removeprefix(ANSWERED_REPLY), reply
    assert UNANSWERED not in reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)


async def test_a_declined_question_reaches_the_model_as_a_denial(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    asked: list[QuestionRequestEvent] = []

    def decline(event: QuestionRequestEvent) -> None:
        asked.append(event)
        session.answer(event, None)

    session.on_question = decline
    turn = await session.turn(ASK_PROMPT)
    _the_question(asked)
    assert _stop(turn) == "completed", turn
    reply = _text(turn)
    assert reply.startswith(ANSWERED_REPLY), turn
    assert UNANSWERED in reply, reply
    assert "SQLite" not in reply.removeprefix(ANSWERED_REPLY), reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)


async def test_cancel_while_the_question_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("copilot")
    since = len(server.requests)
    session = _Session(tmp_path, server)
    asked: list[QuestionRequestEvent] = []

    def cancel_instead(event: QuestionRequestEvent) -> None:
        asked.append(event)
        assert session.runner.cancel()

    session.on_question = cancel_instead
    turn = await session.turn(ASK_PROMPT)
    _the_question(asked)
    assert _stop(turn) == "cancelled", turn
    assert not _text(turn).startswith(ANSWERED_REPLY), turn
    # The question was closed with the turn: a late answer finds nothing waiting.
    assert not session.questions.answer(
        QuestionResponseRequest(id=asked[0].id, answers={QUESTION_TEXT: "SQLite"})
    )
    # Nothing was recorded as declined: Copilot never gave the model a refusal for that question.
    assert not any(UNANSWERED in request_text(r) for r in model_requests(server, since)), (
        "the cancel declined it"
    )
    session.on_question = lambda event: session.answer(event, {QUESTION_TEXT: "PostgreSQL"})
    after = await session.turn(ASK_PROMPT)
    assert _stop(after) == "completed", after
    assert "PostgreSQL" in _text(after), after
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)


async def test_an_answer_of_two_values_is_refused_and_declines(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    asked: list[QuestionRequestEvent] = []

    def both(event: QuestionRequestEvent) -> None:
        asked.append(event)
        session.answer(event, {QUESTION_TEXT: ["SQLite", "PostgreSQL"]})

    session.on_question = both
    turn = await session.turn(ASK_PROMPT)
    _the_question(asked)
    assert _stop(turn) == "completed", turn
    reply = _text(turn)
    assert UNANSWERED in reply, reply
    assert "SQLite" not in reply.removeprefix(ANSWERED_REPLY), reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)


@pytest.mark.parametrize("approve", [True, False])
async def test_a_shell_command_asks_for_approval(
    tmp_path: Path, model_servers: ModelServers, approve: bool
) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    session.approve = approve
    turn = await session.turn(TOOL_PROMPT)
    assert len(session.approvals) == 1, session.approvals
    [asked] = session.approvals
    assert asked.tool_name == "execute_command"
    assert "touch" in str(asked.arguments.get("command")), asked
    [start] = [e for e in _of(turn, ToolStartEvent) if e.call_id == asked.call_id]
    assert start.tool == "execute_command"
    [end] = [e for e in _of(turn, ToolEndEvent) if e.call_id == asked.call_id]
    assert end.success is approve, end
    assert (session.project / TOOL_FILE).exists() is approve
    assert _stop(turn) == "completed", turn
    end_event = turn[-1]
    assert isinstance(end_event, TurnEndEvent)
    assert end_event.input_tokens, end_event
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)


async def test_without_a_question_service_there_is_no_ask_user_and_a_fork_copies_the_session(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("copilot")
    project = tmp_path / "project"
    project.mkdir()

    def backend(**more: Any) -> CopilotBackend:
        return CopilotBackend(
            resolve_backend("copilot"),
            BackendOptions(
                cwd=project,
                model=MODEL,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
                home=tmp_path / "home",
                executable=str(require_cli("copilot")),
                cancel_grace=3.0,
                **more,
            ),
        )

    since = len(server.requests)
    first = backend()
    with anyio.fail_after(TIMEOUT):
        turn = await collect_turn(first, "first words")
    await first.aclose()
    _assert_gone(first.last_pid)
    assert verify(turn, turns=1) == []
    original = first.session_id
    assert original is not None
    [request] = model_requests(server, since)
    body: Any = request.body
    offered = [tool["function"]["name"] for tool in body["tools"]]
    assert "ask_user" not in offered, offered  # --no-ask-user: no one could answer it
    assert "bash" in offered, offered

    since = len(server.requests)
    fork = backend(resume=original, fork=True)
    with anyio.fail_after(TIMEOUT):
        forked = await collect_turn(fork, "forked words")
    await fork.aclose()
    _assert_gone(fork.last_pid)
    assert verify(forked, turns=1) == []
    assert fork.session_id not in (None, original)
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any("first words" in text and "forked words" in text for text in texts), texts

    since = len(server.requests)
    again = backend(resume=original)
    with anyio.fail_after(TIMEOUT):
        resumed = await collect_turn(again, "back to the original")
    await again.aclose()
    _assert_gone(again.last_pid)
    assert verify(resumed, turns=1) == []
    assert again.session_id == original
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any("first words" in text and "back to the original" in text for text in texts), texts
    assert not any("forked words" in text for text in texts), "the fork changed the original session"


@pytest.mark.parametrize("during", ["approval", "text"])
async def test_cancel_during_a_tool_or_text(tmp_path: Path, model_servers: ModelServers, during: str) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    if during == "approval":
        session.cancel_on_approval = True
        turn = await session.turn(TOOL_PROMPT)
        assert session.approvals, turn
        assert not (session.project / TOOL_FILE).exists()
    else:
        session.cancel_on_text = True
        turn = await session.turn(SLOW_PROMPT)
        assert _text(turn), turn
        assert len(_text(turn).split()) < 80, "the reply streamed to its end"
    assert _stop(turn) == "cancelled", turn
    started = {e.call_id for e in _of(turn, ToolStartEvent)}
    assert started <= {e.call_id for e in _of(turn, ToolEndEvent)}, turn
    session.cancel_on_approval = False
    after = await session.turn("hello")
    assert _stop(after) == "completed", after
    assert "MOCK_REPLY" in _text(after), after
    assert verify(session.stream()) == []
    await session.backend.aclose()
    _assert_gone(session.backend.last_pid)
