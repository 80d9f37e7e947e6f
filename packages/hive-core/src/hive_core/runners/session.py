"""A session's request loop, shared by every transport.

The rules (those of the stdio runner): ``session_started`` first, before any request is read; requests keep
being read while a turn runs, so ``hitl_response`` and ``cancel`` reach it; turns run one at a time in order;
``cancel`` ends only the running turn; ``shutdown`` or the end of input stops reading, rejects approvals nobody can
answer any more, and runs the queued turns to their ``turn_end``; an unreadable line is answered with
``error{code: unreadable_request}`` and the session goes on; after a ``context_update`` with a working path, each
message goes to the processor as a :class:`~hive_core.turn_request.TurnRequest` carrying it (the model reads it as
a ``[WorkingPath: …]`` prefix).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import Protocol

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream

from hive_core.hitl import HitlBridge
from hive_core.session_id import new_session_id
from hive_core.tools import EventSink
from hive_core.turn_request import TurnRequest
from hive_protocol import (
    PROTOCOL_VERSION,
    CancelRequest,
    ContextUpdateRequest,
    ErrorEvent,
    HitlResponseRequest,
    LineTooLong,
    QuestionResponseRequest,
    Request,
    SessionStartedEvent,
    ShutdownRequest,
    UnreadableRequest,
    UserMessageRequest,
    decode_request,
)

from .turns import TurnRecorder

__all__ = ["Processor", "Resume", "SessionRunner"]

Processor = Callable[[UserMessageRequest, EventSink], Awaitable[None]]
"""What every runner drives: run the turn of one ``user_message``, writing its events to the sink."""


class Resume(Protocol):
    """A turn to finish before any request is read (a :class:`~hive_core.sessions.SuspendedTurn`, say)."""

    def __call__(self, emit: EventSink, *, task_status: TaskStatus[None]) -> Awaitable[None]:
        """Run the turn, its events to ``emit``; ``task_status.started()`` once requests may be read."""
        ...


Incoming = Request | UnreadableRequest | bytes | LineTooLong
"""What a transport hands the runner: decoded requests, raw lines, or lines too long to read."""


class SessionRunner:
    """Serves one session over any transport: requests in, events out."""

    def __init__(
        self,
        processor: Processor,
        *,
        session_id: str | None = None,
        bridge: HitlBridge | None = None,
        on_context: Callable[[ContextUpdateRequest], None] | None = None,
        on_question: Callable[[QuestionResponseRequest], object] | None = None,
        enrich_context: bool = True,
        resume: Resume | None = None,
    ) -> None:
        self.processor = processor
        self.session_id = session_id or new_session_id()
        """The id sent in ``session_started`` (a new one sorting by creation when none is given)."""
        self.bridge = bridge
        self.on_context = on_context
        self.on_question = on_question
        self.enrich_context = enrich_context
        self.resume = resume
        """A suspended turn to finish first (see :class:`~hive_core.sessions.SuspendedTurn`)."""
        self.working_path: str | None = None
        """The client's working path from its last ``context_update``."""
        self._current: anyio.CancelScope | None = None
        self._cancelled = False

    async def serve(self, incoming: AsyncIterable[Incoming], emit: EventSink) -> None:
        """Run the session until ``shutdown`` or the end of ``incoming``; return once every queued turn ended."""
        emit(SessionStartedEvent(session_id=self.session_id, protocol_version=PROTOCOL_VERSION))
        if self.bridge is not None:
            self.bridge.attach(emit)
        send, receive = anyio.create_memory_object_stream[UserMessageRequest](math.inf)
        async with anyio.create_task_group() as group:
            await group.start(self._run_turns, receive, emit)
            async with send:
                async for item in incoming:
                    request = decode_request(item) if isinstance(item, bytes) else item
                    if isinstance(request, ShutdownRequest):
                        break
                    self._dispatch(request, send.send_nowait, emit)
                if self.bridge is not None:
                    self.bridge.detach()

    def _dispatch(
        self,
        request: Request | UnreadableRequest | LineTooLong,
        enqueue: Callable[[UserMessageRequest], None],
        emit: EventSink,
    ) -> None:
        match request:
            case UserMessageRequest():
                if self.enrich_context and self.working_path:
                    request = TurnRequest(
                        content=request.content,
                        model=request.model,
                        options=request.options,
                        working_path=self.working_path,
                    )
                enqueue(request)
            case CancelRequest():
                self.cancel()
            case HitlResponseRequest():
                if self.bridge is not None:
                    self.bridge.answer(request)
            case ContextUpdateRequest():
                if request.working_path is not None:
                    self.working_path = request.working_path
                if self.on_context is not None:
                    self.on_context(request)
            case QuestionResponseRequest():
                if self.on_question is not None:
                    self.on_question(request)
            case UnreadableRequest():
                emit(request.to_event())
            case LineTooLong():
                emit(
                    ErrorEvent(
                        message=f"Unreadable request skipped: {request.message}", code="unreadable_request"
                    )
                )
            case _:
                pass

    async def _run_turns(
        self,
        receive: MemoryObjectReceiveStream[UserMessageRequest],
        emit: EventSink,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        status = _Started(task_status)
        if self.resume is not None:
            recorder = TurnRecorder(emit)
            self._cancelled = False
            with anyio.CancelScope() as scope:
                self._current = scope
                try:
                    await self.resume(recorder, task_status=status)
                except Exception as exc:
                    recorder.fail(exc)
                finally:
                    self._current = None
            recorder.finish(cancelled=self._cancelled)
        status.started()
        async with receive:
            async for request in receive:
                await self.run_turn(request, emit)

    def cancel(self) -> bool:
        """Cancel the running turn, as a ``cancel`` request does; ``False`` when no turn runs."""
        if self._current is None:
            return False
        self._cancelled = True
        self._current.cancel()
        return True

    async def run_turn(
        self,
        request: UserMessageRequest,
        emit: EventSink,
        *,
        timeout: float | None = None,
    ) -> None:
        """Run one turn with the runner's guarantees.

        A ``cancel`` meanwhile ends it with ``stop_reason: cancelled``. Running past ``timeout`` seconds is a
        failure, not a cancellation: ``error{code: timeout}`` and a ``turn_end`` without stop reason.
        """
        recorder = TurnRecorder(emit)
        self._cancelled = False
        deadline = math.inf if timeout is None else anyio.current_time() + timeout
        with anyio.CancelScope(deadline=deadline) as scope:
            self._current = scope
            try:
                await self.processor(request, recorder)
            except Exception as exc:
                recorder.fail(exc)
            finally:
                self._current = None
        if scope.cancelled_caught and not self._cancelled:
            recorder.fail(TimeoutError(f"the turn did not finish within {timeout:g} s"))
        recorder.finish(cancelled=self._cancelled)


class _Started:
    """Passes ``started()`` on once, however often it is called."""

    def __init__(self, status: TaskStatus[None]) -> None:
        self._status = status
        self._done = False

    def started(self, value: None = None) -> None:
        if not self._done:
            self._done = True
            self._status.started(value)
