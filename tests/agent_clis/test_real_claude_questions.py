"""The real Claude Code CLI asking its user a question (``AskUserQuestion``) through :class:`ClaudeCodeBackend`.

The scripted model calls ``AskUserQuestion`` when the prompt holds ``ASKME`` ("Which database?", SQLite or
PostgreSQL) and then repeats what the tool gave it back. Each turn runs under a
:class:`~hive_core.runners.SessionRunner` with a :class:`~hive_core.questions.QuestionBridge` publishing the
``question_request`` on the wire, and the test answers it there: answered (the model receives ``SQLite``), declined
(the model receives the denial), cancelled while the question waits (``turn_end`` cancelled, no process left). The
whole stream is judged by :func:`hive_protocol.verify`. Skipped, saying why, when Claude Code is not installed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec
import pytest
from agent_clis_harness import MODEL, TIMEOUT, ModelServers, owned_processes, require_cli, wait_until

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY, QUESTION_OPTIONS, QUESTION_TEXT
from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner
from hive_protocol import (
    PROTOCOL_VERSION,
    Event,
    QuestionRequestEvent,
    QuestionResponseRequest,
    SessionStartedEvent,
    TextDeltaEvent,
    TurnEndEvent,
    UserMessageRequest,
    verify,
)
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.claude.control import DECLINED_QUESTION
from hive_providers.backends.registry import resolve_backend
from hive_providers.backends.specs import BackendOptions, ModelEndpoint

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASK_PROMPT: Final = "ASKME please"
"""A prompt the scripted model answers by calling ``AskUserQuestion``."""


class _Session:
    """One hive session on Claude Code with a question bridge; ``on_question`` decides what each question gets."""

    def __init__(self, tmp: Path, server: ScriptedModelServer) -> None:
        self.project = tmp / "project"
        self.project.mkdir(exist_ok=True)
        self.questions = QuestionBridge(timeout=TIMEOUT)
        self.backend = ClaudeCodeBackend(
            resolve_backend("claude-code"),
            BackendOptions(
                cwd=self.project,
                model=MODEL,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
                home=tmp / "home",
                executable=str(require_cli("claude")),
                questions=self.questions,
                cancel_grace=3.0,
            ),
        )
        self.runner = SessionRunner(self.backend, questions=self.questions)
        self.events: list[Event] = [
            SessionStartedEvent(session_id="claude-questions", protocol_version=PROTOCOL_VERSION)
        ]
        self.on_question: Callable[[QuestionRequestEvent], None] = lambda _: None
        self.questions.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, QuestionRequestEvent):
            self.on_question(event)

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
    wait_until(lambda: not _alive(pid), timeout=15.0, what=f"Claude Code ({pid}) to end")
    mark = f"HIVE_OWNER={os.getpid()}:".encode()
    left = [p for p in owned_processes(os.getpid()) if p == pid or (_carries(p, mark) and _is_claude(p))]
    assert not left, f"Claude Code processes left: {left}"


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


def _is_claude(pid: int) -> bool:
    try:
        return b"claude" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
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
    session = _Session(tmp_path, model_servers("claude"))
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
    assert DECLINED_QUESTION not in reply
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_a_declined_question_reaches_the_model_as_a_denial(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("claude"))
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
    assert DECLINED_QUESTION in reply, reply
    assert "SQLite" not in reply.removeprefix(ANSWERED_REPLY), reply
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_cancel_while_the_question_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"))
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
    _assert_gone(session.backend.last_pid)
    session.on_question = lambda event: session.answer(event, {QUESTION_TEXT: "PostgreSQL"})
    after = await session.turn(ASK_PROMPT)
    assert _stop(after) == "completed", after
    assert "PostgreSQL" in _text(after), after
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)
