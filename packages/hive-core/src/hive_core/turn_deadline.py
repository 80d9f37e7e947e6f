"""A turn's deadline that stops running while the agent waits for its user's answer.

A turn limited to ``--timeout`` seconds should not fail because somebody took ten minutes to pick an option: the
question has its own timeout. :class:`TurnDeadline` holds the running turn's cancel scope; while any
:meth:`~TurnDeadline.paused` block is open its deadline is lifted, and when the last one closes the turn gets back
exactly the time it had left. :class:`PausingQuestions` wraps any question service so each question pauses it.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from contextlib import contextmanager

import anyio

from hive_protocol import QuestionRequestEvent

from .questions import Answers
from .questions import QuestionService

__all__ = ["PausingQuestions", "TurnDeadline"]


class TurnDeadline:
    """The deadline of the turn a :class:`~hive_core.runners.SessionRunner` is running, pausable."""

    def __init__(self) -> None:
        self._scope: anyio.CancelScope | None = None
        self._holds = 0
        self._left: float | None = None

    @property
    def paused_now(self) -> bool:
        """Whether a pause is open (some question waits)."""
        return self._holds > 0

    @contextmanager
    def running(self, scope: anyio.CancelScope) -> Generator[None]:
        """Bind the running turn's ``scope`` while the block runs (the runner does this)."""
        self._scope = scope
        if self._holds:
            self._lift()
        try:
            yield
        finally:
            self._scope = None
            self._left = None

    @contextmanager
    def paused(self) -> Generator[None]:
        """Lift the deadline while the block runs; nested and concurrent pauses end with the last one."""
        self._holds += 1
        if self._holds == 1:
            self._lift()
        try:
            yield
        finally:
            self._holds -= 1
            if self._holds == 0:
                self._restore()

    def _lift(self) -> None:
        scope = self._scope
        if scope is None or math.isinf(scope.deadline):
            return
        self._left = max(0.0, scope.deadline - anyio.current_time())
        scope.deadline = math.inf

    def _restore(self) -> None:
        scope, left = self._scope, self._left
        self._left = None
        if scope is not None and left is not None:
            scope.deadline = anyio.current_time() + left


class PausingQuestions:
    """A :class:`~hive_core.questions.QuestionService` whose questions pause a :class:`TurnDeadline`."""

    def __init__(self, inner: QuestionService, deadline: TurnDeadline) -> None:
        self.inner = inner
        """The service that really asks."""
        self.deadline = deadline
        """The deadline paused while it waits."""

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Ask ``inner``, with the turn's deadline paused until the answer (or the decline) comes."""
        with self.deadline.paused():
            return await self.inner.ask(request)
