"""A turn's streamed text and thinking, as every CLI mapper emits them: ``text_delta`` and ``thinking_delta``
events, and whether any text reached the client (a CLI that repeats the whole text at a message's end has it
emitted only when no delta came)."""

from __future__ import annotations

from hive_core.tools import EventSink
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent

__all__ = ["TextStream"]


class TextStream:
    """Emits a turn's text and thinking pieces; empty and missing pieces are skipped."""

    def __init__(self, emit: EventSink) -> None:
        self._emit = emit
        self.streamed_text = False
        """Whether any text reached the client this turn."""

    def text(self, content: str | None) -> bool:
        """Emit ``content`` as text; whether it was emitted."""
        if not content:
            return False
        self.streamed_text = True
        self._emit(TextDeltaEvent(content=content))
        return True

    def thinking(self, content: str | None) -> bool:
        """Emit ``content`` as thinking; whether it was emitted."""
        if not content:
            return False
        self._emit(ThinkingDeltaEvent(content=content))
        return True
