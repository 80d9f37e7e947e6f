"""What every runner guarantees about a turn, whatever its processor does."""

from __future__ import annotations

from hive_core.failures import classify
from hive_core.tool_round import CANCELLED_CALL_TEXT
from hive_core.tools import EventSink
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import excerpt

__all__ = ["TurnRecorder"]

_MAX_MESSAGE_CHARS = 4000


class TurnRecorder:
    """An event sink for one turn that keeps the turn well formed.

    It passes events through while tracking the open tool calls. Whatever the processor does — finish, fail,
    be cancelled, forget its ``turn_end`` or write past it — the client sees every started call closed by a
    ``tool_end``, an ``error`` right before ``turn_end`` on failure, and exactly one ``turn_end``.
    """

    __slots__ = ("_emit", "ended", "open")

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self.open: dict[str, str] = {}
        """Calls started and not yet ended: call id to tool name."""
        self.ended = False
        """Whether the turn's ``turn_end`` was written."""

    def __call__(self, event: Event) -> None:
        if self.ended:
            return  # nothing of a turn may follow its turn_end
        if event.__class__ is TextDeltaEvent:  # the hot path: one check per streamed delta
            self._emit(event)
            return
        if isinstance(event, ToolStartEvent):
            self.open[event.call_id] = event.tool
        elif isinstance(event, ToolEndEvent):
            self.open.pop(event.call_id, None)
        elif isinstance(event, TurnEndEvent):
            self._close_calls("Not finished: the turn ended before this call's outcome was reported.")
            self.ended = True
        self._emit(event)

    def fail(self, exc: BaseException) -> None:
        """The processor raised: close open calls, then ``error`` and a ``turn_end`` without stop reason."""
        if self.ended:
            return
        self._close_calls("Not finished: the turn failed.")
        # An exception's text may carry what a client or a model sent (a model name, a path): an excerpt only.
        message = excerpt(str(exc) or type(exc).__name__, _MAX_MESSAGE_CHARS)
        self._emit(ErrorEvent(message=message, code=classify(exc)))
        self.ended = True
        self._emit(TurnEndEvent())

    def finish(self, *, cancelled: bool) -> None:
        """The processor returned or was cancelled: close what it left open."""
        if self.ended:
            return
        self._close_calls(CANCELLED_CALL_TEXT)
        self.ended = True
        self._emit(TurnEndEvent(stop_reason="cancelled") if cancelled else TurnEndEvent())

    def _close_calls(self, text: str) -> None:
        for call_id, tool in list(self.open.items()):
            self._emit(ToolEndEvent(tool=tool, success=False, output=text, call_id=call_id))
        self.open.clear()
