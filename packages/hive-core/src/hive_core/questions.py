"""Questions an agent asks its user mid-turn (``question_request``), and who answers them.

A :class:`QuestionService` takes one :class:`~hive_protocol.QuestionRequestEvent` and returns the answers
(question text to the chosen labels or free text), or ``None`` when the user declined, could not be asked, or did
not answer in time: like approvals, every way of not getting an answer is a decline. :class:`QuestionBridge`
asks the runner's client over the wire; the terminal's questioner lives in the CLI.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import anyio

from hive_protocol import QuestionRequestEvent, QuestionResponseRequest

from .tools import EventSink

__all__ = [
    "DEFAULT_QUESTION_TIMEOUT",
    "Answers",
    "QuestionBridge",
    "QuestionService",
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
    done: anyio.Event = field(default_factory=anyio.Event)
    answers: Answers | None = None


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
        """Settle the question ``response`` answers; ``False`` when none of that id waits."""
        wait = self._waits.get(response.id)
        if wait is None or wait.done.is_set():
            return False
        if response.answers is not None:
            wait.answers = {
                question: [value] if isinstance(value, str) else list(value)
                for question, value in response.answers.items()
            }
        wait.done.set()
        return True

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Publish ``request`` and wait for its answer, or the decline."""
        if self._emit is None:
            return None
        wait = _Wait()
        self._waits[request.id] = wait  # registered before publishing: the answer cannot outrun its wait
        try:
            self._emit(request)
            with anyio.move_on_after(question_deadline(self.timeout)):
                await wait.done.wait()
            return wait.answers
        finally:
            self._waits.pop(request.id, None)
