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

from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TIMEOUT
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_turns import BackendSession
from agent_clis_turns import answer_the_question
from agent_clis_turns import assert_gone
from agent_clis_turns import of_type
from agent_clis_turns import offline_options
from agent_clis_turns import reply_text
from agent_clis_turns import stop_of
from agent_clis_turns import the_question

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY
from hive_conformance.model_server.agent_cli import QUESTION_TEXT
from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.questions import QuestionBridge
from hive_core.runners import collect_turn
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.copilot import CopilotBackend
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASK_PROMPT: Final = "ASKME please"
"""A prompt the scripted model answers by calling ``ask_user``."""
UNANSWERED: Final = "unable to respond"
"""What Copilot tells the model when the question was declined."""


class _Session(BackendSession[CopilotBackend]):
    """One hive session on Copilot with a question bridge; ``on_question`` decides what each question gets, and the
    session is its approval service too (:meth:`request`)."""

    def __init__(self, tmp: Path, server: ScriptedModelServer) -> None:
        questions = QuestionBridge(timeout=TIMEOUT)
        backend = CopilotBackend(
            resolve_backend("copilot"),
            offline_options(tmp, server, "copilot", questions=questions, approvals=self),
        )
        super().__init__(backend, session_id="copilot-questions", questions=questions)
        self.cancel_on_approval = False
        self.cancel_on_text = False
        self.approvals: list[ApprovalRequest] = []

    def _emit(self, event: Event) -> None:
        super()._emit(event)
        if self.cancel_on_text and isinstance(event, TextDeltaEvent):
            self.cancel_on_text = False
            assert self.runner.cancel()

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        """The approval service: ``approve`` decides (``None``: the test expects no approval at all)."""
        self.approvals.append(request)
        if self.cancel_on_approval:
            assert self.runner.cancel()
            await anyio.sleep_forever()
        assert self.approve is not None, f"unexpected approval request {request}"
        return ApprovalDecision(approved=self.approve, reason=None if self.approve else "not today")


async def test_an_answered_question_reaches_the_model(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    _, reply = await answer_the_question(session, ASK_PROMPT, {QUESTION_TEXT: "SQLite"})
    assert "SQLite" in reply, reply
    assert "PostgreSQL" not in reply, reply
    assert UNANSWERED not in reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")


async def test_a_declined_question_reaches_the_model_as_a_denial(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    _, reply = await answer_the_question(session, ASK_PROMPT, None)
    assert UNANSWERED in reply, reply
    assert "SQLite" not in reply, reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")


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
    the_question(asked)
    assert stop_of(turn) == "cancelled", turn
    assert not reply_text(turn).startswith(ANSWERED_REPLY), turn
    # The question was closed with the turn: a late answer finds nothing waiting.
    assert session.questions is not None
    assert not session.questions.answer(
        QuestionResponseRequest(id=asked[0].id, answers={QUESTION_TEXT: "SQLite"})
    )
    # Nothing was recorded as declined: Copilot never gave the model a refusal for that question.
    assert not any(UNANSWERED in request_text(r) for r in model_requests(server, since)), (
        "the cancel declined it"
    )
    session.on_question = lambda event: session.answer(event, {QUESTION_TEXT: "PostgreSQL"})
    after = await session.turn(ASK_PROMPT)
    assert stop_of(after) == "completed", after
    assert "PostgreSQL" in reply_text(after), after
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")


async def test_an_answer_of_two_values_is_refused_and_declines(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    session = _Session(tmp_path, model_servers("copilot"))
    _, reply = await answer_the_question(session, ASK_PROMPT, {QUESTION_TEXT: ["SQLite", "PostgreSQL"]})
    assert UNANSWERED in reply, reply
    assert "SQLite" not in reply, reply
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")


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
    [start] = [e for e in of_type(turn, ToolStartEvent) if e.call_id == asked.call_id]
    assert start.tool == "execute_command"
    [end] = [e for e in of_type(turn, ToolEndEvent) if e.call_id == asked.call_id]
    assert end.success is approve, end
    assert (session.project / TOOL_FILE).exists() is approve
    assert stop_of(turn) == "completed", turn
    end_event = turn[-1]
    assert isinstance(end_event, TurnEndEvent)
    assert end_event.input_tokens, end_event
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")


async def test_without_a_question_service_there_is_no_ask_user_and_a_fork_copies_the_session(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("copilot")

    def backend(**more: Any) -> CopilotBackend:
        return CopilotBackend(
            resolve_backend("copilot"), offline_options(tmp_path, server, "copilot", **more)
        )

    since = len(server.requests)
    first = backend()
    with anyio.fail_after(TIMEOUT):
        turn = await collect_turn(first, "first words")
    await first.aclose()
    assert_gone(first.last_pid, "copilot")
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
    assert_gone(fork.last_pid, "copilot")
    assert verify(forked, turns=1) == []
    assert fork.session_id not in (None, original)
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any("first words" in text and "forked words" in text for text in texts), texts

    since = len(server.requests)
    again = backend(resume=original)
    with anyio.fail_after(TIMEOUT):
        resumed = await collect_turn(again, "back to the original")
    await again.aclose()
    assert_gone(again.last_pid, "copilot")
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
        assert reply_text(turn), turn
        assert len(reply_text(turn).split()) < 80, "the reply streamed to its end"
    assert stop_of(turn) == "cancelled", turn
    started = {e.call_id for e in of_type(turn, ToolStartEvent)}
    assert started <= {e.call_id for e in of_type(turn, ToolEndEvent)}, turn
    session.cancel_on_approval = False
    after = await session.turn("hello")
    assert stop_of(after) == "completed", after
    assert "MOCK_REPLY" in reply_text(after), after
    assert verify(session.stream()) == []
    await session.backend.aclose()
    assert_gone(session.backend.last_pid, "copilot")
