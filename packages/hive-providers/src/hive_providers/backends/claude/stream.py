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

import json
import time
from collections.abc import Mapping
from typing import Any, Final

from hive_core.tools import EventSink
from hive_protocol import (
    StopReason,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    TurnEndEvent,
)
from hive_providers.backends.kit.json_values import as_count, as_list, as_mapping
from hive_providers.backends.kit.subagent_work import Subagent, stop_running, subagent_work
from hive_providers.backends.kit.tool_calls import ToolCallTracker, excerpt, text_of
from hive_providers.backends.kit.tool_use_permissions import TOOL_USE_KINDS

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
        self.tracker = tracker
        """The turn's tool calls."""
        self.session_id: str | None = None
        """The CLI's session id, from ``system/init`` (or any message carrying one)."""
        self.result: dict[str, Any] | None = None
        """The ``result`` message, once it came: the end of the turn."""
        self.streamed_text = False
        """Whether any text reached the client."""
        self._streamed_messages: set[str] = set()
        self._current_message: str | None = None
        self._subagents: dict[str, Subagent] = {}
        self._started = time.monotonic()

    # -- input ----------------------------------------------------------------------------------------------

    def on_message(self, message: Mapping[str, Any]) -> None:
        """Map one stdout message (control messages are the channel's, not this mapper's)."""
        session = text_of(message.get("session_id"))
        if session is not None and self.session_id is None:
            self.session_id = session
        parent = text_of(message.get("parent_tool_use_id"))
        match message.get("type"):
            case "system":
                if message.get("subtype") == "init" and session is not None:
                    self.session_id = session
            case "stream_event":
                if parent is None:
                    self._on_stream_event(as_mapping(message.get("event")))
            case "assistant":
                if parent is not None:
                    self._on_subagent_message(parent, as_mapping(message.get("message")))
                else:
                    self._on_assistant(as_mapping(message.get("message")))
            case "user":
                if parent is not None:
                    self._on_subagent_results(parent, as_mapping(message.get("message")))
                else:
                    self._on_user(as_mapping(message.get("message")))
            case "result":
                self.result = dict(message)
            case _:
                pass

    def _on_stream_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self._current_message = text_of(as_mapping(event.get("message")).get("id"))
            return
        if kind != "content_block_delta":
            return
        delta = as_mapping(event.get("delta"))
        match delta.get("type"):
            case "text_delta":
                text = text_of(delta.get("text"))
                if text is not None:
                    self._mark_streamed()
                    self.streamed_text = True
                    self._emit(TextDeltaEvent(content=text))
            case "thinking_delta":
                thinking = text_of(delta.get("thinking"))
                if thinking is not None:
                    self._mark_streamed()
                    self._emit(ThinkingDeltaEvent(content=thinking))
            case _:
                pass

    def _mark_streamed(self) -> None:
        if self._current_message is not None:
            self._streamed_messages.add(self._current_message)

    def _on_assistant(self, message: Mapping[str, Any]) -> None:
        message_id = text_of(message.get("id"))
        streamed = message_id is not None and message_id in self._streamed_messages
        for block in map(as_mapping, as_list(message.get("content"))):
            match block.get("type"):
                case "text" if not streamed:
                    text = text_of(block.get("text"))
                    if text is not None:
                        self.streamed_text = True
                        self._emit(TextDeltaEvent(content=text))
                case "thinking" if not streamed:
                    thinking = text_of(block.get("thinking"))
                    if thinking is not None:
                        self._emit(ThinkingDeltaEvent(content=thinking))
                case "tool_use" | "server_tool_use":
                    self._on_tool_use(block)
                case _:
                    pass

    def _on_tool_use(self, block: Mapping[str, Any]) -> None:
        tool_use_id = text_of(block.get("id"))
        name = text_of(block.get("name")) or "tool"
        if tool_use_id is None:
            return
        tool_input = as_mapping(block.get("input"))
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
        if name in SUBAGENT_TOOLS and tool_use_id not in self._subagents:
            title = text_of(tool_input.get("description")) or text_of(tool_input.get("prompt"))
            self._subagents[tool_use_id] = Subagent(item_id=f"claude:{tool_use_id}", title=title)
            self._snapshot()

    def _on_user(self, message: Mapping[str, Any]) -> None:
        for block in map(as_mapping, as_list(message.get("content"))):
            if block.get("type") != "tool_result":
                continue
            tool_use_id = text_of(block.get("tool_use_id"))
            if tool_use_id is None:
                continue
            failed = block.get("is_error") is True
            output = _result_text(block.get("content"))
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
            subagent = self._subagents.get(tool_use_id)
            if subagent is not None and subagent.status == "running":
                subagent.status = "failed" if failed else "completed"
                if output:
                    subagent.summary = excerpt(output, _SUMMARY_LIMIT)
                self._snapshot()

    # -- subagents ------------------------------------------------------------------------------------------

    def _on_subagent_message(self, parent: str, message: Mapping[str, Any]) -> None:
        subagent = self._subagents.get(parent)
        if subagent is None:
            return
        texts = [
            text
            for block in map(as_mapping, as_list(message.get("content")))
            if block.get("type") == "text" and (text := text_of(block.get("text"))) is not None
        ]
        if texts:
            subagent.summary = excerpt("".join(texts), _SUMMARY_LIMIT)
            self._snapshot()

    def _on_subagent_results(self, parent: str, message: Mapping[str, Any]) -> None:
        subagent = self._subagents.get(parent)
        if subagent is None:
            return
        finished = sum(
            1
            for block in map(as_mapping, as_list(message.get("content")))
            if block.get("type") == "tool_result"
        )
        if finished:
            subagent.tool_calls += finished
            self._snapshot()

    def stop_subagents(self) -> None:
        """Mark every subagent still running as stopped (a cancelled or failed turn)."""
        if stop_running(self._subagents.values()):
            self._snapshot()

    def _snapshot(self) -> None:
        self._emit(subagent_work(self._subagents.values()))

    # -- the end --------------------------------------------------------------------------------------------

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end`` from the ``result`` message (its text first when none streamed); every call
        still open is ended. Returned, not emitted."""
        result = self.result or {}
        if not self.streamed_text:
            text = text_of(result.get("result"))
            if text is not None:
                self._emit(TextDeltaEvent(content=text))
        self.tracker.close_all("Not finished: the turn ended before this call's outcome was reported.")
        self.stop_subagents()
        usage = as_mapping(result.get("usage"))
        fresh = as_count(usage.get("input_tokens"))
        written = as_count(usage.get("cache_creation_input_tokens")) or 0
        cached = as_count(usage.get("cache_read_input_tokens")) or 0
        output = as_count(usage.get("output_tokens"))
        total_input = None if fresh is None else fresh + written + cached
        reason = result.get("stop_reason")
        stop: StopReason = (
            "step_limit"
            if result.get("subtype") == _MAX_TURNS
            else _STOP_REASONS.get(reason, "completed")
            if isinstance(reason, str)
            else "completed"
        )
        return TurnEndEvent(
            input_tokens=total_input,
            output_tokens=output,
            total_tokens=None if total_input is None or output is None else total_input + output,
            cached_input_tokens=cached or None,
            stop_reason=stop,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )


def result_failure(result: Mapping[str, Any]) -> str | None:
    """Why a ``result`` message says the turn failed (``is_error`` or ``errors``, authoritative as in the SDK),
    or ``None`` when it did not. Running out of turns is a stop reason, not a failure."""
    if result.get("subtype") == _MAX_TURNS:
        return None
    errors = [text for text in map(text_of, as_list(result.get("errors"))) if text is not None]
    if result.get("is_error") is not True and not errors:
        return None
    detail = (
        "; ".join(errors) or text_of(result.get("result")) or text_of(result.get("subtype")) or "an error"
    )
    return f"Claude Code ended the turn with an error: {detail}"


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in map(as_mapping, as_list(content)):
        text = text_of(block.get("text"))
        if text is not None:
            parts.append(text)
        elif block:
            parts.append(json.dumps(block, ensure_ascii=False, default=str))
    return "\n".join(parts)
