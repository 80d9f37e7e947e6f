"""A question's own timeout: a question nobody answers is declined once it passes, and 0 waits without a limit.

A tiny processor asks one question through a :class:`~hive_core.questions.QuestionBridge` and says what it got;
the runner serves it over an in-memory wire, and the "user" answers the ``question_request`` late on purpose: the
delay is the thing measured, not a synchronisation.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import pytest

from hive_core.questions import DEFAULT_QUESTION_TIMEOUT, QuestionBridge, question_deadline
from hive_core.runners import SessionRunner
from hive_core.tools import EventSink
from hive_protocol import (
    ErrorEvent,
    Event,
    Question,
    QuestionOption,
    QuestionRequestEvent,
    QuestionResponseRequest,
    Request,
    TextDeltaEvent,
    TurnEndEvent,
    UserMessageRequest,
)

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
