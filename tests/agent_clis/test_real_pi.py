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
import os
from collections.abc import Callable
from dataclasses import replace
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
from hive_core.hitl import HitlBridge
from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner
from hive_protocol import (
    PROTOCOL_VERSION,
    Event,
    HitlRequestEvent,
    HitlResponseRequest,
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
from hive_providers.backends.pi import PiBackend
from hive_providers.backends.registry import resolve_backend
from hive_providers.backends.specs import BackendOptions, ModelEndpoint

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

REMEMBERED: Final = "PINEAPPLE-7319"
"""A word the first turn says and the resumed turn's model request must carry."""
ASK_PROMPT: Final = "ASKME go"
"""A prompt the responder answers with a call to the question tool (``Which database?``)."""


class _Session:
    """One hive session on Pi: the backend, its runner and question bridge, and every event written."""

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
        self.project = tmp / "project"
        self.project.mkdir(exist_ok=True)
        self.answer = answer
        self.questions = QuestionBridge(timeout=TIMEOUT) if ask else None
        self.asked: list[QuestionRequestEvent] = []
        self.approve = approve
        self.bridge = HitlBridge(timeout=TIMEOUT) if gated else None
        self.backend = PiBackend(
            resolve_backend("pi"),
            BackendOptions(
                cwd=self.project,
                model=MODEL,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
                home=tmp / "home",
                executable=str(require_cli("pi")),
                questions=self.questions,
                approvals=self.bridge,
                resume=resume,
                cancel_grace=3.0,
            ),
        )
        self.runner = SessionRunner(self.backend, bridge=self.bridge, questions=self.questions)
        self.events: list[Event] = [
            SessionStartedEvent(session_id="pi-test", protocol_version=PROTOCOL_VERSION)
        ]
        self.on_event: Callable[[Event], None] | None = None
        if self.questions is not None:
            self.questions.attach(self._emit)
        if self.bridge is not None:
            self.bridge.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, QuestionRequestEvent):
            assert self.questions is not None
            self.asked.append(event)
            answers: dict[str, list[str] | str] | None = (
                None if self.answer is None else {event.questions[0].question: self.answer}
            )
            self.questions.answer(QuestionResponseRequest(id=event.id, answers=answers))
        if isinstance(event, HitlRequestEvent):
            assert self.bridge is not None
            assert self.approve is not None, f"the turn asked {event}"
            self.bridge.answer(
                HitlResponseRequest(id=event.id, approved=self.approve, reason="not in this test")
            )
        if self.on_event is not None:
            self.on_event(event)

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
    wait_until(lambda: not _alive(pid), timeout=15.0, what=f"Pi ({pid}) to end")
    left = [p for p in owned_processes(os.getpid()) if p == pid or _is_pi(p)]
    assert not left, f"Pi processes left: {left}"


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _is_pi(pid: int) -> bool:
    try:
        return b"pi-coding-agent" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("ask", [False, True], ids=["json", "rpc"])
async def test_text_turn(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=ask)
    turn = await session.turn("hello")
    assert _text(turn) == "MOCK_REPLY ok", turn
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
    _assert_gone(session.backend.last_pid)


@pytest.mark.parametrize("ask", [False, True], ids=["json", "rpc"])
async def test_tool_runs_unasked(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=ask)
    turn = await session.turn(TOOL_PROMPT)
    starts = _of(turn, ToolStartEvent)
    ends = _of(turn, ToolEndEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert starts[0].input == {"command": f"touch {TOOL_FILE}"}
    assert [(e.call_id, e.success) for e in ends] == [(starts[0].call_id, True)], turn
    assert (session.project / TOOL_FILE).exists()
    assert _text(turn) == "MOCK_REPLY done", turn
    assert _stop(turn) == "completed"
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_resume_continues_the_cli_session(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("pi")
    first = _Session(tmp_path, server)
    turn = await first.turn(f"Remember the word {REMEMBERED}.")
    assert _stop(turn) == "completed", turn
    pi_session = first.backend.session_id
    assert pi_session is not None
    since = len(server.requests)
    second = _Session(tmp_path, server, resume=pi_session)
    again = await second.turn("What was the word?")
    assert _stop(again) == "completed", again
    assert second.backend.last_command is not None
    assert "--session" in second.backend.last_command
    sent = [json.loads(request_text(r)) for r in model_requests(server, since)]
    assert any(REMEMBERED in json.dumps(body.get("messages")) for body in sent), "the model never saw turn 1"
    assert second.backend.session_id == pi_session
    assert verify(second.stream()) == []
    _assert_gone(second.backend.last_pid)


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
    assert _stop(turn) == "cancelled", turn
    assert deltas < 40, "the text went on streaming after the cancel"
    _assert_gone(session.backend.last_pid)
    session.on_event = None
    after = await session.turn("hello")
    assert _stop(after) == "completed", after
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


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
    starts = _of(turn, ToolStartEvent)
    assert [s.tool for s in starts] == ["ask_user_question"], turn
    assert session.asked[0].call_id == starts[0].call_id
    assert _stop(turn) == "completed", turn
    # The responder quotes the tool result the model was given back.
    sent = "\n".join(request_text(r) for r in model_requests(server, since))
    if answer is None:
        assert "declined to answer" in _text(turn), _text(turn)
    else:
        assert '"Which database?"="PostgreSQL"' in _text(turn), _text(turn)
        assert "PostgreSQL" in sent
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


@pytest.mark.parametrize("ask", [False, True], ids=["approvals", "approvals+questions"])
async def test_approved_touch_runs(tmp_path: Path, model_servers: ModelServers, ask: bool) -> None:
    session = _Session(tmp_path, model_servers("pi"), gated=True, approve=True, ask=ask)
    turn = await session.turn(TOOL_PROMPT)
    starts = _of(turn, ToolStartEvent)
    asked = _of(turn, HitlRequestEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert len(asked) == 1, turn
    assert asked[0].call_id == starts[0].call_id
    assert asked[0].tool_name == "execute_command"
    assert asked[0].arguments == {"command": f"touch {TOOL_FILE}"}
    assert [e.success for e in _of(turn, ToolEndEvent)] == [True], turn
    assert (session.project / TOOL_FILE).exists()
    assert _text(turn) == "MOCK_REPLY done", turn
    assert _stop(turn) == "completed"
    assert session.backend.last_command is not None
    assert session.backend.last_command[1:3] == ["--mode", "rpc"]
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_rejected_touch_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("pi")
    since = len(server.requests)
    session = _Session(tmp_path, server, gated=True, approve=False)
    turn = await session.turn(TOOL_PROMPT)
    ends = _of(turn, ToolEndEvent)
    assert len(_of(turn, HitlRequestEvent)) == 1, turn
    assert [(e.success, e.refusal) for e in ends] == [(False, "rejected")], turn
    assert not (session.project / TOOL_FILE).exists()
    assert _text(turn) == "MOCK_REPLY done", turn
    assert _stop(turn) == "completed"
    # The model read the rejection and its reason (Pi's blocked-call result).
    sent = [request_text(r) for r in model_requests(server, since)]
    assert any("The user rejected this call: not in this test" in text for text in sent), sent[-1][-2000:]
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_cancel_while_the_approval_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("pi"), gated=True)
    assert session.bridge is not None
    asked: list[HitlRequestEvent] = []

    def cancel_instead(event: Event) -> None:  # answers nothing: cancels as the request is published
        session.events.append(event)
        if isinstance(event, HitlRequestEvent):
            asked.append(event)
            assert session.runner.cancel()

    session.bridge.attach(cancel_instead)
    turn = await session.turn(TOOL_PROMPT)
    assert len(asked) == 1, turn
    assert _stop(turn) == "cancelled", turn
    assert [e.success for e in _of(turn, ToolEndEvent)] == [False], turn
    assert not (session.project / TOOL_FILE).exists()
    _assert_gone(session.backend.last_pid)
    assert verify(session.stream()) == []


async def test_cancel_while_the_question_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("pi"), ask=True)
    assert session.questions is not None
    asked: list[QuestionRequestEvent] = []

    def cancel_instead(event: Event) -> None:  # answers nothing: cancels as the question is published
        session.events.append(event)
        if isinstance(event, QuestionRequestEvent):
            asked.append(event)
            assert session.runner.cancel()

    session.questions.attach(cancel_instead)
    turn = await session.turn(ASK_PROMPT)
    assert len(asked) == 1, turn
    assert _stop(turn) == "cancelled", turn
    # The question is closed with the turn: an answer arriving now settles nothing.
    late = QuestionResponseRequest(id=asked[0].id, answers={"Which database?": "SQLite"})
    assert session.questions.settle(late) is not None
    _assert_gone(session.backend.last_pid)
    assert verify(session.stream()) == []


FORKED: Final = "MANGO-4861"
"""A word only the forked session's turn says: resuming the original must not send it."""


async def test_fork_copies_the_session_and_leaves_the_original(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("pi")
    original = _Session(tmp_path, server)
    assert _stop(await original.turn(f"Remember the word {REMEMBERED}.")) == "completed"
    original_id = original.backend.session_id
    assert original_id is not None

    forked = _Session(tmp_path, server)
    forked.backend = PiBackend(
        forked.backend.spec, replace(forked.backend.options, resume=original_id, fork=True)
    )
    forked.runner = SessionRunner(forked.backend)
    since = len(server.requests)
    assert _stop(await forked.turn(f"Now remember {FORKED} too.")) == "completed"
    assert forked.backend.last_command is not None
    assert forked.backend.last_command[forked.backend.last_command.index("--fork") + 1] == original_id
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text and FORKED in text for text in sent), "the fork never saw turn 1"
    fork_id = forked.backend.session_id
    assert fork_id is not None
    assert fork_id != original_id
    # A later turn of the fork continues the copy, without copying it again.
    assert _stop(await forked.turn("And the second word?")) == "completed"
    assert "--fork" not in forked.backend.last_command
    assert forked.backend.last_command[forked.backend.last_command.index("--session") + 1] == fork_id
    assert forked.backend.session_id == fork_id

    since = len(server.requests)
    again = _Session(tmp_path, server, resume=original_id)
    assert _stop(await again.turn("What was the word?")) == "completed"
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text for text in sent), "the original lost turn 1"
    assert not any(FORKED in text for text in sent), "the forked turn leaked into the original session"
    assert again.backend.session_id == original_id
    assert verify(forked.stream()) == []
    assert verify(again.stream()) == []
    _assert_gone(forked.backend.last_pid)
    _assert_gone(again.backend.last_pid)
