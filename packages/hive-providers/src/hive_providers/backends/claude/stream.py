"""Claude Code's stream-json output as hive events: one :class:`StreamMapper` per turn.

What maps to what:

* ``system/init`` gives the CLI's session id (:attr:`StreamMapper.session_id`);
* ``stream_event`` text and thinking deltas become ``text_delta`` / ``thinking_delta``; the complete
  ``assistant`` message that follows repeats that text, so its text is emitted only for a message whose deltas
  never came (a CLI run without ``--include-partial-messages``);
* a ``tool_use`` block of an ``assistant`` message starts a call, the ``tool_result`` of a ``user`` message ends
  it, through :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker` (its id rules: a model that
  numbers its calls afresh each turn still gets unique hive call ids);
* a ``Task`` (``Agent``) call starts a subagent: the messages carrying its ``parent_tool_use_id`` are its own
  work, reported as ``agent_work`` snapshots (its latest text, its finished tool calls) and never as the turn's
  text or tools; its ``tool_result`` ends it;
* ``result`` gives the usage and the stop reason of the ``turn_end``.

Everything else (``status``, ``rate_limit_event``, hook and task notices) carries nothing a hive client needs.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Final

from hive_core.tools import EventSink
from hive_protocol import StopReason
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.json_values import as_count
from hive_providers.backends.kit.subagent_work import Subagent
from hive_providers.backends.kit.subagent_work import Subagents
from hive_providers.backends.kit.text_stream import TextStream
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import excerpt
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.tool_output import output_text
from hive_providers.backends.kit.tool_use_permissions import TOOL_USE_KINDS
from hive_providers.backends.kit.wire import Unknown

from . import messages

__all__ = ["SUBAGENT_TOOLS", "TOOL_KINDS", "StreamMapper", "result_failure"]

TOOL_KINDS: Final[Mapping[str, str]] = TOOL_USE_KINDS
"""Claude Code's tools by the ACP kind whose hive tool name their ``tool_start`` carries (``Bash`` ->
``execute_command``); other tools keep their own name, in snake case."""

SUBAGENT_TOOLS: Final = frozenset({"Task", "Agent"})
"""The tools that start a subagent (``Task``; renamed ``Agent`` in later versions)."""

_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "end_turn": "completed",
    "stop_sequence": "completed",
    "tool_use": "completed",
    "max_tokens": "output_limit",
    "refusal": "content_filter",
    "pause_turn": "completed",
}
_MAX_TURNS: Final = "error_max_turns"
_SUMMARY_LIMIT: Final = 2000


class StreamMapper:
    """Maps one turn's stream-json messages to hive events (see the module)."""

    def __init__(self, emit: EventSink, tracker: ToolCallTracker) -> None:
        self._emit = emit
        self._text = TextStream(emit)
        self.tracker = tracker
        """The turn's tool calls."""
        self.session_id: str | None = None
        """The CLI's session id, from ``system/init`` (or any message carrying one)."""
        self.result: messages.ResultMessage | None = None
        """The ``result`` message, once it came: the end of the turn."""
        self._streamed_messages: set[str] = set()
        self._current_message: str | None = None
        self._subagents = Subagents[Subagent](emit)
        self._started = time.monotonic()

    @property
    def streamed_text(self) -> bool:
        """Whether any text reached the client."""
        return self._text.streamed_text

    # -- input ----------------------------------------------------------------------------------------------

    def on_message(self, message: messages.Message | Unknown) -> None:
        """Map one stdout message (control messages are the channel's, not this mapper's)."""
        if type(message) is Unknown:
            return
        session = message.session_id or None
        if session is not None and self.session_id is None:
            self.session_id = session
        parent = message.parent_tool_use_id or None
        match message:
            case messages.SystemMessage(subtype="init") if session is not None:
                self.session_id = session
            case messages.StreamEventMessage(event=event) if parent is None:
                self._on_stream_event(event)
            case messages.AssistantMessage(message=body):
                if parent is not None:
                    self._on_subagent_message(parent, body)
                else:
                    self._on_assistant(body)
            case messages.UserMessage(message=body):
                if parent is not None:
                    self._on_subagent_results(parent, body)
                else:
                    self._on_user(body)
            case messages.ResultMessage():
                self.result = message
            case _:
                pass

    def _on_stream_event(self, event: messages.StreamEvent | None) -> None:
        match event:
            case messages.ContentBlockDelta(delta=messages.TextDelta(text=text)):
                streamed = self._text.text(text)
            case messages.ContentBlockDelta(delta=messages.ThinkingDelta(thinking=thinking)):
                streamed = self._text.thinking(thinking)
            case messages.MessageStart(message=started):
                self._current_message = (started.id or None) if started is not None else None
                return
            case _:
                return
        if streamed:
            self._mark_streamed()

    def _mark_streamed(self) -> None:
        if self._current_message is not None:
            self._streamed_messages.add(self._current_message)

    def _on_assistant(self, message: messages.MessageBody | None) -> None:
        message_id = message.id if message is not None else None
        streamed = message_id is not None and message_id in self._streamed_messages
        for block in _blocks(message):
            match block:
                case messages.TextBlock(text=text) if not streamed:
                    self._text.text(text)
                case messages.ThinkingBlock(thinking=thinking) if not streamed:
                    self._text.thinking(thinking)
                case messages.ToolUseBlock():
                    self._on_tool_use(block)
                case _:
                    pass

    def _on_tool_use(self, block: messages.ToolUseBlock) -> None:
        tool_use_id = block.id or None
        name = block.name or "tool"
        if tool_use_id is None:
            return
        tool_input = block.input or {}
        self.tracker.upsert(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": tool_use_id,
                "title": name,
                "kind": TOOL_KINDS.get(name),
                "rawInput": tool_input,
                "status": "pending",
            }
        )
        if name in SUBAGENT_TOOLS and tool_use_id not in self._subagents.by_id:
            title = text_of(tool_input.get("description")) or text_of(tool_input.get("prompt"))
            self._subagents.by_id[tool_use_id] = Subagent(item_id=f"claude:{tool_use_id}", title=title)
            self._subagents.snapshot()

    def _on_user(self, message: messages.MessageBody | None) -> None:
        for block in _blocks(message):
            if not isinstance(block, messages.ToolResultBlock) or not block.tool_use_id:
                continue
            tool_use_id = block.tool_use_id
            failed = block.is_error is True
            output = output_text(block.content)
            self.tracker.upsert(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tool_use_id,
                    "status": "failed" if failed else "completed",
                    "content": [{"type": "content", "content": {"type": "text", "text": output}}]
                    if output
                    else [],
                }
            )
            subagent = self._subagents.by_id.get(tool_use_id)
            if subagent is not None and subagent.status == "running":
                subagent.status = "failed" if failed else "completed"
                if output:
                    subagent.summary = excerpt(output, _SUMMARY_LIMIT)
                self._subagents.snapshot()

    # -- subagents ------------------------------------------------------------------------------------------

    def _on_subagent_message(self, parent: str, message: messages.MessageBody | None) -> None:
        subagent = self._subagents.by_id.get(parent)
        if subagent is None:
            return
        texts = [
            block.text for block in _blocks(message) if isinstance(block, messages.TextBlock) and block.text
        ]
        if texts:
            subagent.summary = excerpt("".join(texts), _SUMMARY_LIMIT)
            self._subagents.snapshot()

    def _on_subagent_results(self, parent: str, message: messages.MessageBody | None) -> None:
        subagent = self._subagents.by_id.get(parent)
        if subagent is None:
            return
        finished = sum(1 for block in _blocks(message) if isinstance(block, messages.ToolResultBlock))
        if finished:
            subagent.tool_calls += finished
            self._subagents.snapshot()

    def stop_subagents(self) -> None:
        """Mark every subagent still running as stopped (a cancelled or failed turn)."""
        self._subagents.stop_running()

    # -- the end --------------------------------------------------------------------------------------------

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end`` from the ``result`` message (its text first when none streamed); every call
        still open is ended. Returned, not emitted."""
        result = self.result or messages.ResultMessage()
        if not self.streamed_text:
            self._text.text(result.result)
        self.tracker.close_all("Not finished: the turn ended before this call's outcome was reported.")
        self.stop_subagents()
        usage = result.usage
        fresh = written = cached = output = None
        if usage is not None:
            fresh, output = as_count(usage.input_tokens), as_count(usage.output_tokens)
            written, cached = (
                as_count(usage.cache_creation_input_tokens),
                as_count(usage.cache_read_input_tokens),
            )
        written, cached = written or 0, cached or 0
        total_input = None if fresh is None else fresh + written + cached
        stop: StopReason = (
            "step_limit"
            if result.subtype == _MAX_TURNS
            else _STOP_REASONS.get(result.stop_reason or "", "completed")
        )
        return TurnEndEvent(
            input_tokens=total_input,
            output_tokens=output,
            total_tokens=None if total_input is None or output is None else total_input + output,
            cached_input_tokens=cached or None,
            stop_reason=stop,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )


def result_failure(result: messages.ResultMessage) -> str | None:
    """Why a ``result`` message says the turn failed (``is_error`` or ``errors``, authoritative as in the SDK),
    or ``None`` when it did not. Running out of turns is a stop reason, not a failure."""
    if result.subtype == _MAX_TURNS:
        return None
    errors = [text for text in map(text_of, result.errors or ()) if text is not None]
    if result.is_error is not True and not errors:
        return None
    detail = "; ".join(errors) or result.result or result.subtype or "an error"
    return f"Claude Code ended the turn with an error: {detail}"


def _blocks(message: messages.MessageBody | None) -> list[messages.Block]:
    """The content blocks of ``message`` hive reads (a text content, the prompt's echo, has none)."""
    if message is None or not isinstance(message.content, list):
        return []
    return [block for block in map(messages.BLOCKS.decode, message.content) if not isinstance(block, Unknown)]
