"""A session's request loop, shared by every transport.

The rules (those of the stdio runner): ``session_started`` first, before any request is read; requests keep
being read while a turn runs, so ``hitl_response`` and ``cancel`` reach it; turns run one at a time in order;
``cancel`` ends only the running turn; ``shutdown`` or the end of input stops reading, rejects approvals nobody can
answer any more, and runs the queued turns to their ``turn_end``; an unreadable line is answered with
``error{code: unreadable_request}`` and the session goes on; after a ``context_update`` with a working path, each
message goes to the processor as a :class:`~hive_core.turn_request.TurnRequest` carrying it (the model reads it as
a ``[WorkingPath: …]`` prefix). A request of a type the embedder added with a
:class:`~hive_protocol.ProtocolExtension` goes to its ``on_request`` handler, which may write events of the added
types.

Turns wait in a bounded queue. When it is full, the runner stops reading until the running turn ends and makes
room: nothing is dropped, the transport's own backpressure (a pipe, a socket) holds the client back, and memory
stays bounded whatever the client sends. The price of one ordered stream: a ``cancel`` or ``hitl_response`` written
behind a full queue is read only once room is made (a ``hitl_response`` then comes too late for a call that waited
on it: the approval times out and the call is rejected, failing closed).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterable
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Final
from typing import Protocol
from typing import Self
from typing import cast

import anyio
import msgspec
from anyio.abc import TaskStatus

from hive_core._closing import Closing
from hive_core.hitl import HitlBridge
from hive_core.questions import QuestionBridge
from hive_core.session_id import new_session_id
from hive_core.tools import EventSink
from hive_core.tracing import RESUMED_ATTRIBUTE
from hive_core.tracing import Span
from hive_core.tracing import TracedAgent
from hive_core.tracing import tracer
from hive_core.tracing import turn_span
from hive_core.turn_deadline import TurnDeadline
from hive_core.turn_request import TurnRequest
from hive_protocol import PROTOCOL_VERSION
from hive_protocol import CancelRequest
from hive_protocol import ContextUpdateRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlResponseRequest
from hive_protocol import LineTooLong
from hive_protocol import ProtocolExtension
from hive_protocol import QuestionResponseRequest
from hive_protocol import Request
from hive_protocol import SessionStartedEvent
from hive_protocol import ShutdownRequest
from hive_protocol import TurnEndEvent
from hive_protocol import UnreadableRequest
from hive_protocol import UserMessageRequest
from hive_protocol import decode_request

from .turns import TurnRecorder

__all__ = [
    "MAX_QUEUED_TEXT",
    "MAX_QUEUED_TURNS",
    "ExtendedSink",
    "Processor",
    "RequestHandler",
    "Resume",
    "SessionRunner",
]

Processor = Callable[[UserMessageRequest, EventSink], Awaitable[None]]
"""What every runner drives: run the turn of one ``user_message``, writing its events to the sink."""

ExtendedSink = Callable[[Event | msgspec.Struct], None]
"""Where a :data:`RequestHandler` writes events: built-in ones and those of the runner's extension."""

RequestHandler = Callable[[msgspec.Struct, ExtendedSink], Awaitable[None]]
"""Acts on one request of a type added by the runner's :class:`~hive_protocol.ProtocolExtension`. It runs in the
reader, in order with the other requests (reading waits for it, so keep it short or start a task of your own); an
exception it raises is answered with an ``error`` event and the session goes on."""


class Resume(Protocol):
    """A turn to finish before any request is read (a :class:`~hive_core.sessions.SuspendedTurn`, say)."""

    def __call__(self, emit: EventSink, *, task_status: TaskStatus[None]) -> Awaitable[None]:
        """Run the turn, its events to ``emit``; ``task_status.started()`` once requests may be read."""
        ...


MAX_QUEUED_TURNS: Final = 256
"""The default bound on turns waiting behind the running one (see :class:`SessionRunner`)."""
MAX_QUEUED_TEXT: Final = 16 * 1024 * 1024
"""The default bound on the characters of message text those turns hold: one line's worth."""

Incoming = Request | msgspec.Struct | UnreadableRequest | bytes | LineTooLong
"""What a transport hands the runner: decoded requests, raw lines, or lines too long to read."""


class SessionRunner:
    """Serves one session over any transport: requests in, events out."""

    def __init__(
        self,
        processor: Processor,
        *,
        session_id: str | None = None,
        bridge: HitlBridge | None = None,
        questions: QuestionBridge | None = None,
        on_context: Callable[[ContextUpdateRequest], None] | None = None,
        on_question: Callable[[QuestionResponseRequest], object] | None = None,
        enrich_context: bool = True,
        resume: Resume | None = None,
        max_queued_turns: int = MAX_QUEUED_TURNS,
        max_queued_text: int = MAX_QUEUED_TEXT,
        turn_timeout: float | None = None,
        deadline: TurnDeadline | None = None,
        extension: ProtocolExtension | None = None,
        on_request: RequestHandler | None = None,
        traced_as: TracedAgent | None = None,
    ) -> None:
        self.processor = processor
        self.session_id = session_id or new_session_id()
        """The id sent in ``session_started`` (a new one sorting by creation when none is given)."""
        self.bridge = bridge
        self.questions = questions
        """Where ``question_request`` events are published and ``question_response`` answers go (unless
        ``on_question`` takes them): attached and detached with the session, like :attr:`bridge`."""
        self.on_context = on_context
        self.on_question = on_question
        self.enrich_context = enrich_context
        self.resume = resume
        """A suspended turn to finish first (see :class:`~hive_core.sessions.SuspendedTurn`)."""
        self.max_queued_turns = max_queued_turns
        """How many turns may wait behind the running one before reading pauses."""
        self.max_queued_text = max_queued_text
        """How many characters of message text the waiting turns may hold before reading pauses (a single
        message larger than this still queues when nothing else waits)."""
        self.turn_timeout = turn_timeout
        """Seconds each served turn may take (see :meth:`run_turn`); ``None`` for no limit."""
        self.deadline = deadline or TurnDeadline()
        """The running turn's deadline: give the processor's question service a
        :class:`~hive_core.turn_deadline.PausingQuestions` over it, and time spent waiting for answers does not
        count against the turn's timeout."""
        self.extension = extension
        """The request and event types the embedder added; requests are read with it (``None``: the built-in
        types only, anything else is an unreadable request)."""
        self.on_request = on_request
        """Acts on the requests of :attr:`extension`'s types (``None``: they are refused with an ``error``)."""
        self.traced_as = traced_as or TracedAgent()
        """What runs the turns, as each turn's ``invoke_agent`` span names it (:mod:`hive_core.tracing`)."""
        self.working_path: str | None = None
        """The client's working path from its last ``context_update``."""
        self._current: anyio.CancelScope | None = None
        self._cancelled = False
        self._stopped = False
        self._reading: anyio.CancelScope | None = None

    async def serve(self, incoming: AsyncIterable[Incoming], emit: EventSink) -> None:
        """Run the session until ``shutdown`` or the end of ``incoming``; return once every queued turn ended."""
        emit(SessionStartedEvent(session_id=self.session_id, protocol_version=PROTOCOL_VERSION))
        if self.bridge is not None:
            self.bridge.attach(emit)
        if self.questions is not None:
            self.questions.attach(emit)
        queue = _TurnQueue(self.max_queued_turns, self.max_queued_text)
        async with anyio.create_task_group() as group:
            await group.start(self._run_turns, queue, emit)
            with queue:
                with anyio.CancelScope() as self._reading:
                    if self._stopped:
                        self._reading.cancel()
                    decode = decode_request if self.extension is None else self.extension.decode_request
                    added = () if self.extension is None else self.extension.requests
                    async for item in incoming:
                        request = decode(item) if isinstance(item, bytes) else item
                        if isinstance(request, ShutdownRequest):
                            break
                        if isinstance(request, added):
                            # Every runner's writer encodes any struct, so the sink takes the added events too.
                            await self._extended(request, cast("ExtendedSink", emit))
                            continue
                        turn = self._dispatch(request, emit)
                        if turn is not None:
                            await queue.put(turn)  # waits while the queue is full: reading pauses
                if self.bridge is not None:
                    self.bridge.detach()
                if self.questions is not None:
                    self.questions.detach()

    async def _extended(self, request: msgspec.Struct, emit: ExtendedSink) -> None:
        kind = request.__struct_config__.tag
        if self.on_request is None:
            emit(ErrorEvent(message=f"{kind} requests are not handled here", code="request_rejected"))
            return
        try:
            await self.on_request(request, emit)
        except Exception as exc:
            emit(ErrorEvent(message=f"the {kind} request failed: {exc}", code="internal"))

    def _dispatch(
        self, request: Request | msgspec.Struct | UnreadableRequest | LineTooLong, emit: EventSink
    ) -> UserMessageRequest | None:
        """Act on one request; a ``user_message`` is returned, to be queued."""
        match request:
            case UserMessageRequest():
                if self.enrich_context and self.working_path:
                    request = TurnRequest(
                        content=request.content,
                        model=request.model,
                        options=request.options,
                        working_path=self.working_path,
                    )
                return request
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
                elif self.questions is not None:
                    refusal = self.questions.settle(request)
                    if refusal is not None:
                        emit(
                            ErrorEvent(
                                message=f"question_response refused: {refusal}", code="request_rejected"
                            )
                        )
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
        return None

    async def _run_turns(
        self,
        queue: _TurnQueue,
        emit: EventSink,
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        status = _Started(task_status)
        if self.resume is not None:
            if not tracer().enabled:
                await self._resume_turn(self.resume, emit, status)
            else:
                # The resumed turn is a turn of its own in the trace: the process that began it is gone.
                with turn_span(self.traced_as, self.session_id) as span:
                    span.set(RESUMED_ATTRIBUTE, True)
                    await self._resume_turn(self.resume, _TracedEnd(emit, span), status)
        status.started()
        async for request in queue:
            if self._stopped:
                break
            await self.run_turn(request, emit, timeout=self.turn_timeout)

    async def _resume_turn(self, resume: Resume, emit: EventSink, status: _Started) -> None:
        recorder = TurnRecorder(emit)
        self._cancelled = False
        with anyio.CancelScope() as scope:
            self._current = scope
            try:
                await resume(recorder, task_status=status)
            except Exception as exc:
                recorder.fail(exc)
            finally:
                self._current = None
        recorder.finish(cancelled=self._cancelled)

    def cancel(self) -> bool:
        """Cancel the running turn, as a ``cancel`` request does; ``False`` when no turn runs."""
        if self._current is None:
            return False
        self._cancelled = True
        self._current.cancel()
        return True

    def stop(self) -> None:
        """End the session early, as a signal does: the running turn is cancelled (it still writes its
        ``turn_end``), no queued turn starts (they are dropped, never begun), requests stop being read, and
        :meth:`serve` returns once the running turn has ended."""
        self._stopped = True
        if self._reading is not None:
            self._reading.cancel()
        self.cancel()

    async def run_turn(
        self,
        request: UserMessageRequest,
        emit: EventSink,
        *,
        timeout: float | None = None,
    ) -> None:
        """Run one turn with the runner's guarantees.

        A ``cancel`` meanwhile ends it with ``stop_reason: cancelled``. Running past ``timeout`` seconds is a
        failure, not a cancellation: ``error{code: timeout}`` and a ``turn_end`` without stop reason. Time during
        which :attr:`deadline` is paused (a question waits for its user) does not count.

        With tracing on (:func:`~hive_core.tracing.tracer`), the turn is an ``invoke_agent`` span carrying the
        turn's usage and stop reason, or its error's code.
        """
        if not tracer().enabled:
            await self._run_turn(request, emit, timeout)
            return
        with turn_span(self.traced_as, self.session_id, TurnRequest.of(request).prompt) as span:
            await self._run_turn(request, _TracedEnd(emit, span), timeout)

    async def _run_turn(self, request: UserMessageRequest, emit: EventSink, timeout: float | None) -> None:
        recorder = TurnRecorder(emit)
        self._cancelled = False
        deadline = math.inf if timeout is None else anyio.current_time() + timeout
        with anyio.CancelScope(deadline=deadline) as scope, self.deadline.running(scope):
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


class _TracedEnd:
    """Passes a turn's events on, recording its ``turn_end`` (usage, stop reason) and ``error`` on its span."""

    __slots__ = ("_emit", "_span")

    def __init__(self, emit: EventSink, span: Span) -> None:
        self._emit = emit
        self._span = span

    def __call__(self, event: Event) -> None:
        if event.__class__ is TurnEndEvent:
            end = cast("TurnEndEvent", event)
            span = self._span
            if end.input_tokens is not None:
                span.set("gen_ai.usage.input_tokens", end.input_tokens)
            if end.output_tokens is not None:
                span.set("gen_ai.usage.output_tokens", end.output_tokens)
            if end.cached_input_tokens is not None:
                span.set("gen_ai.usage.cache_read.input_tokens", end.cached_input_tokens)
            if end.stop_reason is not None:
                span.set("gen_ai.response.finish_reasons", [end.stop_reason])
        elif isinstance(event, ErrorEvent):
            self._span.fail(event.code or "unknown")
        self._emit(event)


class _Started:
    """Passes ``started()`` on once, however often it is called."""

    def __init__(self, status: TaskStatus[None]) -> None:
        self._status = status
        self._done = False

    def started(self, value: None = None) -> None:
        if not self._done:
            self._done = True
            self._status.started(value)


class _TurnQueue(Closing):
    """Turns waiting to run, bounded in number and in text; :meth:`put` waits for room (backpressure).

    Iterating takes turns in order until the queue is closed and empty.
    """

    def __init__(self, max_turns: int, max_text: int) -> None:
        self._max_turns = max(1, max_turns)
        self._max_text = max_text
        self._items: deque[tuple[UserMessageRequest, int]] = deque()
        self._text = 0
        self._closed = False
        self._changed = anyio.Event()
        self._waiting = 0

    async def put(self, request: UserMessageRequest) -> None:
        size = len(request.content)
        while self._items and (len(self._items) >= self._max_turns or self._text + size > self._max_text):
            await self._wait()
        self._items.append((request, size))
        self._text += size
        self._notify()

    def close(self) -> None:
        self._closed = True
        self._notify()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> UserMessageRequest:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            await self._wait()
        request, size = self._items.popleft()
        self._text -= size
        self._notify()
        return request

    async def _wait(self) -> None:
        self._waiting += 1
        try:
            await self._changed.wait()
        finally:
            self._waiting -= 1

    def _notify(self) -> None:
        if (
            self._waiting
        ):  # a fresh event only when someone waits on this one: most puts and takes wake nobody
            self._changed.set()
            self._changed = anyio.Event()
