"""A question's own timeout: a question nobody answers is declined once it passes, and 0 waits without a limit.

A tiny processor asks one question through a :class:`~hive_core.questions.QuestionBridge` and says what it got;
the runner serves it over an in-memory wire, and the "user" answers the ``question_request`` late on purpose: the
delay is the thing measured, not a synchronisation.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from hive_core.questions import DEFAULT_QUESTION_TIMEOUT
from hive_core.questions import QuestionBridge
from hive_core.questions import answer_refusal
from hive_core.questions import question_deadline
from hive_core.runners import SessionRunner
from hive_core.tools import EventSink
from hive_core.turn_deadline import PausingQuestions
from hive_core.turn_deadline import TurnDeadline
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import Request
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio

QUESTION = Question(
    question="Which database?",
    multi_select=False,
    options=[QuestionOption(label="SQLite"), QuestionOption(label="PostgreSQL")],
    allow_free_text=False,
)
WAIT = 10.0
"""The bound on every test: far above what any of them takes."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def asking(bridge: QuestionBridge, *, before: float = 0.0, after: float = 0.0) -> Any:
    """A processor that works ``before`` seconds, asks :data:`QUESTION`, works ``after`` seconds and says what it
    was told (``declined`` for no answer)."""

    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        await anyio.sleep(before)
        answers = await bridge.ask(QuestionRequestEvent(id="q1", questions=[QUESTION]))
        await anyio.sleep(after)
        told = "declined" if answers is None else ",".join(answers[QUESTION.question])
        emit(TextDeltaEvent(content=told))

    return processor


async def serve(
    runner: SessionRunner,
    respond: Callable[[QuestionRequestEvent], QuestionResponseRequest | None],
    delay: float,
) -> tuple[list[Event], float]:
    """Serve one turn; each ``question_request`` is answered with ``respond(event)`` ``delay`` seconds later.
    Returns the events and the seconds the turn took."""
    events: list[Event] = []
    send, receive = anyio.create_memory_object_stream[Request](16)
    started = anyio.current_time()

    async def answer_later(event: QuestionRequestEvent) -> None:
        await anyio.sleep(delay)
        response = respond(event)
        if response is not None:
            with contextlib.suppress(anyio.ClosedResourceError):  # the turn may have ended without it
                await send.send(response)

    async def incoming() -> AsyncIterator[Request]:
        async with receive:
            async for request in receive:
                yield request

    async with anyio.create_task_group() as group:

        def emit(event: Event) -> None:
            events.append(event)
            if isinstance(event, QuestionRequestEvent):
                group.start_soon(answer_later, event)
            if isinstance(event, TurnEndEvent):
                send.close()

        with anyio.fail_after(WAIT):
            await send.send(UserMessageRequest(content="go"))
            await runner.serve(incoming(), emit)
    return events, anyio.current_time() - started


def sqlite(event: QuestionRequestEvent) -> QuestionResponseRequest:
    return QuestionResponseRequest(id=event.id, answers={QUESTION.question: "SQLite"})


def text(events: list[Event]) -> str:
    return "".join(event.content for event in events if isinstance(event, TextDeltaEvent))


def errors(events: list[Event]) -> list[ErrorEvent]:
    return [event for event in events if isinstance(event, ErrorEvent)]


async def test_a_question_nobody_answers_is_declined_after_its_own_timeout() -> None:
    bridge = QuestionBridge(timeout=0.2)
    runner = SessionRunner(asking(bridge), questions=bridge, turn_timeout=5.0)
    events, took = await serve(runner, lambda event: None, delay=0.0)
    assert text(events) == "declined"
    assert errors(events) == []
    assert 0.2 <= took < 2.0


@pytest.mark.parametrize("timeout", [0, None])
async def test_zero_or_none_waits_for_the_answer_as_long_as_it_takes(timeout: float | None) -> None:
    assert question_deadline(timeout) == math.inf
    bridge = QuestionBridge(timeout=timeout)
    runner = SessionRunner(asking(bridge), questions=bridge, turn_timeout=5.0)
    events, _ = await serve(runner, sqlite, delay=0.5)
    assert text(events) == "SQLite"
    assert errors(events) == []


def test_the_default_question_timeout_is_thirty_minutes() -> None:
    assert DEFAULT_QUESTION_TIMEOUT == 30 * 60
    assert QuestionBridge().timeout == DEFAULT_QUESTION_TIMEOUT
    assert question_deadline(DEFAULT_QUESTION_TIMEOUT) == DEFAULT_QUESTION_TIMEOUT


async def test_a_cancel_while_the_question_waits_ends_the_turn_and_closes_the_question() -> None:
    bridge = QuestionBridge()
    runner = SessionRunner(asking(bridge), questions=bridge, turn_timeout=0.5)
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if isinstance(event, QuestionRequestEvent):
            assert runner.cancel()

    bridge.attach(emit)  # run_turn alone attaches nothing (serve does)
    with anyio.fail_after(WAIT):
        await runner.run_turn(UserMessageRequest(content="go"), emit, timeout=0.5)
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "cancelled"
    assert not bridge.answer(QuestionResponseRequest(id="q1", answers={QUESTION.question: "SQLite"}))


def pausing(bridge: QuestionBridge, deadline: TurnDeadline, **work: float) -> Any:
    """:func:`asking`, with its question asked through :class:`PausingQuestions` over ``deadline``."""
    return asking(PausingQuestions(bridge, deadline), **work)  # type: ignore[arg-type]


async def test_a_question_pauses_the_turn_deadline_and_the_answer_restores_it() -> None:
    # The answer comes after twice the turn's timeout: only the pause lets the turn finish.
    bridge = QuestionBridge()
    deadline = TurnDeadline()
    runner = SessionRunner(
        pausing(bridge, deadline, before=0.05), questions=bridge, turn_timeout=0.3, deadline=deadline
    )
    events, took = await serve(runner, sqlite, delay=0.6)
    assert text(events) == "SQLite"
    assert errors(events) == []
    assert took >= 0.6
    assert not deadline.paused_now


async def test_without_the_pause_the_same_wait_times_the_turn_out() -> None:
    bridge = QuestionBridge()
    runner = SessionRunner(asking(bridge, before=0.05), questions=bridge, turn_timeout=0.3)
    events, _ = await serve(runner, sqlite, delay=0.6)
    assert [error.code for error in errors(events)] == ["timeout"]


async def test_a_stalled_agent_still_times_out_after_the_answer() -> None:
    # 0.2 s of work before the question and 0.3 s after it: 0.5 s of the turn's own time, over its 0.4 s.
    bridge = QuestionBridge()
    deadline = TurnDeadline()
    runner = SessionRunner(
        pausing(bridge, deadline, before=0.2, after=0.3),
        questions=bridge,
        turn_timeout=0.4,
        deadline=deadline,
    )
    events, _ = await serve(runner, sqlite, delay=0.5)
    assert text(events) == ""
    assert [error.code for error in errors(events)] == ["timeout"]


def test_pauses_nest_and_only_the_last_one_restores_the_deadline() -> None:
    async def main() -> None:
        deadline = TurnDeadline()
        with anyio.CancelScope(deadline=anyio.current_time() + 100) as scope, deadline.running(scope):
            with deadline.paused():
                with deadline.paused():
                    assert scope.deadline == math.inf
                assert scope.deadline == math.inf  # one question still waits
            assert 99 < scope.deadline - anyio.current_time() <= 100
            await anyio.lowlevel.checkpoint()  # the restored deadline is far away: nothing is cancelled
        with deadline.paused():  # no turn runs: nothing to pause, nothing breaks
            assert not scope.cancel_called

    anyio.run(main)


async def test_an_answer_to_an_unknown_id_is_an_error_and_the_question_still_waits() -> None:
    bridge = QuestionBridge()
    runner = SessionRunner(asking(bridge), questions=bridge)
    answers = iter([QuestionResponseRequest(id="nosuch", answers={QUESTION.question: "SQLite"})])

    def respond(event: QuestionRequestEvent) -> QuestionResponseRequest:
        return next(answers, None) or sqlite(event)

    events: list[Event] = []
    send, receive = anyio.create_memory_object_stream[Request](16)

    async def incoming() -> AsyncIterator[Request]:
        async with receive:
            async for request in receive:
                yield request

    def emit(event: Event) -> None:
        events.append(event)
        if isinstance(event, QuestionRequestEvent):
            send.send_nowait(respond(event))  # the wrong id first,
        if isinstance(event, ErrorEvent):
            send.send_nowait(
                sqlite(QuestionRequestEvent(id="q1", questions=[QUESTION]))
            )  # then the right one
        if isinstance(event, TurnEndEvent):
            send.close()

    with anyio.fail_after(WAIT):
        await send.send(UserMessageRequest(content="go"))
        await runner.serve(incoming(), emit)
    [error] = errors(events)
    assert error.code == "request_rejected"
    assert "'nosuch'" in error.message
    assert text(events) == "SQLite"


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ({QUESTION.question: "MySQL"}, "'MySQL' is not an option of 'Which database?'"),
        ({QUESTION.question: ["SQLite", "PostgreSQL"]}, "takes one answer, not 2"),
        ({QUESTION.question: []}, "is empty"),
        ({"Which colour?": "red"}, "no question 'Which colour?' was asked"),
    ],
)
async def test_answers_that_do_not_fit_decline_the_question_with_the_reason(
    answer: dict[str, Any], why: str
) -> None:
    bridge = QuestionBridge()
    runner = SessionRunner(asking(bridge), questions=bridge)
    events, _ = await serve(runner, lambda event: QuestionResponseRequest(id=event.id, answers=answer), 0.0)
    assert text(events) == "declined"  # fail closed: the agent is told the user declined
    [error] = errors(events)
    assert error.code == "request_rejected"
    assert why in error.message
    assert "declined" in error.message


def test_free_text_and_multi_select_answers_are_checked_against_what_the_question_allows() -> None:
    open_question = Question(
        question="Which features?",
        multi_select=True,
        options=[QuestionOption(label="auth"), QuestionOption(label="search")],
        allow_free_text=True,
    )
    request = QuestionRequestEvent(id="q2", questions=[open_question])
    assert answer_refusal(request, {"Which features?": ["auth", "search"]}) is None
    assert answer_refusal(request, {"Which features?": ["auth", "billing"]}) is None  # one free-text value
    assert answer_refusal(request, {"Which features?": ["billing", "export"]}) == (
        "'Which features?' takes one free-text answer, not 2"
    )
    assert answer_refusal(request, {}) is None  # unanswered questions stay unanswered
