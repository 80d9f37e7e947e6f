"""The real Pi CLI through :class:`PiBackend`, in process, against the scripted model server.

Each turn runs under a :class:`~hive_core.runners.SessionRunner` and the whole stream is judged by
:func:`hive_protocol.verify`: a text turn; a ``bash`` ``touch`` (Pi runs its tools without asking: the call is
reported, never approved); a second backend resuming the first's session (the model is sent the first turn's
words); a fork (``--fork``) that copies the session and leaves the original as it was; a turn cancelled mid-text
(``turn_end`` cancelled, no process left); in RPC mode with hive's ``ask_user_question`` extension, a question
answered and one declined on the wire; and, with an approval service (hive's approval extension holding each call
in Pi's ``tool_call`` hook), the ``touch`` approved (the file exists), rejected (it does not, and the model read
the reason) and cancelled while the approval waits. Skipped when Pi is missing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Final

import pytest
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TIMEOUT
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_turns import BackendSession
from agent_clis_turns import assert_gone
from agent_clis_turns import of_type
from agent_clis_turns import offline_options
from agent_clis_turns import reply_text
from agent_clis_turns import stop_of

from hive_conformance.model_server import ScriptedModelServer
from hive_core.hitl import HitlBridge
from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.pi import PiBackend
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

REMEMBERED: Final = "PINEAPPLE-7319"
"""A word the first turn says and the resumed turn's model request must carry."""
ASK_PROMPT: Final = "ASKME go"
"""A prompt the responder answers with a call to the question tool (``Which database?``)."""


class _Session(BackendSession[PiBackend]):
    """One hive session on Pi: each question answered ``answer`` (``None``: declined) through a question bridge
    (``ask``), each approval ``approve`` through an approval bridge (``gated``)."""

    def __init__(
        self,
        tmp: Path,
        server: ScriptedModelServer,
        *,
        answer: str | None = None,
        ask: bool = False,
        resume: str | None = None,
        approve: bool | None = None,
        gated: bool = False,
    ) -> None:
        questions = QuestionBridge(timeout=TIMEOUT) if ask else None
        bridge = HitlBridge(timeout=TIMEOUT) if gated else None
        backend = PiBackend(
            resolve_backend("pi"),
            offline_options(tmp, server, "pi", questions=questions, approvals=bridge, resume=resume),
        )
        super().__init__(backend, session_id="pi-test", bridge=bridge, questions=questions, approve=approve)
        self.answer_with = answer
        self.asked: list[QuestionRequestEvent] = []
        self.on_question = self._answer

    def _answer(self, event: QuestionRequestEvent) -> None:
        assert self.questions is not None
        self.asked.append(event)
        answers: dict[str, list[str] | str] | None = (
            None if self.answer_with is None else {event.questions[0].question: self.answer_with}
        )
        self.questions.answer(QuestionResponseRequest(id=event.id, answers=answers))


@pytest.mark.parametrize("ask", [False, True], ids=["json", "rpc"])
async def test_text_turn(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=ask)
    turn = await session.turn("hello")
    assert reply_text(turn) == "MOCK_REPLY ok", turn
    end = turn[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert end.input_tokens
    assert end.output_tokens
    assert session.backend.session_id is not None
    assert session.backend.json_fallback is False
    assert session.backend.last_command is not None
    assert session.backend.last_command[1:3] == ["--mode", "rpc" if ask else "json"]
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


@pytest.mark.parametrize("ask", [False, True], ids=["json", "rpc"])
async def test_tool_runs_unasked(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=ask)
    turn = await session.turn(TOOL_PROMPT)
    starts = of_type(turn, ToolStartEvent)
    ends = of_type(turn, ToolEndEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert starts[0].input == {"command": f"touch {TOOL_FILE}"}
    assert [(e.call_id, e.success) for e in ends] == [(starts[0].call_id, True)], turn
    assert (session.project / TOOL_FILE).exists()
    assert reply_text(turn) == "MOCK_REPLY done", turn
    assert stop_of(turn) == "completed"
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


async def test_resume_continues_the_cli_session(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("pi")
    first = _Session(tmp_path, server)
    turn = await first.turn(f"Remember the word {REMEMBERED}.")
    assert stop_of(turn) == "completed", turn
    pi_session = first.backend.session_id
    assert pi_session is not None
    since = len(server.requests)
    second = _Session(tmp_path, server, resume=pi_session)
    again = await second.turn("What was the word?")
    assert stop_of(again) == "completed", again
    assert second.backend.last_command is not None
    assert "--session" in second.backend.last_command
    sent = [json.loads(request_text(r)) for r in model_requests(server, since)]
    assert any(REMEMBERED in json.dumps(body.get("messages")) for body in sent), "the model never saw turn 1"
    assert second.backend.session_id == pi_session
    assert verify(second.stream()) == []
    assert_gone(second.backend.last_pid, "pi")


@pytest.mark.parametrize("ask", [False, True], ids=["json", "rpc"])
async def test_cancel_mid_text(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=ask)
    deltas = 0

    def cancel_on_third_delta(event: Event) -> None:
        nonlocal deltas
        if isinstance(event, TextDeltaEvent):
            deltas += 1
            if deltas == 3:
                assert session.runner.cancel()

    session.on_event = cancel_on_third_delta
    turn = await session.turn(SLOW_PROMPT)
    assert stop_of(turn) == "cancelled", turn
    assert deltas < 40, "the text went on streaming after the cancel"
    assert_gone(session.backend.last_pid, "pi")
    session.on_event = None
    after = await session.turn("hello")
    assert stop_of(after) == "completed", after
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


@pytest.mark.parametrize("answer", ["PostgreSQL", None], ids=["answered", "declined"])
async def test_question(tmp_path: Path, model_servers: ModelServers, answer: str | None) -> None:
    server = model_servers("pi")
    since = len(server.requests)
    session = _Session(tmp_path, server, ask=True, answer=answer)
    turn = await session.turn(ASK_PROMPT)
    assert len(session.asked) == 1, turn
    question = session.asked[0].questions[0]
    assert question.question == "Which database?"
    assert [option.label for option in question.options] == ["SQLite", "PostgreSQL"]
    starts = of_type(turn, ToolStartEvent)
    assert [s.tool for s in starts] == ["ask_user_question"], turn
    assert session.asked[0].call_id == starts[0].call_id
    assert stop_of(turn) == "completed", turn
    # The responder quotes the tool result the model was given back.
    sent = "\n".join(request_text(r) for r in model_requests(server, since))
    if answer is None:
        assert "declined to answer" in reply_text(turn), reply_text(turn)
    else:
        assert '"Which database?"="PostgreSQL"' in reply_text(turn), reply_text(turn)
        assert "PostgreSQL" in sent
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


@pytest.mark.parametrize("ask", [False, True], ids=["approvals", "approvals+questions"])
async def test_approved_touch_runs(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), gated=True, approve=True, ask=ask)
    turn = await session.turn(TOOL_PROMPT)
    starts = of_type(turn, ToolStartEvent)
    asked = of_type(turn, HitlRequestEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert len(asked) == 1, turn
    assert asked[0].call_id == starts[0].call_id
    assert asked[0].tool_name == "execute_command"
    assert asked[0].arguments == {"command": f"touch {TOOL_FILE}"}
    assert [e.success for e in of_type(turn, ToolEndEvent)] == [True], turn
    assert (session.project / TOOL_FILE).exists()
    assert reply_text(turn) == "MOCK_REPLY done", turn
    assert stop_of(turn) == "completed"
    assert session.backend.last_command is not None
    assert session.backend.last_command[1:3] == ["--mode", "rpc"]
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


async def test_rejected_touch_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("pi")
    since = len(server.requests)
    session = _Session(tmp_path, server, gated=True, approve=False)
    turn = await session.turn(TOOL_PROMPT)
    ends = of_type(turn, ToolEndEvent)
    assert len(of_type(turn, HitlRequestEvent)) == 1, turn
    assert [(e.success, e.refusal) for e in ends] == [(False, "rejected")], turn
    assert not (session.project / TOOL_FILE).exists()
    assert reply_text(turn) == "MOCK_REPLY done", turn
    assert stop_of(turn) == "completed"
    # The model read the rejection and its reason (Pi's blocked-call result).
    sent = [request_text(r) for r in model_requests(server, since)]
    assert any("The user rejected this call: not in this test" in text for text in sent), sent[-1][-2000:]
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "pi")


async def test_cancel_while_the_approval_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("pi"), gated=True)
    asked = session.cancel_when_asked(HitlRequestEvent)
    turn = await session.turn(TOOL_PROMPT)
    assert len(asked) == 1, turn
    assert stop_of(turn) == "cancelled", turn
    assert [e.success for e in of_type(turn, ToolEndEvent)] == [False], turn
    assert not (session.project / TOOL_FILE).exists()
    assert_gone(session.backend.last_pid, "pi")
    assert verify(session.stream()) == []


async def test_cancel_while_the_question_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=True)
    assert session.questions is not None
    asked = session.cancel_when_asked(QuestionRequestEvent)
    turn = await session.turn(ASK_PROMPT)
    assert len(asked) == 1, turn
    assert stop_of(turn) == "cancelled", turn
    # The question is closed with the turn: an answer arriving now settles nothing.
    late = QuestionResponseRequest(id=asked[0].id, answers={"Which database?": "SQLite"})
    assert session.questions.settle(late) is not None
    assert_gone(session.backend.last_pid, "pi")
    assert verify(session.stream()) == []


FORKED: Final = "MANGO-4861"
"""A word only the forked session's turn says: resuming the original must not send it."""


async def test_fork_copies_the_session_and_leaves_the_original(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("pi")
    original = _Session(tmp_path, server)
    assert stop_of(await original.turn(f"Remember the word {REMEMBERED}.")) == "completed"
    original_id = original.backend.session_id
    assert original_id is not None

    forked = _Session(tmp_path, server)
    forked.backend = PiBackend(
        forked.backend.spec, replace(forked.backend.options, resume=original_id, fork=True)
    )
    forked.runner = SessionRunner(forked.backend)
    since = len(server.requests)
    assert stop_of(await forked.turn(f"Now remember {FORKED} too.")) == "completed"
    assert forked.backend.last_command is not None
    assert forked.backend.last_command[forked.backend.last_command.index("--fork") + 1] == original_id
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text and FORKED in text for text in sent), "the fork never saw turn 1"
    fork_id = forked.backend.session_id
    assert fork_id is not None
    assert fork_id != original_id
    # A later turn of the fork continues the copy, without copying it again.
    assert stop_of(await forked.turn("And the second word?")) == "completed"
    assert "--fork" not in forked.backend.last_command
    assert forked.backend.last_command[forked.backend.last_command.index("--session") + 1] == fork_id
    assert forked.backend.session_id == fork_id

    since = len(server.requests)
    again = _Session(tmp_path, server, resume=original_id)
    assert stop_of(await again.turn("What was the word?")) == "completed"
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text for text in sent), "the original lost turn 1"
    assert not any(FORKED in text for text in sent), "the forked turn leaked into the original session"
    assert again.backend.session_id == original_id
    assert verify(forked.stream()) == []
    assert verify(again.stream()) == []
    assert_gone(forked.backend.last_pid, "pi")
    assert_gone(again.backend.last_pid, "pi")
