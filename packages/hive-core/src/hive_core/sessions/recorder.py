"""Recording turns as they happen.

:class:`TranscriptRecorder` is a processor: it runs each turn of an :class:`~hive_core.loop.AgentSession` and
writes the turn to a :class:`~hive_core.sessions.SessionStore` while it runs.

The design: the conversation is the record. The loop appends whole messages to ``AgentSession.conversation``
(the user message, one assistant message per model round with its thinking signature and the calls' raw and
parsed arguments, one tool message per tool round with every result's error and refusal), and the recorder
writes each new message as a ``message`` entry, unchanged, so a restore is exact. It looks for new messages on
every event the turn emits (a length check, nothing more on the per-delta path) and writes them before passing
the event on; the assistant text of a round is thus written once, when the round's message appears (at its
first ``tool_start``, the next round's first delta or the ``turn_end``), never one row per delta. Alongside,
events that carry what the conversation does not hold yet are written as they pass: ``tool_end`` (a call's
outcome before its round's tool message exists), ``error`` and ``turn_end``; a ``turn_start`` with the request
(a :class:`~hive_core.turn_request.TurnRequest`, its working path a field) comes first. Approval waits are written by :class:`~hive_core.sessions.DurableHitlBridge`, which sends them.
The execution log's records are written the same way: the session's
:attr:`~hive_core.loop.AgentSession.observer` writes each model request, tool call and compaction as it ends, and
a ``fallback`` event is written as it passes.

Each write is its own transaction, made synchronously on the event loop before the event reaches the client:
a process killed mid-turn loses only what had not been written yet (at most the model round streaming at the
time, and the write in flight). A write that fails raises into the turn, which then fails: a session that
cannot be recorded is not continued silently.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from contextlib import contextmanager
from typing import Protocol
from typing import TypeVar

import anyio
import msgspec

from hive_core.execution_log import ExecutionRecord
from hive_core.execution_log import FallbackRecord
from hive_core.execution_log import ModelRequestRecord
from hive_core.failures import classify
from hive_core.loop import AgentSession
from hive_core.messages import Message
from hive_core.spending import RequestSpend
from hive_core.spending import Spent
from hive_core.tools import EventSink
from hive_core.turn_request import TurnRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import FallbackEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

from .store import SessionStore

__all__ = ["EndingLog", "TranscriptRecorder", "TurnLog", "ended"]


class TranscriptRecorder:
    """Runs the turns of ``session`` and records them in ``store`` under ``session_id``.

    Give it to a runner in place of the session: ``SessionRunner(TranscriptRecorder(session, store, id))``.
    The session's conversation must already be in the log when the recorder is made (a new session's empty
    conversation, or :meth:`SessionStore.restore <hive_core.sessions.SessionStore.restore>` of it): only
    messages added afterwards are written.
    """

    def __init__(
        self, session: AgentSession, store: SessionStore, session_id: str, *, model: str | None = None
    ) -> None:
        self.session = session
        """The session whose turns run."""
        self.store = store
        """Where they are recorded."""
        self.session_id = session_id
        """The session's id in the store."""
        self.model = model
        """The model a ``model_request`` record names when its request named none (the session's)."""
        self._cursor = len(session.conversation)
        session.observer = self._observe
        # What the session spent is what its log says (a resumed session keeps its total), and each request's
        # spend is written as it is counted, so a process killed mid-turn loses none of it.
        spending = session.spending
        spending.spent = Spent.of(entry.payload for entry in store.entries(session_id))
        spending.listeners.append(self._write_spend)

    def _observe(self, record: ExecutionRecord) -> None:
        if isinstance(record, ModelRequestRecord) and record.model is None and self.model is not None:
            record = msgspec.structs.replace(record, model=self.model)
        self.store.append(self.session_id, record)

    def _write_spend(self, spend: RequestSpend) -> None:
        self.sync()  # the round's message first: the log reads in the order things happened
        self.store.append(self.session_id, spend)

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Record ``turn_start``, then run the turn, recording it as it goes."""
        turn = TurnRequest.of(request)
        self.sync()
        self.store.append(self.session_id, turn)
        with self.recording(emit) as log:
            await self.session(turn, log)

    @property
    def recorded(self) -> int:
        """How many messages of the session's conversation are in the log."""
        return self._cursor

    def sync(self) -> None:
        """Write the messages the conversation gained since the last write, one transaction each."""
        conversation = self.session.conversation
        if len(conversation) < self._cursor:
            # The history was rewritten in place (never done by the loop): nothing of it can be appended.
            self._cursor = len(conversation)
        while self._cursor < len(conversation):
            self.store.append(self.session_id, conversation[self._cursor])
            self._cursor += 1

    def rebase(self, messages: list[Message]) -> None:
        """Make ``messages`` (already in the log) the session's conversation; nothing is written."""
        self.session.conversation[:] = messages
        self._cursor = len(messages)

    @contextmanager
    def recording(self, emit: EventSink) -> Generator[TurnLog]:
        """A recording sink for the turn run inside the block, which forwards every event to ``emit``.

        Leaving the block writes what is left: the last messages, and the turn's end if it was not written
        yet (``turn_end`` with ``stop_reason: cancelled`` when cancelled; ``error`` and ``turn_end`` when the
        block raised), the same end a :class:`~hive_core.SessionRunner` sends its client.
        """
        with ended(TurnLog(self, emit)) as log:
            yield log


class EndingLog(Protocol):
    """A recorded turn's log: writes the turn's end, unless it was already written."""

    def end(self, *events: ErrorEvent | TurnEndEvent) -> None:
        """Write what is left of the turn and, unless its end was already written, ``events``."""
        ...


_Log = TypeVar("_Log", bound=EndingLog)


@contextmanager
def ended(log: _Log) -> Generator[_Log]:
    """``log`` for the turn run inside the block, its end written on leaving: ``turn_end`` with ``stop_reason:
    cancelled`` when cancelled, ``error`` and ``turn_end`` when the block raised, else ``turn_end``."""
    try:
        yield log
    except anyio.get_cancelled_exc_class():
        log.end(TurnEndEvent(stop_reason="cancelled"))
        raise
    except Exception as exc:
        log.end(ErrorEvent(message=str(exc) or type(exc).__name__, code=classify(exc)), TurnEndEvent())
        raise
    log.end(TurnEndEvent())


class TurnLog:
    """The event sink of one recorded turn: writes what must be kept, then forwards the event."""

    __slots__ = ("_conversation", "_emit", "_recorder", "ended")

    def __init__(self, recorder: TranscriptRecorder, emit: EventSink) -> None:
        self._recorder = recorder
        self._emit = emit
        self._conversation = recorder.session.conversation
        self.ended = False
        """Whether the turn's ``turn_end`` was written."""

    def __call__(self, event: Event) -> None:
        recorder = self._recorder
        if len(self._conversation) != recorder.recorded:
            recorder.sync()
        cls = event.__class__
        if cls is not TextDeltaEvent and cls is not ThinkingDeltaEvent and not self.ended:
            if isinstance(event, ToolEndEvent | ErrorEvent):
                recorder.store.append(recorder.session_id, event)
            elif isinstance(event, FallbackEvent):
                recorder.store.append(recorder.session_id, FallbackRecord.of(event, time.time()))
            elif isinstance(event, TurnEndEvent):
                recorder.store.append(recorder.session_id, event)
                self.ended = True
        self._emit(event)

    def end(self, *events: ErrorEvent | TurnEndEvent) -> None:
        """Write the last messages and, unless the turn's end was already written, ``events``."""
        self._recorder.sync()
        if self.ended:
            return
        for event in events:
            self._recorder.store.append(self._recorder.session_id, event)
        self.ended = True
