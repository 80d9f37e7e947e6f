"""Questions an agent asks its user mid-turn (``question_request``), and who answers them.

A :class:`QuestionService` takes one :class:`~hive_protocol.QuestionRequestEvent` and returns the answers
(question text to the chosen labels or free text), or ``None`` when the user declined, could not be asked, or did
not answer in time: like approvals, every way of not getting an answer is a decline. :class:`QuestionBridge`
asks the runner's client over the wire; the terminal's questioner lives in the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol
from typing import runtime_checkable

import anyio

from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest

from .tools import EventSink

__all__ = [
    "DEFAULT_QUESTION_TIMEOUT",
    "Answers",
    "QuestionBridge",
    "QuestionService",
    "answer_refusal",
    "question_deadline",
]

DEFAULT_QUESTION_TIMEOUT = 1800.0
"""Seconds a question waits for its answer before it counts as declined (30 minutes, as people take time)."""


def question_deadline(timeout: float | None) -> float:
    """The seconds ``anyio.move_on_after`` waits for an answer: ``timeout``, or forever for ``None`` or ``0``
    (and any value below it), the documented way to say "no limit"."""
    return math.inf if timeout is None or timeout <= 0 else timeout


Answers = dict[str, list[str]]
"""Question text to the chosen option labels, or to one free-text answer."""


@runtime_checkable
class QuestionService(Protocol):
    """Answers questions. Must fail closed: no answer is a decline (``None``), never an invented answer."""

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Wait for the answers to ``request``; ``None`` when they were declined or never came."""
        ...


@dataclass
class _Wait:
    request: QuestionRequestEvent
    done: anyio.Event = field(default_factory=anyio.Event)
    answers: Answers | None = None


def answer_refusal(request: QuestionRequestEvent, answers: Answers) -> str | None:
    """Why ``answers`` cannot answer ``request``, or ``None`` when they can.

    Every answered question must be one that was asked, with at least one value; only a multi-select question
    takes several; a value that is not an offered label is free text, accepted only where the question allows
    it (once). Questions left out stay unanswered, which the agent sees as such.
    """
    asked = {question.question: question for question in request.questions}
    for text, values in answers.items():
        question = asked.get(text)
        if question is None:
            return f"no question {_quote(text)} was asked in {request.id!r}"
        if not values:
            return f"the answer to {_quote(text)} is empty"
        if len(values) > 1 and not question.multi_select:
            return f"{_quote(text)} takes one answer, not {len(values)}"
        offered = {option.label for option in question.options}
        free = [value for value in values if value not in offered]
        if free and not question.allow_free_text:
            labels = ", ".join(_quote(label) for label in sorted(offered)) or "none"
            return f"{_quote(free[0])} is not an option of {_quote(text)} (offered: {labels})"
        if len(free) > 1:
            return f"{_quote(text)} takes one free-text answer, not {len(free)}"
    return None


def _quote(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")


class QuestionBridge:
    """Publishes ``question_request`` events through the attached sink and matches ``question_response`` to them.

    Wire it to a :class:`~hive_core.runners.SessionRunner` as its ``on_question`` (:meth:`answer`) and attach the
    runner's sink; the session runner does the attaching for a bridge given as its ``questions``.
    """

    def __init__(self, *, timeout: float | None = DEFAULT_QUESTION_TIMEOUT) -> None:
        self.timeout = timeout
        """Seconds a question waits for its answer; ``None`` or ``0`` waits as long as the turn runs."""
        self._emit: EventSink | None = None
        self._waits: dict[str, _Wait] = {}

    def attach(self, emit: EventSink) -> None:
        """Publish questions through ``emit`` from now on."""
        self._emit = emit

    def detach(self) -> None:
        """The client is gone: decline every waiting question and every later one."""
        self._emit = None
        for wait in self._waits.values():
            wait.done.set()

    def answer(self, response: QuestionResponseRequest) -> bool:
        """Settle the question ``response`` answers; ``False`` when none of that id waits or the answers were
        refused (see :meth:`settle`)."""
        return self.settle(response) is None

    def settle(self, response: QuestionResponseRequest) -> str | None:
        """Settle the question ``response`` answers, and say why not when it cannot.

        Returns ``None`` when it was settled. A response for an id nothing waits on changes nothing; answers that
        do not fit the questions (see :func:`answer_refusal`) decline the request, failing closed: the agent is
        told the user declined, the client is told why (the runner sends the reason as an ``error``).
        """
        wait = self._waits.get(response.id)
        if wait is None or wait.done.is_set():
            return f"no question {response.id!r} is waiting for an answer"
        refusal = None
        if response.answers is not None:
            answers = {
                question: [value] if isinstance(value, str) else list(value)
                for question, value in response.answers.items()
            }
            refusal = answer_refusal(wait.request, answers)
            if refusal is None:
                wait.answers = answers
        wait.done.set()
        return None if refusal is None else f"{refusal}: the question was declined"

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Publish ``request`` and wait for its answer, or the decline."""
        if self._emit is None:
            return None
        wait = _Wait(request)
        self._waits[request.id] = wait  # registered before publishing: the answer cannot outrun its wait
        try:
            self._emit(request)
            with anyio.move_on_after(question_deadline(self.timeout)):
                await wait.done.wait()
            return wait.answers
        finally:
            self._waits.pop(request.id, None)
