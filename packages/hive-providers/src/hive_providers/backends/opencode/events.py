"""The SSE events of ``opencode serve`` (1.18) as hive events: one :class:`OpenCodeEventMapper` per turn.

The server's stream carries every session's events; only the prompted session's and its child sessions' count,
the rest (other clients, plugins, catalogs) is ignored. What maps to what:

* ``message.part.delta`` of a ``text`` (``reasoning``) part of an assistant message becomes ``text_delta``
  (``thinking_delta``); the part's ``message.part.updated`` repeats the whole text, so only what the deltas did
  not already carry is emitted (no double text). Parts of user messages (the prompt's echo) are skipped;
* a ``tool`` part is one call through :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`, started
  once its input is known (``running``) and ended by ``completed`` / ``error``;
* each ``step-finish`` part adds its tokens; ``session.idle`` of the prompted session (after it went busy) ends
  the turn; ``session.error`` records the failure (``MessageAbortedError``: the turn was cancelled); OpenCode
  2.0's ``session.execution.succeeded`` / ``failed`` / ``interrupted`` are terminal too (the seed's wire);
* a session whose ``parentID`` is the prompted session (or one of its children) is a subagent (the ``task``
  tool): an ``agent_work`` snapshot item ``opencode:<childSessionId>`` with its title, status, latest text and
  finished tool calls. A child's text and tools never enter the turn's own stream.

Malformed events (missing fields, wrong types) are absorbed: they change nothing (:mod:`.wire` reads them).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

import msgspec

from hive_core.tools import EventSink
from hive_protocol import StopReason
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.json_values import as_count
from hive_providers.backends.kit.subagent_work import Subagent
from hive_providers.backends.kit.subagent_work import Subagents
from hive_providers.backends.kit.text_stream import TextStream
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_kinds import by_kind
from hive_providers.backends.kit.wire import Unknown

from . import wire

__all__ = ["TOOL_KINDS", "OpenCodeEventMapper", "tool_kind"]

_EDIT_TOOLS: Final = "edit write patch multiedit apply_patch"
TOOL_KINDS: Final = by_kind(
    execute="bash", read="read", edit=_EDIT_TOOLS, search="grep glob list", fetch="webfetch"
)
"""OpenCode's built-in tools by the ACP kind whose hive tool name their ``tool_start`` carries (``bash`` ->
``execute_command``); other tools (``question``, ``task``, MCP tools) keep their own name."""

_STATUSES: Final[Mapping[str, str]] = {
    "pending": "pending",
    "running": "in_progress",
    "completed": "completed",
    "error": "failed",
}
_STOP_REASONS: Final[Mapping[str, StopReason]] = {
    "length": "output_limit",
    "content-filter": "content_filter",
}
_ABORTED: Final = "MessageAbortedError"
_UNFINISHED: Final = "Not finished: the turn ended before this call's outcome was reported."


def tool_kind(tool: str) -> str | None:
    """The ACP kind of OpenCode tool ``tool`` (``bash`` -> ``execute``), ``None`` for the others."""
    return TOOL_KINDS.get(tool)


@dataclass(kw_only=True)
class _Child(Subagent):
    """One subagent session."""

    session_id: str
    texts: dict[str, str] = field(default_factory=dict[str, str])
    ended_calls: set[str] = field(default_factory=set[str])


@dataclass(frozen=True)
class _PendingTool:
    """A call whose part said ``pending``: started when it runs, or when a permission names it."""

    tool: str
    arguments: dict[str, object]


class OpenCodeEventMapper:
    """Maps one turn's OpenCode events to hive events (see the module)."""

    def __init__(self, emit: EventSink, tracker: ToolCallTracker, session_id: str) -> None:
        self._emit = emit
        self._text = TextStream(emit)
        self.tracker = tracker
        """The turn's tool calls."""
        self.session_id = session_id
        """The prompted session's id."""
        self.busy = False
        """Whether the prompted session went busy: an ``idle`` before that is left over from an earlier turn."""
        self.idle = False
        """Whether the prompted session is idle (after it went busy)."""
        self.error: str | None = None
        """The failure ``session.error`` (or an assistant message's ``error``) reported, if any."""
        self.aborted = False
        """Whether OpenCode reported the run aborted (``MessageAbortedError``)."""
        self.finish_reason: str | None = None
        """The last ``step-finish`` part's ``reason`` (``stop``, ``tool-calls``, ``length``)."""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cached_tokens = 0
        self.children = Subagents[_Child](emit)
        """The subagent sessions seen, by session id."""
        self._counted = False
        self._roles: dict[str, str] = {}
        self._parts: dict[str, str] = {}
        self._emitted: dict[str, int] = {}
        self._pending_tools: dict[str, _PendingTool] = {}
        self._started = time.monotonic()

    @property
    def ended(self) -> bool:
        """The prompted session is idle after its run and no subagent still runs (the hold-open rule)."""
        return self.idle and not any(child.status == "running" for child in self.children.by_id.values())

    def owns(self, session_id: str | None) -> bool:
        """Whether ``session_id`` is the prompted session or one of its subagents."""
        return session_id == self.session_id or (session_id is not None and session_id in self.children.by_id)

    def on_event(self, event: wire.Event | Unknown) -> None:
        """Map one SSE event (questions and permissions are the backend's, not this mapper's)."""
        if type(event) is Unknown:
            return
        props = event.properties
        session_id = props.session_id or None
        match event:
            case wire.SessionCreated():
                if props.info is not None:
                    self._on_session(props.info)
            case wire.SessionStatus():
                self._on_status(session_id, props.status.type if props.status is not None else None)
            case wire.SessionIdle():
                self._on_status(session_id, "idle")
            case wire.SessionError():
                self._on_error(session_id, props.error)
            case wire.MessageUpdated():
                if props.info is not None:
                    self._on_message(props.info)
            case wire.MessagePartDelta():
                self._on_delta(props)
            case wire.MessagePartUpdated():
                part = wire.PARTS.decode(props.part)
                if not isinstance(part, Unknown):
                    self._on_part(part)
            case wire.ExecutionEnd():
                self._on_execution(event)

    # -- sessions -----------------------------------------------------------------------------------------------

    def _on_session(self, info: wire.Info) -> None:
        child_id, parent = info.id or None, info.parent_id or None
        if child_id is None or parent is None or child_id == self.session_id or not self.owns(parent):
            return
        child = self.children.by_id.get(child_id)
        title = info.title or None
        if child is None:
            self.children.by_id[child_id] = _Child(
                item_id=f"opencode:{child_id}", session_id=child_id, title=title
            )
            self.children.snapshot()
        elif title is not None and title != child.title:
            child.title = title
            self.children.snapshot()

    def _on_status(self, session_id: str | None, status: str | None) -> None:
        if session_id == self.session_id:
            if status in ("busy", "retry"):
                self.busy, self.idle = True, False
            elif status == "idle" and self.busy:
                self.idle = True
            return
        child = self.children.by_id.get(session_id or "")
        if child is not None and status == "idle" and child.status == "running":
            child.status = "completed"
            self.children.snapshot()
        elif child is not None and status == "busy" and child.status != "running":
            child.status = "running"
            self.children.snapshot()

    def _on_error(self, session_id: str | None, error: wire.Failure | None) -> None:
        name = (error.name or None) if error is not None else None
        detail = error.data.message if error is not None and error.data is not None else None
        message = detail or name or "no reason given"
        if session_id == self.session_id or session_id is None:
            if name == _ABORTED:
                self.aborted = True
            else:
                self.error = message
            return
        child = self.children.by_id.get(session_id)
        if child is not None:
            child.status = "stopped" if name == _ABORTED else "failed"
            child.summary = message if name != _ABORTED else child.summary
            self.children.snapshot()

    def _on_execution(self, event: wire.ExecutionEnd) -> None:
        """OpenCode 2.0's run ends (the seed's wire): each is terminal for the prompted session."""
        props = event.properties
        if (props.session_id or None) != self.session_id:
            return
        if isinstance(event, wire.ExecutionInterrupted):
            self.aborted = True
        elif isinstance(event, wire.ExecutionFailed):
            message = props.error.message if props.error is not None else None
            self.error = message or props.reason or "the run failed"
        self.busy = self.idle = True

    # -- messages and parts -------------------------------------------------------------------------------------

    def _on_message(self, info: wire.Info) -> None:
        message_id, role = info.id or None, info.role or None
        if message_id is None or role is None or not self.owns(info.session_id or None):
            return
        self._roles[message_id] = role

    def _assistant(self, message_id: str | None, part: wire.TextPart | None = None) -> bool:
        role = self._roles.get(message_id or "")
        if role is not None:
            return role == "assistant"
        # A part that arrived before its message: the prompt's echo has no timing, assistant text has.
        return part is not None and part.time is not msgspec.UNSET

    def _on_delta(self, props: wire.Properties) -> None:
        part_id, delta = props.part_id, props.delta
        if not part_id or not delta or props.field != "text":
            return
        if not self._assistant(props.message_id or None):
            return
        session_id = props.session_id or None
        if session_id == self.session_id:
            self._stream(part_id, self._parts.get(part_id, "text"), delta)
        elif (child := self.children.by_id.get(session_id or "")) is not None:
            child.texts[part_id] = child.texts.get(part_id, "") + delta

    def _stream(self, part_id: str, kind: str, delta: str) -> None:
        self._emitted[part_id] = self._emitted.get(part_id, 0) + len(delta)
        if kind == "reasoning":
            self._text.thinking(delta)
        else:
            self._text.text(delta)

    def _on_part(self, part: wire.Part) -> None:
        session_id, part_id = part.session_id or None, part.id or None
        if part_id is None:
            return
        if session_id == self.session_id:
            self._parts[part_id] = "reasoning" if isinstance(part, wire.ReasoningPart) else "text"
            self._on_own_part(part_id, part)
        elif (child := self.children.by_id.get(session_id or "")) is not None:
            self._on_child_part(child, part_id, part)

    def _on_own_part(self, part_id: str, part: wire.Part) -> None:
        match part:
            case wire.TextPart(text=text):
                if not self._assistant(part.message_id or None, part):
                    return
                emitted = self._emitted.get(part_id, 0)
                if text is not None and len(text) > emitted:
                    self._stream(
                        part_id,
                        "reasoning" if isinstance(part, wire.ReasoningPart) else "text",
                        text[emitted:],
                    )
            case wire.ToolPart():
                self._on_tool(part)
            case wire.StepFinishPart():
                self._on_step_finish(part)
            case _:
                pass

    def _on_tool(self, part: wire.ToolPart) -> None:
        call_id, tool = part.call_id or None, part.tool or "tool"
        if call_id is None or part.state is None:
            return
        state = part.state
        status = _STATUSES.get(state.status or "")
        if status is None:
            return
        started = self.tracker_has(call_id)
        raw_input = state.input or {}
        if status == "pending" and not started:
            self._pending_tools[call_id] = _PendingTool(tool, raw_input)
            return
        update: dict[str, object] = {
            "sessionUpdate": "tool_call_update" if started else "tool_call",
            "toolCallId": call_id,
            "title": tool,
            "kind": tool_kind(tool),
            "status": status,
        }
        if raw_input:
            update["rawInput"] = raw_input
        output = state.output if status == "completed" else state.error
        if output:
            update["content"] = [{"type": "content", "content": {"type": "text", "text": output}}]
        self._pending_tools.pop(call_id, None)
        self.tracker.upsert(update)

    def start_call(self, call_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
        """The hive call id of OpenCode call ``call_id``, starting it (with ``arguments`` when its part has no
        input yet) when it has not started: a permission can come before the part says ``running``."""
        pending = self._pending_tools.pop(call_id, None)
        if not self.tracker_has(call_id):
            raw = (pending.arguments if pending is not None else None) or dict(arguments)
            name = (pending.tool if pending is not None else None) or tool
            self.tracker.upsert(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": name,
                    "kind": tool_kind(name),
                    "rawInput": raw,
                    "status": "pending",
                }
            )
        return self.tracker.correlate({"toolCallId": call_id})

    def tracker_has(self, call_id: str) -> bool:
        """Whether OpenCode call ``call_id`` started (and has a hive call)."""
        return any(call_id in call.acp_ids for call in self.tracker.calls)

    def _on_step_finish(self, part: wire.StepFinishPart) -> None:
        self.finish_reason = part.reason or self.finish_reason
        tokens = part.tokens
        if tokens is None:
            return
        fresh, output = as_count(tokens.input), as_count(tokens.output)
        if fresh is None and output is None:
            return
        self._counted = True
        cache = tokens.cache
        read = (as_count(cache.read) if cache is not None else None) or 0
        write = (as_count(cache.write) if cache is not None else None) or 0
        self.input_tokens += (fresh or 0) + read + write
        self.output_tokens += output or 0
        self.cached_tokens += read

    def _on_child_part(self, child: _Child, part_id: str, part: wire.Part) -> None:
        if type(part) is wire.TextPart and part.text:
            text = part.text
            child.texts[part_id] = text
            if text != child.summary:
                child.summary = text
                self.children.snapshot()
        elif isinstance(part, wire.ToolPart):
            call_id = part.call_id or None
            status = part.state.status if part.state is not None else None
            if call_id is not None and status in ("completed", "error") and call_id not in child.ended_calls:
                child.ended_calls.add(call_id)
                child.tool_calls += 1
                self.children.snapshot()

    def stop_children(self) -> None:
        """Mark every subagent still running as stopped (a cancelled or failed turn)."""
        self.children.stop_running()

    def finish(self) -> TurnEndEvent:
        """The turn's ``turn_end``; every call still open is ended. Returned, not emitted."""
        self.tracker.close_all(_UNFINISHED)
        self.stop_children()
        counted = self._counted
        stop: StopReason = (
            "cancelled" if self.aborted else _STOP_REASONS.get(self.finish_reason or "", "completed")
        )
        return TurnEndEvent(
            input_tokens=self.input_tokens if counted else None,
            output_tokens=self.output_tokens if counted else None,
            total_tokens=self.input_tokens + self.output_tokens if counted else None,
            cached_input_tokens=self.cached_tokens or None,
            stop_reason=stop,
            duration_ms=int((time.monotonic() - self._started) * 1000),
        )
