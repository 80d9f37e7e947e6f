"""Pi's event stream (``--mode json`` lines, the events of ``--mode rpc``) as hive events: one
:class:`PiEventMapper` per turn.

What maps to what:

* the ``session`` line gives Pi's session id (:attr:`PiEventMapper.session_id`);
* ``message_update`` ``text_delta`` / ``thinking_delta`` of an assistant message become ``text_delta`` /
  ``thinking_delta``; its ``message_end`` repeats that text, so the end's text is emitted only for a message whose
  deltas never came;
* ``tool_execution_start`` / ``tool_execution_end`` start and end a call through
  :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`. Pi runs its tools without asking anyone: there
  is no permission request to answer, only the calls to report;
* each assistant ``message_end`` adds its ``usage``; the last one's ``stopReason`` is the turn's; ``agent_end``
  (or ``agent_settled``, in builds that send it) ends the run.

Everything else (``turn_start``, ``queue_update``, compaction and retry notices) carries nothing a hive client needs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Final

from hive_core.tools import EventSink
from hive_protocol import StopReason
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.json_values import as_count
from hive_providers.backends.kit.text_stream import TextStream
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_kinds import by_kind
from hive_providers.backends.kit.tool_output import output_text
from hive_providers.backends.kit.wire import Unknown

from . import wire
from .wire import RUN_ENDS

__all__ = ["RUN_ENDS", "TOOL_KINDS", "PiEventMapper", "run_failure"]

TOOL_KINDS: Final = by_kind(execute="bash", read="read", edit="edit write", search="grep find ls")
"""Pi's built-in tools by the ACP kind whose hive tool name their ``tool_start`` carries (``bash`` ->
``execute_command``); other tools keep their own name."""

_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "stop": "completed",
    "toolUse": "completed",
    "length": "output_limit",
    "aborted": "cancelled",
}


class PiEventMapper:
    """Maps one turn's Pi events to hive events (see the module)."""

    def __init__(self, emit: EventSink, tracker: ToolCallTracker) -> None:
        self._text = TextStream(emit)
        self.tracker = tracker
        """The turn's tool calls."""
        self.session_id: str | None = None
        """Pi's session id, from the ``session`` line (rpc mode: from ``get_state``, set by the backend)."""
        self.ended = False
        """Whether the run's end (``agent_end``) came."""
        self.persisted = False
        """Whether an assistant message ended: Pi writes a new session's file only then, so before it the
        session id cannot be resumed."""
        self.stop_reason: str | None = None
        """The ``stopReason`` of the last assistant message."""
        self.error: str | None = None
        """The ``errorMessage`` of the last assistant message that ended in ``error``."""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self._counted = False
        self._streamed = False
        self._started = time.monotonic()

    def on_event(self, event: wire.Event | Unknown) -> None:
        """Map one event (responses and extension requests are the backend's, not this mapper's)."""
        if type(event) is Unknown:
            return
        match event:
            case wire.SessionHeader(id=session_id):
                self.session_id = session_id or self.session_id
            case wire.MessageStart():
                self._streamed = False
            case wire.MessageUpdate(assistant_message_event=update):
                self._on_update(update)
            case wire.MessageEnd(message=message):
                self._on_message_end(message)
            case wire.ToolExecutionStart(tool_call_id=call_id, tool_name=tool_name, args=args):
                name = tool_name or "tool"
                self.tracker.upsert(
                    {
                        "sessionUpdate": "tool_call",
                        "toolCallId": call_id,
                        "title": name,
                        "kind": TOOL_KINDS.get(name),
                        "rawInput": args or {},
                        "status": "in_progress",
                    }
                )
            case wire.ToolExecutionEnd(tool_call_id=call_id, result=result, is_error=is_error):
                output = result_text(result)
                self.tracker.upsert(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call_id,
                        "status": "failed" if is_error is True else "completed",
                        "content": [{"type": "content", "content": {"type": "text", "text": output}}]
                        if output
                        else [],
                    }
                )
            case wire.AgentEnd() | wire.AgentSettled():
                self.ended = True

    def _on_update(self, update: wire.Update | None) -> None:
        match update:
            case wire.TextDelta(delta=text):
                self._streamed = self._text.text(text) or self._streamed
            case wire.ThinkingDelta(delta=thinking):
                self._streamed = self._text.thinking(thinking) or self._streamed
            case _:
                pass

    def _on_message_end(self, message: wire.PiMessage | None) -> None:
        if message is None or message.role != "assistant":
            return
        self.persisted = True
        if not self._streamed:
            for block in map(wire.BLOCKS.decode, message.content or ()):
                match block:
                    case wire.TextBlock(text=text):
                        self._text.text(text)
                    case wire.ThinkingBlock(thinking=thinking):
                        self._text.thinking(thinking)
                    case _:
                        pass
        self._streamed = False
        usage = message.usage
        if usage is not None:
            fresh, output = as_count(usage.input), as_count(usage.output)
            read, written = as_count(usage.cache_read) or 0, as_count(usage.cache_write) or 0
            if fresh is not None or output is not None:
                self._counted = True
                self.input_tokens += (fresh or 0) + read + written
                self.output_tokens += output or 0
                self.cached_tokens += read
        self.stop_reason = message.stop_reason or self.stop_reason
        if self.stop_reason == "error":
            self.error = message.error_message or "no reason given"

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end``; every call still open is ended. Returned, not emitted."""
        self.tracker.close_all("Not finished: the turn ended before this call's outcome was reported.")
        counted = self._counted
        return TurnEndEvent(
            input_tokens=self.input_tokens if counted else None,
            output_tokens=self.output_tokens if counted else None,
            total_tokens=self.input_tokens + self.output_tokens if counted else None,
            cached_input_tokens=self.cached_tokens or None,
            stop_reason=_STOP_REASONS.get(self.stop_reason or "stop", "completed"),
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )


def run_failure(mapper: PiEventMapper) -> str | None:
    """Why the run failed (its last assistant message ended in ``error``), or ``None``."""
    if mapper.stop_reason != "error":
        return None
    return f"Pi ended the turn with an error: {mapper.error}"


def result_text(result: wire.ToolResult | None) -> str:
    """The text of a tool result's ``content`` blocks (other blocks as JSON: a tool's output is free-form)."""
    return output_text(result.content if result is not None else None)
