"""The real Claude Code CLI asking its user a question (``AskUserQuestion``) through :class:`ClaudeCodeBackend`.

The scripted model calls ``AskUserQuestion`` when the prompt holds ``ASKME`` ("Which database?", SQLite or
PostgreSQL) and then repeats what the tool gave it back. Each turn runs under a
:class:`~hive_core.runners.SessionRunner` with a :class:`~hive_core.questions.QuestionBridge` publishing the
``question_request`` on the wire, and the test answers it there: answered (the model receives ``SQLite``), declined
(the model receives the denial), cancelled while the question waits (``turn_end`` cancelled, no process left). The
whole stream is judged by :func:`hive_protocol.verify`. Skipped, saying why, when Claude Code is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
from agent_clis_harness import TIMEOUT
from agent_clis_harness import ModelServers
from agent_clis_turns import BackendSession
from agent_clis_turns import answer_the_question
from agent_clis_turns import assert_gone
from agent_clis_turns import offline_options
from agent_clis_turns import reply_text
from agent_clis_turns import stop_of
from agent_clis_turns import the_question

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY
from hive_conformance.model_server.agent_cli import QUESTION_TEXT
from hive_core.questions import QuestionBridge
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import verify
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.claude.control import DECLINED_QUESTION
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASK_PROMPT: Final = "ASKME please"
"""A prompt the scripted model answers by calling ``AskUserQuestion``."""


class _Session(BackendSession[ClaudeCodeBackend]):
    """One hive session on Claude Code with a question bridge; ``on_question`` decides what each question gets."""

    def __init__(self, tmp: Path, server: ScriptedModelServer) -> None:
        questions = QuestionBridge(timeout=TIMEOUT)
        backend = ClaudeCodeBackend(
            resolve_backend("claude-code"), offline_options(tmp, server, "claude", questions=questions)
        )
        super().__init__(backend, session_id="claude-questions", questions=questions)


async def test_an_answered_question_reaches_the_model(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"))
    _, reply = await answer_the_question(session, ASK_PROMPT, {QUESTION_TEXT: "SQLite"})
    assert "SQLite" in reply, reply
    assert "PostgreSQL" not in reply, reply
    assert DECLINED_QUESTION not in reply
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


async def test_a_declined_question_reaches_the_model_as_a_denial(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("claude"))
    _, reply = await answer_the_question(session, ASK_PROMPT, None)
    assert DECLINED_QUESTION in reply, reply
    assert "SQLite" not in reply, reply
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


async def test_cancel_while_the_question_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"))
    asked: list[QuestionRequestEvent] = []

    def cancel_instead(event: QuestionRequestEvent) -> None:
        asked.append(event)
        assert session.runner.cancel()

    session.on_question = cancel_instead
    turn = await session.turn(ASK_PROMPT)
    the_question(asked)
    assert stop_of(turn) == "cancelled", turn
    assert not reply_text(turn).startswith(ANSWERED_REPLY), turn
    # The question was closed with the turn: a late answer finds nothing waiting.
    assert session.questions is not None
    assert not session.questions.answer(
        QuestionResponseRequest(id=asked[0].id, answers={QUESTION_TEXT: "SQLite"})
    )
    assert_gone(session.backend.last_pid, "claude")
    session.on_question = lambda event: session.answer(event, {QUESTION_TEXT: "PostgreSQL"})
    after = await session.turn(ASK_PROMPT)
    assert stop_of(after) == "completed", after
    assert "PostgreSQL" in reply_text(after), after
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")
