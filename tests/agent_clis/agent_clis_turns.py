"""Helpers for the tests that drive a coding-agent CLI's backend in process (Claude Code, Pi, Copilot, Codex,
OpenCode) against the scripted model server: a hive session on the backend (:class:`BackendSession`), the
services that answer it, and what the tests read from a turn's events.

Every wait is bounded (:data:`~agent_clis_harness.TIMEOUT`) and fails saying what it waited for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final
from typing import Generic
from typing import Protocol
from typing import TypeVar

import anyio
import msgspec
from agent_clis_harness import MODEL
from agent_clis_harness import TIMEOUT
from agent_clis_harness import owned_processes
from agent_clis_harness import require_cli
from agent_clis_harness import wait_until

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import ANSWERED_REPLY
from hive_conformance.model_server.agent_cli import QUESTION_OPTIONS
from hive_conformance.model_server.agent_cli import QUESTION_TEXT
from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import Verdict
from hive_core.backends import AgentBackend
from hive_core.hitl import HitlBridge
from hive_core.questions import QuestionBridge
from hive_core.runners import SessionRunner
from hive_protocol import PROTOCOL_VERSION
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import SessionStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint


class CliBackend(AgentBackend, Protocol):
    """A coding-agent CLI's backend, as these tests read it."""

    options: BackendOptions


B = TypeVar("B", bound=CliBackend)

REJECTED: Final = "not in this test"
"""The reason a :class:`BackendSession` gives the approvals it rejects."""

# Per CLI: its name in messages, and what its command line holds.
_PROCESSES: Final = {
    "claude": ("Claude Code", b"claude"),
    "pi": ("Pi", b"pi-coding-agent"),
    "copilot": ("Copilot", b"copilot"),
}


def offline_options(tmp: Path, server: ScriptedModelServer, cli: str, **more: Any) -> BackendOptions:
    """The options of backend ``cli`` working in ``tmp/project`` (made here), with ``tmp/home`` as its private
    home, pointed at ``server``; ``more`` adds to them."""
    project = tmp / "project"
    project.mkdir(exist_ok=True)
    return BackendOptions(
        cwd=project,
        model=MODEL,
        endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
        home=tmp / "home",
        executable=str(require_cli(cli)),
        cancel_grace=3.0,
        **more,
    )


class BackendSession(Generic[B]):
    """One hive session on ``backend``: its runner (with the bridges given), every event written since its
    ``session_started``, and hooks for what a turn asks: ``approve`` answers each ``hitl_request`` (``None``: the
    turn must ask nothing), ``on_question`` sees each ``question_request``, ``on_event`` every event."""

    def __init__(
        self,
        backend: B,
        *,
        session_id: str,
        bridge: HitlBridge | None = None,
        questions: QuestionBridge | None = None,
        approve: bool | None = None,
    ) -> None:
        self.backend = backend
        self.project = backend.options.cwd
        self.bridge = bridge
        self.questions = questions
        self.approve = approve
        self.runner = SessionRunner(backend, bridge=bridge, questions=questions)
        self.events: list[Event] = [
            SessionStartedEvent(session_id=session_id, protocol_version=PROTOCOL_VERSION)
        ]
        self.on_question: Callable[[QuestionRequestEvent], None] = lambda _: None
        self.on_event: Callable[[Event], None] | None = None
        for service in (bridge, questions):
            if service is not None:
                service.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, QuestionRequestEvent):
            self.on_question(event)
        if isinstance(event, HitlRequestEvent):
            assert self.bridge is not None
            assert self.approve is not None, f"the turn asked {event}"
            self.bridge.answer(HitlResponseRequest(id=event.id, approved=self.approve, reason=REJECTED))
        if self.on_event is not None:
            self.on_event(event)

    def cancel_when_asked(self, kind: type[Any]) -> list[Any]:
        """From now on answer nothing: cancel the turn as a request of type ``kind`` is published (before any
        answer); the requests seen."""
        asked: list[Any] = []

        def cancel_instead(event: Event) -> None:
            self.events.append(event)
            if isinstance(event, kind):
                asked.append(event)
                assert self.runner.cancel()

        for service in (self.bridge, self.questions):
            if service is not None:
                service.attach(cancel_instead)
        return asked

    def answer(self, event: QuestionRequestEvent, answers: dict[str, str | list[str]] | None) -> None:
        """Answer ``event`` on the wire, as a client's ``question_response`` does."""
        assert self.questions is not None
        assert self.questions.answer(QuestionResponseRequest(id=event.id, answers=answers))

    async def turn(self, prompt: str) -> list[Event]:
        """Run one turn; its events."""
        start = len(self.events)
        with anyio.fail_after(TIMEOUT):
            await self.runner.run_turn(UserMessageRequest(content=prompt), self._emit)
        return self.events[start:]

    def stream(self) -> list[bytes]:
        """Every event written, as the wire carries them (for :func:`hive_protocol.verify`)."""
        return [msgspec.json.encode(event) for event in self.events]


class AskEverything:
    """A policy that asks about every call: the approval service decides."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        return Verdict.ask(f"{tool_name} needs approval")

    def is_read_only(self, tool_name: str) -> bool:
        return False


class Approvals:
    """Answers every request ``approve`` (a rejection with ``reason``; ``None``: runs ``on_request`` and never
    answers), recording them."""

    def __init__(
        self, approve: bool | None, on_request: Callable[[], None] | None = None, *, reason: str | None = None
    ) -> None:
        self.approve = approve
        self.on_request = on_request
        self.reason = reason
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        if self.approve is not None:
            return ApprovalDecision(approved=self.approve, reason=None if self.approve else self.reason)
        if self.on_request is not None:
            self.on_request()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class CancelLater:
    """Cancels the turn of :attr:`runner`, set once the runner exists (the service that calls this is made first,
    to make the backend the runner drives)."""

    def __init__(self) -> None:
        self.runner: SessionRunner | None = None

    def __call__(self) -> None:
        assert self.runner is not None
        self.runner.cancel()


async def turn_events(
    runner: SessionRunner, prompt: str, sink: Callable[[Event], None] | None = None
) -> list[Event]:
    """The events of a turn of ``prompt`` on ``runner`` (each shown to ``sink`` too, as it is written)."""
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if sink is not None:
            sink(event)

    with anyio.fail_after(TIMEOUT):
        await runner.run_turn(UserMessageRequest(content=prompt), emit)
    return events


async def cancelled_at_first_text(runner: SessionRunner, prompt: str) -> list[Event]:
    """The events of a turn of ``prompt`` that ``runner`` cancels as the first text arrives."""
    texts = 0

    def cancel_at_first_text(event: Event) -> None:
        nonlocal texts
        if isinstance(event, TextDeltaEvent):
            texts += 1
            if texts == 1:
                runner.cancel()

    return await turn_events(runner, prompt, cancel_at_first_text)


def of_type(events: list[Event], kind: type[Any]) -> list[Any]:
    """The events of type ``kind``."""
    return [event for event in events if isinstance(event, kind)]


def end_of(events: list[Event]) -> TurnEndEvent:
    """The turn's ``turn_end``: its last event."""
    end = events[-1]
    assert isinstance(end, TurnEndEvent), events
    return end


def stop_of(events: list[Event]) -> str | None:
    """The turn's stop reason."""
    return end_of(events).stop_reason


def reply_text(events: list[Event]) -> str:
    """The text the turn streamed."""
    return "".join(event.content for event in of_type(events, TextDeltaEvent))


def checked(events: list[Event]) -> list[Event]:
    """``events``, one whole turn, once :func:`hive_protocol.verify` finds nothing wrong with them."""
    violations = verify(events, turns=1)
    assert violations == [], "\n".join(str(v) for v in violations)
    return events


def the_call(events: list[Event], tool: str | None = None) -> tuple[ToolStartEvent, ToolEndEvent]:
    """The one call of the turn (of ``tool``, when given): its start and its end."""
    [start] = [e for e in of_type(events, ToolStartEvent) if tool is None or e.tool == tool]
    [end] = [e for e in of_type(events, ToolEndEvent) if e.call_id == start.call_id]
    return start, end


def the_question(asked: list[QuestionRequestEvent]) -> QuestionRequestEvent:
    """The one ``question_request`` asked: the scripted model's "Which database?"."""
    assert len(asked) == 1, asked
    [question] = asked[0].questions
    assert question.question == QUESTION_TEXT
    assert [option.label for option in question.options] == list(QUESTION_OPTIONS)
    assert not question.multi_select
    return asked[0]


async def answer_the_question(
    session: BackendSession[Any], prompt: str, answers: dict[str, str | list[str]] | None
) -> tuple[list[Event], str]:
    """A turn of ``prompt`` whose one question (:func:`the_question`) gets ``answers`` on the wire; once it
    completed with the scripted model's reply to the tool's result, its events and what that reply quotes."""
    asked: list[QuestionRequestEvent] = []

    def answer(event: QuestionRequestEvent) -> None:
        asked.append(event)
        session.answer(event, answers)

    session.on_question = answer
    turn = await session.turn(prompt)
    the_question(asked)
    assert stop_of(turn) == "completed", turn
    reply = reply_text(turn)
    assert reply.startswith(ANSWERED_REPLY), turn
    return turn, reply.removeprefix(ANSWERED_REPLY)


def assert_gone(pid: int | None, cli: str) -> None:
    """The CLI process ``pid`` ended, and no process of ``cli`` carrying this test's owner mark is left."""
    name, command = _PROCESSES[cli]
    assert pid is not None
    wait_until(lambda: not _alive(pid), timeout=15.0, what=f"{name} ({pid}) to end")
    left = [p for p in owned_processes(os.getpid()) if p == pid or command in _command_line(p)]
    assert not left, f"{name} processes left: {left}"


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _command_line(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""
