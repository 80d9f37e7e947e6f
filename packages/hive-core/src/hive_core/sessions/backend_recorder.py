"""Recording the turns of a coding-agent backend as they happen.

:class:`BackendRecorder` is a processor, like :class:`~hive_core.sessions.TranscriptRecorder`, for a session a
coding-agent CLI serves (an :class:`~hive_core.backends.AgentBackend`): the CLI keeps the conversation in a session
of its own, so hive writes what lets the session be listed, read and resumed, not what a model would be sent again.
Per turn: ``turn_start`` with the request and the user's message; the assistant's text as one ``message`` (written
when the turn ends or fails, never one row per delta); ``tool_end`` (with the call's ``tool`` record of the execution
log, timed from its ``tool_start``), ``error`` and ``turn_end`` as they pass; and a
``backend_session`` entry whenever the CLI's session id changes (its first turn, or a resume the CLI could not
honour), written before the event that revealed it reaches the client, so a crash right after still resumes it.
"""

from __future__ import annotations

from hive_core.backends import AgentBackend
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.tools import EventSink
from hive_core.turn_request import TurnRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

from .execution import ToolTimer
from .recorder import ended
from .records import BackendSession
from .store import SessionStore

__all__ = ["BackendRecorder"]


class BackendRecorder:
    """Runs the turns of ``backend`` and records them in ``store`` under ``session_id``.

    Give it to a runner in place of the backend. ``resumed`` is the CLI's session id the backend was told to
    resume (already in the log): it is written again only if the CLI answers with another one.
    """

    def __init__(
        self, backend: AgentBackend, store: SessionStore, session_id: str, *, resumed: str | None = None
    ) -> None:
        self.backend = backend
        """The backend whose turns run."""
        self.store = store
        """Where they are recorded."""
        self.session_id = session_id
        """The session's id in the store."""
        self.recorded_backend_session = resumed
        """The CLI's session id last written to the log."""

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Record ``turn_start`` and the user's message, then run the turn, recording it as it goes."""
        turn = TurnRequest.of(request)
        self.store.append(self.session_id, turn)
        # What the CLI is sent: a working path stays a field of the turn_start above, as no backend sends it.
        self.store.append(self.session_id, Message("user", [TextPart(turn.content)]))
        with ended(_BackendTurnLog(self, emit)) as log:
            await self.backend(turn, log)

    def note_backend_session(self) -> None:
        """Write a ``backend_session`` entry if the CLI's session id changed since the last one written."""
        current = self.backend.session_id
        if current is not None and current != self.recorded_backend_session:
            self.store.append(self.session_id, BackendSession(backend=self.backend.name, session_id=current))
            self.recorded_backend_session = current


class _BackendTurnLog:
    """The event sink of one recorded backend turn: writes what must be kept, then forwards the event."""

    __slots__ = ("_emit", "_recorder", "_text", "_tools", "ended")

    def __init__(self, recorder: BackendRecorder, emit: EventSink) -> None:
        self._recorder = recorder
        self._emit = emit
        self._text: list[str] = []
        self._tools = ToolTimer()
        self.ended = False
        """Whether the turn's ``turn_end`` was written."""

    def __call__(self, event: Event) -> None:
        recorder = self._recorder
        recorder.note_backend_session()
        if isinstance(event, TextDeltaEvent):
            self._text.append(event.content)
        elif not self.ended:
            if isinstance(event, ToolStartEvent):
                self._tools.started(event)
            elif isinstance(event, ToolEndEvent):
                recorder.store.append(recorder.session_id, event)
                recorder.store.append(recorder.session_id, self._tools.ended(event))
            elif isinstance(event, ErrorEvent | TurnEndEvent):
                self._flush()
                recorder.store.append(recorder.session_id, event)
                self.ended = isinstance(event, TurnEndEvent)
        self._emit(event)

    def _flush(self) -> None:
        """Write the assistant's text so far as one message."""
        if self._text:
            text = "".join(self._text)
            self._text.clear()
            self._recorder.store.append(self._recorder.session_id, Message("assistant", [TextPart(text)]))

    def end(self, *events: ErrorEvent | TurnEndEvent) -> None:
        """Write what is left and, unless the turn's end was already written, ``events``."""
        self._recorder.note_backend_session()
        self._flush()
        if self.ended:
            return
        for event in events:
            self._recorder.store.append(self._recorder.session_id, event)
        self.ended = True
