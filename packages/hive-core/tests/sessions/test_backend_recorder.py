"""A session served by a coding-agent backend is recorded: the request, the user's and the assistant's text, the
turn's end, and the CLI's own session id whenever it changes (what ``-c`` and ``-r`` resume); and a session
runner publishes a backend's questions and routes their answers through its question bridge."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from core_harness import Wire
from core_harness import one_question

from hive_core import SessionRunner
from hive_core.backends import BackendProbe
from hive_core.execution_log import ToolRecord
from hive_core.execution_log import TurnEndRecord
from hive_core.execution_log import record_kind
from hive_core.questions import QuestionBridge
from hive_core.questions import QuestionService
from hive_core.sessions import BackendRecorder
from hive_core.sessions import BackendSession
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import execution_log
from hive_core.sessions import last_backend_session
from hive_core.tools import EventSink
from hive_core.turn_request import TurnRequest
from hive_protocol import ContextUpdateRequest
from hive_protocol import ErrorEvent
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify

pytestmark = pytest.mark.anyio


class ScriptedBackend:
    """A backend whose turns say ``replies`` in two pieces, with one tool call, in the CLI session ``sessions[i]``."""

    name = "fake-cli"

    def __init__(
        self, sessions: list[str], *, fail: Exception | None = None, questions: QuestionService | None = None
    ) -> None:
        self.sessions = sessions
        self.fail = fail
        self.questions = questions
        self.turns = 0
        self.answers: list[dict[str, list[str]] | None] = []
        self._session: str | None = None

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        self._session = self.sessions[min(self.turns, len(self.sessions) - 1)]
        self.turns += 1
        if self.questions is not None:
            self.answers.append(await self.questions.ask(_question()))
        emit(ToolStartEvent(call_id="c1", tool="read_file", input={"path": "a.txt"}))
        emit(ToolEndEvent(call_id="c1", tool="read_file", success=True, output="text of a"))
        emit(TextDeltaEvent(content="You said: "))
        if self.fail is not None:
            raise self.fail
        emit(TextDeltaEvent(content=request.content))
        emit(TurnEndEvent(stop_reason="completed", input_tokens=3, output_tokens=4))

    async def probe(self) -> BackendProbe:
        return BackendProbe(name=self.name, installed=True)

    @property
    def session_id(self) -> str | None:
        return self._session

    async def aclose(self) -> None:
        pass


def _question() -> QuestionRequestEvent:
    return one_question("q-1", "Which file?", ["a.txt", "b.txt"], free_text=True)


def _store(tmp_path: Path) -> tuple[SqliteSessionStore, str]:
    store = SqliteSessionStore(tmp_path / "sessions.db")
    info = store.create(project_path=tmp_path, provider="fake-cli")
    return store, info.id


async def test_a_backend_turn_is_recorded_with_the_cli_session(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        backend = ScriptedBackend(["cli-1"])
        runner = SessionRunner(BackendRecorder(backend, store, sid), session_id=sid)
        events = await Wire(runner).run(
            UserMessageRequest(content="hello"), UserMessageRequest(content="again")
        )
        assert verify(events) == []

        entries = store.entries(sid)
        kinds = [entry.kind for entry in entries]
        assert kinds == [
            "turn_start",
            "message",
            "backend_session",
            "tool_end",
            "tool",
            "message",
            "turn_end",
            "turn_start",
            "message",
            "tool_end",
            "tool",
            "message",
            "turn_end",
        ]
        assert entries[0].payload == TurnRequest(content="hello")
        assert entries[2].payload == BackendSession(backend="fake-cli", session_id="cli-1")
        texts = [(e.payload.role, e.payload.text) for e in entries if e.kind == "message"]  # type: ignore[union-attr]
        assert texts == [
            ("user", "hello"),
            ("assistant", "You said: hello"),
            ("user", "again"),
            ("assistant", "You said: again"),
        ]
        assert last_backend_session(entries) == BackendSession(backend="fake-cli", session_id="cli-1")
        info = store.get(sid)
        assert info is not None
        assert (info.first_message, info.message_count) == ("hello", 4)
        # The execution log: the CLI's call timed from its tool_start to its tool_end, each turn's start and end.
        log = list(execution_log(entries))
        assert [record_kind(r) for r in log] == ["turn_start", "tool", "turn_end"] * 2
        tool = log[1]
        assert isinstance(tool, ToolRecord)
        assert (tool.name, tool.call_id, tool.outcome) == ("read_file", "c1", "ok")
        assert tool.duration_ms >= 0
        end = log[2]
        assert isinstance(end, TurnEndRecord)
        assert (end.stop_reason, end.input_tokens, end.output_tokens, end.error) == ("completed", 3, 4, None)


async def test_a_working_path_stays_in_the_turn_start_not_in_the_users_message(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        backend = ScriptedBackend(["cli-1"])
        runner = SessionRunner(BackendRecorder(backend, store, sid), session_id=sid)
        await Wire(runner).run(
            ContextUpdateRequest(working_path="/home/user/project"), UserMessageRequest(content="hello")
        )
        entries = store.entries(sid)
        assert entries[0].payload == TurnRequest(content="hello", working_path="/home/user/project")
        # What the CLI was sent, and what a listing and ``hive sessions show`` show: no [WorkingPath: …] prefix.
        assert (entries[1].payload.role, entries[1].payload.text) == ("user", "hello")  # type: ignore[union-attr]


async def test_a_new_cli_session_is_recorded_again_and_a_resumed_one_is_not(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        backend = ScriptedBackend(["cli-1", "cli-2"])
        recorder = BackendRecorder(backend, store, sid, resumed="cli-1")
        await Wire(SessionRunner(recorder, session_id=sid)).run(
            UserMessageRequest(content="one"), UserMessageRequest(content="two")
        )
        recorded = [e.payload for e in store.entries(sid) if e.kind == "backend_session"]
        assert recorded == [BackendSession(backend="fake-cli", session_id="cli-2")]
        assert last_backend_session(store.entries(sid)) == BackendSession(
            backend="fake-cli", session_id="cli-2"
        )


async def test_a_failing_backend_turn_records_its_text_error_and_end(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        backend = ScriptedBackend(["cli-1"], fail=ConnectionError("the CLI went away"))
        events = await Wire(SessionRunner(BackendRecorder(backend, store, sid), session_id=sid)).run(
            UserMessageRequest(content="hello")
        )
        assert verify(events) == []
        assert next(e for e in events if isinstance(e, ErrorEvent)).code == "network"
        entries = store.entries(sid)
        assert [e.kind for e in entries][-3:] == ["message", "error", "turn_end"]
        assert entries[-3].payload.text == "You said: "  # type: ignore[union-attr]
        assert entries[-2].payload == ErrorEvent(message="the CLI went away", code="network")


async def test_a_cancelled_backend_turn_ends_cancelled_in_the_log(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        started = anyio.Event()

        class Hanging(ScriptedBackend):
            async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
                self._session = "cli-9"
                emit(TextDeltaEvent(content="working"))
                started.set()
                await anyio.sleep_forever()

        runner = SessionRunner(BackendRecorder(Hanging([]), store, sid), session_id=sid)
        wire = Wire(runner)
        async with wire.running():
            wire.send(UserMessageRequest(content="long job"))
            with anyio.fail_after(5):
                await started.wait()
            assert runner.cancel()
            end = await wire.wait_for(TurnEndEvent)
        assert end.stop_reason == "cancelled"
        entries = store.entries(sid)
        assert [e.kind for e in entries] == [
            "turn_start",
            "message",
            "backend_session",
            "message",
            "turn_end",
        ]
        assert entries[-1].payload == TurnEndEvent(stop_reason="cancelled")


async def test_the_runner_publishes_questions_and_routes_answers_to_its_bridge(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        bridge = QuestionBridge()
        backend = ScriptedBackend(["cli-1"], questions=bridge)
        runner = SessionRunner(BackendRecorder(backend, store, sid), session_id=sid, questions=bridge)

        def react(event: object, wire: Wire) -> None:
            if isinstance(event, QuestionRequestEvent):
                wire.send(QuestionResponseRequest(id=event.id, answers={"Which file?": "b.txt"}))

        wire = Wire(runner, react=react)
        async with wire.running():  # the input stays open for the answer
            wire.send(UserMessageRequest(content="pick"))
            await wire.wait_for(TurnEndEvent)
        events = wire.events
        assert verify(events) == []
        assert [e for e in events if isinstance(e, QuestionRequestEvent)] == [_question()]
        assert backend.answers == [{"Which file?": ["b.txt"]}]


async def test_questions_are_declined_once_the_client_is_gone(tmp_path: Path) -> None:
    store, sid = _store(tmp_path)
    with store:
        bridge = QuestionBridge()
        runner = SessionRunner(
            BackendRecorder(ScriptedBackend(["cli-1"]), store, sid), session_id=sid, questions=bridge
        )
        await Wire(runner).run()
        assert await bridge.ask(_question()) is None
