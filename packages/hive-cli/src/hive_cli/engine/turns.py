"""A turn on a ``hive worker``: the activity the session workflow schedules for each turn.

The turn runs in the worker's own process, as ``hive serve`` runs its sessions, over the shared store: the session
is opened from its log (as ``hive run --server`` would open it after a crash), and every model round, tool outcome
and approval wait is recorded there as it happens. That is what makes a turn survive its worker: a worker that dies
takes the turn with it, and the engine runs the turn again on another worker, which opens the session from the
log: a completed round is not asked again, a completed tool call is not run again, and the model is told to go on
from there. A turn that asks for approval is left the same way, on purpose: once the wait is recorded the turn is
stopped with its store writing nothing more (:class:`ParkableStore`), so the log holds it suspended with its wait
open; the activity returns, and no worker is held while a human decides. The next activity opens the session,
which resumes the suspended turn, and is given the answers.

Every event the turn writes goes to the shared event log (:class:`~hive_cli.serve.shared_log.SharedServeLog`),
whose front ends stream it to the clients. Positions are the log's, so a turn run again continues the numbering;
what is sent again on resuming (``session_started``, an approval request the clients already have) is not logged
twice.
"""

from __future__ import annotations

import asyncio  # noqa: TID251 - the engine cancels an activity by cancelling its asyncio task (see run_turn)
import contextlib
import json
import math
import os
import socket
import sys
import traceback
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Final
from typing import Literal

import anyio
from anyio.streams.memory import MemoryObjectSendStream
from temporalio import activity
from temporalio.exceptions import ApplicationError

from hive_cli.assemble import HostOptions
from hive_cli.errors import USER_ERRORS
from hive_cli.serve.shared_log import SharedServeLog
from hive_cli.serving import open_server_session
from hive_core.sessions import EntryPayload
from hive_core.sessions import SessionStatus
from hive_core.sessions import SessionStore
from hive_core.sessions import replay
from hive_core.sessions.postgres import PostgresSessionStore
from hive_core.turn_request import TurnRequest
from hive_protocol import CancelRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import FallbackEvent
from hive_protocol import HitlRequestEvent
from hive_protocol import QuestionRequestEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import encode

from .wire import SessionSpec
from .wire import TurnFailure
from .wire import TurnInput
from .wire import TurnOutcome
from .workflow import END_TURN
from .workflow import QUESTION_ANSWERS
from .workflow import RUN_TURN

__all__ = ["WORKER_LOST_NOTE", "TurnActivities"]

WORKER_LOST_NOTE: Final = (
    "[the worker running this turn stopped; the steps above were recorded before it did. Continue the task from "
    "there.]"
)
"""The user message that lets the model go on with a turn whose worker died."""

_MAX_ATTEMPTS: Final = 10  # the workflow's retry policy's
_FLUSH_SECONDS: Final = 0.05
_HEARTBEAT_SECONDS: Final = 1.0
_STREAMED: Final = (b'{"type":"text_delta"', b'{"type":"thinking_delta"')
_TURN_END: Final = b'{"type":"turn_end"'

TurnState = Literal["new", "ended", "interrupted", "suspended"]


def turn_state(store: SessionStore, session_id: str, turn: int) -> tuple[TurnState, TurnEndEvent | None]:
    """Where the session's log stands with its ``turn``-th turn (not begun, ended, or begun and never ended, with
    or without an approval waiting), and the ``turn_end`` it recorded last."""
    if store.get(session_id) is None:
        return "new", None
    entries = store.entries(session_id)
    last_end = next(
        (entry.payload for entry in reversed(entries) if isinstance(entry.payload, TurnEndEvent)), None
    )
    begun = sum(1 for entry in entries if isinstance(entry.payload, TurnRequest))
    if begun < turn:
        return "new", last_end
    last = replay(entries).last_turn
    return (
        "suspended" if last == "suspended" else "interrupted" if last == "interrupted" else "ended"
    ), last_end


@dataclass
class _Writer:
    """The turn's events on their way to the shared log: streamed deltas in batches, anything else at once."""

    log: SharedServeLog
    session_id: str
    asked: set[str] = field(default_factory=set[str])
    """The approval and question requests the log holds (a resumed turn sends them again)."""
    begun: bool = False
    """Whether the log holds any event (a later ``session_started`` is not news)."""
    open: bool = False
    """Whether the log's last turn has events and no ``turn_end`` yet."""
    pending: list[bytes] = field(default_factory=list[bytes])

    def take(self, line: bytes) -> bytes | None:
        """Queue one event line the process wrote; the line when it needs writing at once."""
        if line.startswith(b'{"type":"session_started"'):
            if self.begun:
                return None
        elif line.startswith((b'{"type":"hitl_request"', b'{"type":"question_request"')):
            request_id = json.loads(line).get("id")
            if request_id in self.asked:
                return None
            self.asked.add(request_id)
        self.begun = True
        if line.startswith(_TURN_END):
            self.open = False
        elif not line.startswith((b'{"type":"error"', b'{"type":"session_started"')):
            self.open = True
        self.pending.append(line)
        return None if line.startswith(_STREAMED) else line

    def emit(self, event: Event) -> None:
        """Queue an event the activity writes itself."""
        self.take(encode(event).rstrip(b"\n"))

    async def flush(self) -> None:
        if self.pending:
            lines, self.pending = self.pending, []
            await anyio.to_thread.run_sync(self.log.append, self.session_id, lines)


@dataclass
class _Control:
    cancel: bool = False
    """Set when the engine cancels the activity: the turn is to be cancelled."""
    store: ParkableStore | None = None
    """The turn's store, once it runs."""


class TurnActivities:
    """The activities a ``hive worker`` runs, over its store and shared event log."""

    def __init__(
        self,
        store: PostgresSessionStore,
        log: SharedServeLog,
        *,
        worker: str | None = None,
    ) -> None:
        self.store = store
        self.log = log
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}"
        """The worker's name, as messages give it."""

    @activity.defn(name=RUN_TURN)
    async def run_turn(self, turn: TurnInput) -> TurnOutcome:
        """Run (or go on with) one turn; see the module's documentation."""
        try:
            return await self._turn(turn)
        except Exception:
            # The engine logs only the failure's message; the operator needs where it came from.
            sys.stderr.write(
                f"hive worker: turn {turn.turn} of session {turn.spec.session_id} failed:\n{traceback.format_exc()}"
            )
            raise

    @activity.defn(name=END_TURN)
    async def end_turn(self, failed: TurnFailure) -> None:
        """End a turn the engine gave up on: an ``error`` saying why, then its ``turn_end`` (once, however often
        this runs)."""
        session_id = failed.spec.session_id
        lines = await anyio.to_thread.run_sync(self.log.events, session_id)
        if sum(1 for line in lines if line.startswith(_TURN_END)) >= failed.turn:
            return
        # The last try's worker may have died holding the session's lease; the next turn must not wait for it.
        await anyio.to_thread.run_sync(self.store.break_lease, session_id)
        writer = _Writer(self.log, session_id, begun=bool(lines))
        writer.emit(
            ErrorEvent(
                message=f"the turn was given up after failing on the engine's workers: {failed.reason}",
                code="internal",
            )
        )
        writer.emit(TurnEndEvent())
        await writer.flush()
        sys.stderr.write(
            f"hive worker: turn {failed.turn} of session {session_id} given up: {failed.reason}\n"
        )

    async def _turn(self, turn: TurnInput) -> TurnOutcome:
        spec = turn.spec
        writer = _Writer(self.log, spec.session_id)
        count, current = await anyio.to_thread.run_sync(self.log.last_turn, spec.session_id)
        writer.begun = count > 0
        for line in current:  # the requests the turn already sent, and whether it is open
            writer.take(line)
        writer.pending.clear()
        attempt = activity.info().attempt
        sys.stderr.write(f"hive worker: turn {turn.turn} of session {spec.session_id} (attempt {attempt})\n")
        if not await anyio.Path(spec.working_directory).is_dir():
            writer.emit(
                ErrorEvent(
                    message=(
                        f"the session's folder {spec.working_directory} is not visible on worker {self.worker}: "
                        "every worker must see the sessions' folders at the same path (a shared volume)"
                    ),
                    code="internal",
                )
            )
            writer.emit(TurnEndEvent())
            await writer.flush()
            return TurnOutcome()
        if attempt > 1:
            writer.emit(
                FallbackEvent(
                    kind="retry",
                    provider_index=0,
                    total_providers=1,
                    category="worker_lost",
                    message="the worker running this turn stopped; another goes on from its last recorded step",
                    attempt=attempt - 1,
                    max_attempts=_MAX_ATTEMPTS,
                )
            )
            # The engine declared the last attempt's worker lost: its turn process holds the session's lease no
            # more, though on another machine the lease would look alive until it expired.
            await anyio.to_thread.run_sync(self.store.break_lease, spec.session_id)
        state, ended = await anyio.to_thread.run_sync(turn_state, self.store, spec.session_id, turn.turn)
        if state == "ended":
            # The turn ended before its worker was lost; its end may not have reached the event log.
            if writer.open:
                writer.emit(ended or TurnEndEvent())
            await writer.flush()
            return TurnOutcome()
        lines: list[bytes] = []
        if state == "new" and turn.message is not None:
            lines.append(turn.message.encode())
        elif state == "interrupted":
            lines.append(encode(UserMessageRequest(content=WORKER_LOST_NOTE)).rstrip(b"\n"))
        lines += [answer.encode() for answer in turn.answers]
        if turn.cancel:
            lines.append(encode(CancelRequest()).rstrip(b"\n"))
        # The engine cancels an activity by cancelling its task: the turn is then cancelled the protocol's way,
        # and the activity waits for its turn_end.
        control = _Control()
        running = asyncio.ensure_future(self._run(spec, lines, writer, turn.answers, control))
        try:
            return await asyncio.shield(running)
        except asyncio.CancelledError:
            details = activity.cancellation_details()
            if details is None or not details.cancel_requested or details.worker_shutdown:
                # The worker is stopping, not the user: the turn goes on on another worker, as after a crash, so
                # its stop is recorded nowhere.
                if control.store is not None:
                    control.store.parked = True
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running
                raise ApplicationError("the worker running this turn is shutting down") from None
            control.cancel = True
            return await running

    async def _run(
        self, spec: SessionSpec, lines: list[bytes], writer: _Writer, answers: list[str], control: _Control
    ) -> TurnOutcome:
        store = control.store = ParkableStore.on_pool_of(self.store)
        options = HostOptions(
            cwd=Path(spec.working_directory),
            model=spec.model,
            provider=spec.provider,
            agent=spec.agent,
            allow=tuple(spec.allow),
            model_endpoint=spec.model_endpoint,
            agent_mode=spec.agent_mode,
        )
        answered = {json.loads(answer).get("id") for answer in answers}
        # Requests the log holds already: a resumed turn sends them again, which asks nothing new (a turn resumed
        # to be cancelled is not parked again).
        asked_before = set(writer.asked)
        questions: set[str] = set()  # asked by the turn and not yet answered
        waiting: list[str] = []
        ended = False
        urgent = anyio.Event()
        send, receive = anyio.create_memory_object_stream[bytes](math.inf)
        for line in lines:
            send.send_nowait(line)
        try:
            async with open_server_session(options, spec.session_id, store=store) as runner:

                def emit(event: Event) -> None:
                    nonlocal ended
                    if store.parked or ended:
                        return  # what a parked turn's cancel writes is not news: the turn goes on elsewhere
                    if writer.take(encode(event).rstrip(b"\n")) is not None:
                        urgent.set()
                    if isinstance(event, TurnEndEvent):
                        ended = True
                        send.close()
                    elif isinstance(event, QuestionRequestEvent):
                        questions.add(event.id)
                    elif (
                        isinstance(event, HitlRequestEvent)
                        and event.id not in answered
                        and event.id not in asked_before
                    ):
                        # Its wait is in the log already (the bridge writes it before sending): park the turn.
                        waiting.append(event.id)
                        store.parked = True
                        runner.stop()

                async def beat() -> None:
                    nonlocal urgent
                    while True:
                        activity.heartbeat()
                        await writer.flush()
                        if control.cancel:
                            control.cancel = False
                            runner.cancel()
                        if questions and not ended:
                            await self._answer_questions(spec.session_id, questions, send)
                        with anyio.move_on_after(_FLUSH_SECONDS if writer.pending else _HEARTBEAT_SECONDS):
                            await urgent.wait()
                        urgent = anyio.Event()

                async with anyio.create_task_group() as group:
                    group.start_soon(beat)
                    await runner.serve(receive, emit)
                    group.cancel_scope.cancel()
        except USER_ERRORS as exc:
            writer.emit(ErrorEvent(message=str(exc), code="internal"))
        if not ended and not waiting:
            writer.emit(TurnEndEvent())
        await writer.flush()
        return TurnOutcome(waiting=waiting if not ended else [])

    async def _answer_questions(
        self, session_id: str, questions: set[str], send: MemoryObjectSendStream[bytes]
    ) -> None:
        """Pass the turn the answers the workflow received to the questions it asked (a question waits in the
        turn: the engine's signals reach the workflow, which the turn asks)."""
        handle = activity.client().get_workflow_handle(session_id)
        for line in await handle.query(QUESTION_ANSWERS, result_type=list[str]):
            answered = json.loads(line).get("id")
            if answered in questions:
                questions.discard(answered)
                send.send_nowait(line.encode())


class ParkableStore(PostgresSessionStore):
    """The session store of one turn on a worker: once :attr:`parked`, it writes nothing more to the session's log,
    so a turn stopped while an approval waits stays suspended in the log, its wait open, as if its process died."""

    parked = False
    """Set when the turn is parked: what its cancel would record (the wait closed, a ``turn_end``) is dropped."""

    def append(self, session_id: str, payload: EntryPayload) -> int:
        if self.parked:
            return self.last_seq(session_id)
        return super().append(session_id, payload)

    def set_status(self, session_id: str, status: SessionStatus) -> None:
        if not self.parked:
            super().set_status(session_id, status)
