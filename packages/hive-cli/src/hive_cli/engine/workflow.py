"""The session workflow: one per session, its id the session's id, alive as long as the session takes requests.

Requests arrive as the ``request`` signal (the protocol's JSON lines); a turn that asked a question reads its
answer with the ``question_answers`` query. A ``user_message`` starts a turn, run as one
activity (:mod:`hive_cli.engine.turns`) on whichever worker takes it; the activity heartbeats, so a worker that
dies is noticed within :data:`HEARTBEAT` and the turn runs again on another worker, which goes on from the turn's
last recorded step. A turn that asks for approval ends its activity: the workflow waits for the answers (days if
need be) holding no worker, then runs the turn on with them. ``cancel`` cancels the running activity (its turn
ends with ``turn_end``, stop reason ``cancelled``); ``shutdown`` ends the workflow once the queued turns ran. A long
session continues as new before its history grows past the engine's limit. A turn whose every try failed is
ended by a closing activity, which writes an ``error`` and the turn's ``turn_end``.

This module runs in the engine's workflow sandbox: it imports nothing of hive but its wire types.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from functools import partial
from typing import Final
from typing import cast

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError
from temporalio.exceptions import CancelledError

with workflow.unsafe.imports_passed_through():
    from .wire import SessionStart
    from .wire import TurnFailure
    from .wire import TurnInput
    from .wire import TurnOutcome

__all__ = ["END_TURN", "HEARTBEAT", "QUESTION_ANSWERS", "RUN_TURN", "WORKFLOW", "SessionWorkflow"]

WORKFLOW: Final = "HiveSession"
RUN_TURN: Final = "run_turn"
END_TURN: Final = "end_turn"
QUESTION_ANSWERS: Final = "question_answers"
HEARTBEAT: Final = timedelta(seconds=10)
"""How long a turn's worker may be silent before the engine gives the turn to another."""
_TURN_LIMIT: Final = timedelta(days=7)
_RETRY: Final = RetryPolicy(
    initial_interval=timedelta(milliseconds=500),
    backoff_coefficient=2.0,
    maximum_interval=timedelta(seconds=5),
    maximum_attempts=10,
)
_CLOSING: Final = RetryPolicy(maximum_interval=timedelta(seconds=30))
"""Ending a failed turn is retried until a worker manages it: without it the session's clients wait forever."""
_ANSWERS: Final = frozenset({"hitl_response"})


def _field(line: str, name: str) -> str | None:
    """A string field of a request line (``None`` when the line is not an object or the field not a string)."""
    try:
        value: object = json.loads(line)
    except ValueError:
        return None
    found = cast("dict[str, object]", value).get(name) if isinstance(value, dict) else None
    return found if isinstance(found, str) else None


def _kind(line: str) -> str:
    return _field(line, "type") or ""


def _answer_id(line: str) -> str | None:
    return _field(line, "id")


@workflow.defn(name=WORKFLOW)
class SessionWorkflow:
    """See the module's documentation."""

    def __init__(self) -> None:
        self.inbox: list[str] = []
        self.closed = False
        self.cancel_requested = False

    @workflow.signal
    def request(self, line: str) -> None:
        """One request line from a front end."""
        kind = _kind(line)
        if kind == "cancel":
            self.cancel_requested = True
        elif kind == "shutdown":
            self.closed = True
        else:
            self.inbox.append(line)

    @workflow.query(name=QUESTION_ANSWERS)
    def question_answers(self) -> list[str]:
        """The ``question_response`` lines received: a running turn that asked a question reads its answer here."""
        return [line for line in self.inbox if _kind(line) == "question_response"]

    @workflow.run
    async def run(self, start: SessionStart) -> None:
        """Serve the session until its input closes and its turns ran."""
        self.inbox = [*start.inbox, *self.inbox]
        turns = start.turns
        while True:
            await workflow.wait_condition(lambda: bool(self.inbox) or self.closed)
            if not self.inbox:
                return
            line = self.inbox.pop(0)
            if _kind(line) != "user_message":
                continue  # an answer or a note with no turn waiting for it: front ends refuse those first
            turns += 1
            self.cancel_requested = False
            outcome = await self._run(TurnInput(start.spec, turns, message=line))
            while outcome.waiting:
                waiting = set(outcome.waiting)
                await workflow.wait_condition(partial(self._answered_or_cancelled, waiting))
                answers = self._answers(waiting) or []
                for answer in answers:
                    self.inbox.remove(answer)
                cancel = self.cancel_requested and not answers
                self.cancel_requested = False  # taken: the resumed turn is cancelled as it starts
                outcome = await self._run(TurnInput(start.spec, turns, answers=answers, cancel=cancel))
            # A question's answer was read by its turn; one that came too late answers nothing.
            self.inbox = [line for line in self.inbox if _kind(line) != "question_response"]
            if workflow.info().is_continue_as_new_suggested():
                workflow.continue_as_new(SessionStart(start.spec, turns, self.inbox))

    def _answered_or_cancelled(self, waiting: set[str]) -> bool:
        return self.cancel_requested or self._answers(waiting) is not None

    def _answers(self, waiting: set[str]) -> list[str] | None:
        """The inbox's answers once every waiting approval has one (an answer without an id answers the one
        approval that waits)."""
        found: list[str] = []
        answered: set[str] = set()
        for line in self.inbox:
            if _kind(line) not in _ANSWERS:
                continue
            answer = _answer_id(line)
            if answer is None and len(waiting) == 1:
                answer = next(iter(waiting))
            if answer in waiting and answer not in answered:
                answered.add(answer)
                found.append(line)
        return found if answered == waiting else None

    async def _run(self, turn: TurnInput) -> TurnOutcome:
        handle = workflow.start_activity(
            RUN_TURN,
            turn,
            result_type=TurnOutcome,
            start_to_close_timeout=_TURN_LIMIT,
            heartbeat_timeout=HEARTBEAT,
            retry_policy=_RETRY,
            cancellation_type=workflow.ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
        )
        await workflow.wait_condition(lambda: handle.done() or self.cancel_requested)
        if not handle.done():
            self.cancel_requested = False
            handle.cancel()
        try:
            return await handle
        except ActivityError as failed:
            if isinstance(failed.cause, CancelledError):
                # Cancelled before a worker took it (a running turn takes its cancel and ends it itself): the turn
                # is run to be cancelled as it starts, so that it ends the protocol's way, with its turn_end.
                return await self._run(dataclasses.replace(turn, cancel=True))
            # Every try failed: the turn is given up, and its clients told so with an error and its turn_end.
            reason = str(failed.cause) if failed.cause is not None else str(failed)
            await workflow.execute_activity(
                END_TURN,
                TurnFailure(turn.spec, turn.turn, reason),
                start_to_close_timeout=timedelta(minutes=1),
                retry_policy=_CLOSING,
            )
            return TurnOutcome()
