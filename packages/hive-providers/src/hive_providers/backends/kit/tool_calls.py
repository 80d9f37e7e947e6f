"""ACP tool calls as hive tool calls: one ``tool_start`` and one ``tool_end`` per call, whatever the agent sends.

ACP tool-call identity is unreliable: Gemini sends ``tool_call_update`` for an id it never
announced, CodeBuddy announces the same id twice, Kimi prefixes ids with the step (``0:call_x``), dcode asks for
permission under an id of its own. :class:`ToolCallTracker` upserts by id and owns the hive ``call_id`` of each
call.

The id rule: a call's hive ``call_id`` is the ACP ``toolCallId`` it was first seen with, verbatim, unless that id
is already taken in the hive session (the ``taken`` set every turn's tracker shares: a model that numbers its
calls afresh each round reuses ids); then ``#2``, ``#3``... is appended. An update finds its call by the exact ACP id, else by the id with a
step prefix (``<digits>:``) removed among the calls still running, so ``0:call_x`` and ``call_x`` are one call
while it runs, and ``1:call_x`` after ``0:call_x`` ended is a new one. A ``tool_call`` (creation) for an id whose
call already ended starts a new call; a ``tool_call_update`` for it is dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final

from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tools import EventSink
from hive_protocol import RefusalKind
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent

from .json_values import as_array
from .json_values import as_mapping
from .json_values import as_object

__all__ = [
    "OUTPUT_LIMIT",
    "TOOL_NAMES",
    "ToolCallTracker",
    "TrackedCall",
    "excerpt",
    "normalise_id",
    "text_of",
    "tool_name",
]

TOOL_NAMES: Final[Mapping[str, str]] = {
    "execute": EXECUTE_COMMAND,
    "read": READ_FILE,
    "edit": EDIT_FILE,
    "delete": DELETE_FILE,
    "move": MOVE_FILE,
    "search": GREP_FILES,
    "fetch": "web_fetch",
    "think": "think",
}
"""ACP ``ToolKind`` to the hive-style tool name a ``tool_start`` carries."""

OUTPUT_LIMIT: Final = 8000
"""Characters of a tool's output kept in its ``tool_end`` (the start, with a note of what was cut)."""

_STEP_PREFIX: Final = re.compile(r"^\d+:")
_NOT_WORD: Final = re.compile(r"[^0-9a-zA-Z]+")
_ENDED: Final = ("completed", "failed")


def normalise_id(acp_id: str) -> str:
    """``acp_id`` without a step prefix: ``0:call_x`` -> ``call_x``."""
    return _STEP_PREFIX.sub("", acp_id, count=1)


def tool_name(kind: object, title: object) -> str:
    """The hive-style tool name for an ACP ``kind`` and ``title``: the kind's hive tool, else the title in
    snake case (``Ask User`` -> ``ask_user``), else ``tool``."""
    if isinstance(kind, str) and kind in TOOL_NAMES:
        return TOOL_NAMES[kind]
    if isinstance(title, str):
        words = _NOT_WORD.sub("_", title.strip().lower()).strip("_")
        if words:
            return words[:64]
    return "tool"


@dataclass
class TrackedCall:
    """One ACP tool call as the tracker knows it."""

    call_id: str
    """The hive ``call_id`` of its ``tool_start`` and ``tool_end``."""
    acp_ids: set[str]
    """Every ACP id it was seen under."""
    tool: str
    """The hive-style tool name of its ``tool_start``."""
    input: Any
    """The input of its ``tool_start``."""
    title: str | None = None
    """The agent's latest title for it."""
    kind: str | None = None
    """The agent's latest ``ToolKind``."""
    status: str = "pending"
    """The agent's latest status (``pending``, ``in_progress``, ``completed``, ``failed``)."""
    raw_input: Any = None
    """The agent's latest ``rawInput``."""
    raw_output: Any = None
    """The agent's latest ``rawOutput``."""
    content: list[Any] = field(default_factory=list[Any])
    """The agent's latest ``content`` list."""
    locations: list[Any] = field(default_factory=list[Any])
    """The agent's latest ``locations`` list."""
    content_input: dict[str, Any] | None = None
    """Arguments the agent streamed as text content (a JSON object, as Kimi and CodeBuddy do before they send
    ``rawInput``): the latest content that parsed as one."""
    asked: bool = False
    """Whether a permission request was correlated with it."""
    refusal: RefusalKind | None = None
    """Set when hive or the human refused its permission; its ``tool_end`` then carries it."""
    ended: bool = False
    """Whether its ``tool_end`` was emitted."""

    @property
    def running(self) -> bool:
        """Started and not yet ended."""
        return not self.ended


class ToolCallTracker:
    """Turns ACP ``tool_call`` / ``tool_call_update`` dicts into hive ``tool_start`` / ``tool_end`` events.

    ``taken`` is the set of hive call ids already used in the hive session; pass the same set to the tracker of
    every turn so ids stay unique across turns (it is updated in place).
    """

    def __init__(self, emit: EventSink, *, taken: set[str] | None = None) -> None:
        self._emit = emit
        self._taken: set[str] = taken if taken is not None else set()
        self._calls: list[TrackedCall] = []
        self._by_call: dict[str, TrackedCall] = {}
        self._by_acp: dict[str, TrackedCall] = {}
        self._by_key: dict[str, TrackedCall] = {}

    @property
    def calls(self) -> tuple[TrackedCall, ...]:
        """Every call of the turn, in the order they started."""
        return tuple(self._calls)

    def get(self, call_id: str) -> TrackedCall | None:
        """The call with hive ``call_id``."""
        return self._by_call.get(call_id)

    def upsert(self, update: Mapping[str, Any]) -> str | None:
        """Create or update the call of a ``tool_call``/``tool_call_update`` dict; its hive call id (``None``
        when the update names no id, or updates a call that already ended)."""
        acp_id = text_of(update.get("toolCallId"))
        if acp_id is None:
            return None
        creating = update.get("sessionUpdate") == "tool_call"
        call = self._find(acp_id)
        if call is None or (call.ended and creating):
            call = self._start(acp_id, update)
        elif call.ended:
            return None
        else:
            self._index(call, acp_id)
            _merge(call, update)
        if call.status in _ENDED:
            # A refused call never succeeded, whatever the agent reports (Deep Agents marks it completed, with
            # "User rejected" as its output).
            self._end(call, success=call.status == "completed" and call.refusal is None)
        return call.call_id

    def correlate(self, permission_tool_call: Mapping[str, Any]) -> str:
        """The hive call id of the call a ``session/request_permission`` is about, starting one when none fits.

        The request's id is matched like an update's; failing that, the latest running call no permission was
        asked for yet (one with the same ``rawInput`` first); failing that, a running call with the same
        ``rawInput``; failing that, a new call.
        """
        acp_id = text_of(permission_tool_call.get("toolCallId"))
        call = self._find(acp_id) if acp_id is not None else None
        if call is not None and call.ended:
            call = None
        raw_input = permission_tool_call.get("rawInput")
        if call is None:
            waiting = [c for c in reversed(self._calls) if c.running and not c.asked]
            same = [c for c in waiting if raw_input is not None and c.raw_input == raw_input]
            call = same[0] if same else waiting[0] if waiting else None
        if call is None and raw_input is not None:
            call = next((c for c in reversed(self._calls) if c.running and c.raw_input == raw_input), None)
        if call is None:
            call = self._start(acp_id or "permission", permission_tool_call)
        else:
            if acp_id is not None:
                self._index(call, acp_id)
            _merge(call, permission_tool_call)
        call.asked = True
        return call.call_id

    def latest_running(self) -> TrackedCall | None:
        """The call started last of those still running."""
        return next((call for call in reversed(self._calls) if call.running), None)

    def running_call_id(self, acp_id: str | None) -> str | None:
        """The hive id of the running call the CLI knows as ``acp_id``; ``None`` without one (or without an id)."""
        if acp_id is None:
            return None
        return next((call.call_id for call in self._calls if call.running and acp_id in call.acp_ids), None)

    def start_local(self, tool: str, arguments: dict[str, Any]) -> str:
        """Start a call of hive's own for a request the agent made outside any running call (a file read with no
        tool call announced), so that its approval sits inside a call; end it with :meth:`end`. Its id is
        ``hive-<tool>-<n>``."""
        number = sum(1 for call in self._calls if call.tool == tool and call.acp_ids == set()) + 1
        call_id = self._unique(f"hive-{tool}-{number}")
        start = _start_event(tool, call_id, arguments, None)
        call = TrackedCall(call_id=call_id, acp_ids=set(), tool=tool, input=start.input, asked=True)
        self._add(call)
        self._emit(start)
        return call_id

    def refuse(self, call_id: str, refusal: RefusalKind) -> None:
        """Record that the permission of call ``call_id`` was refused, so its failed ``tool_end`` says so."""
        call = self.get(call_id)
        if call is not None:
            call.refusal = refusal

    def end(self, call_id: str, *, success: bool, output: str | None = None) -> None:
        """End call ``call_id`` now (its ``tool_end``), unless it already ended."""
        call = self.get(call_id)
        if call is not None and call.running:
            self._end(call, success=success, output=output)

    def close_all(self, text: str) -> None:
        """End every call still running as failed, with ``text`` as its output (a cancelled or failed turn)."""
        for call in self._calls:
            if call.running:
                self._end(call, success=False, output=text)

    # -- internals ----------------------------------------------------------------------------------------------

    def _find(self, acp_id: str) -> TrackedCall | None:
        call = self._by_acp.get(acp_id)
        if call is not None:
            return call
        call = self._by_key.get(normalise_id(acp_id))
        return call if call is not None and call.running else None

    def _index(self, call: TrackedCall, acp_id: str) -> None:
        call.acp_ids.add(acp_id)
        self._by_acp[acp_id] = call
        self._by_key[normalise_id(acp_id)] = call

    def _add(self, call: TrackedCall) -> None:
        self._calls.append(call)
        self._by_call[call.call_id] = call

    def _start(self, acp_id: str, update: Mapping[str, Any]) -> TrackedCall:
        call_id = self._unique(acp_id)
        title = text_of(update.get("title"))
        kind = text_of(update.get("kind"))
        raw_input = update.get("rawInput")
        name = tool_name(kind, title)
        call = TrackedCall(call_id=call_id, acp_ids=set(), tool=name, input=None)
        _merge(call, update)
        start = _start_event(name, call_id, raw_input, title)
        call.input = start.input
        self._add(call)
        self._index(call, acp_id)
        self._emit(start)
        return call

    def _unique(self, acp_id: str) -> str:
        candidate, number = acp_id, 1
        while candidate in self._taken:
            number += 1
            candidate = f"{acp_id}#{number}"
        self._taken.add(candidate)
        return candidate

    def _end(self, call: TrackedCall, *, success: bool, output: str | None = None) -> None:
        call.ended = True
        refusal = call.refusal if not success else None
        self._emit(
            ToolEndEvent(
                tool=call.tool,
                success=success,
                output=output if output is not None else _output(call),
                call_id=call.call_id,
                refusal=refusal,
            )
        )


def _start_event(name: str, call_id: str, raw_input: Any, title: str | None) -> ToolStartEvent:
    fallback: dict[str, Any] = {"title": title} if title else {}
    if raw_input is None or raw_input == {}:
        return ToolStartEvent(tool=name, input=fallback, call_id=call_id)
    try:
        return ToolStartEvent(tool=name, input=raw_input, call_id=call_id)
    except ValueError:  # nested too deep for the protocol: the title says enough
        return ToolStartEvent(tool=name, input=fallback, call_id=call_id)


def _merge(call: TrackedCall, update: Mapping[str, Any]) -> None:
    """Copy the fields of ``update`` that have the right type onto ``call``; the rest is ignored."""
    title = text_of(update.get("title"))
    if title is not None:
        call.title = title
    kind = text_of(update.get("kind"))
    if kind is not None:
        call.kind = kind
    status = text_of(update.get("status"))
    if status in ("pending", "in_progress", *_ENDED):
        call.status = status
    if "rawInput" in update and update["rawInput"] is not None:
        call.raw_input = update["rawInput"]
    if "rawOutput" in update and update["rawOutput"] is not None:
        call.raw_output = update["rawOutput"]
    content = as_array(update.get("content"))
    if content is not None:
        call.content = list(content)
        streamed = _json_object("".join(_content_texts(call.content)))
        if streamed is not None:
            call.content_input = streamed
    locations = as_array(update.get("locations"))
    if locations is not None:
        call.locations = list(locations)


def _content_texts(content: list[Any]) -> list[str]:
    texts: list[str] = []
    for item in content:
        entry = as_mapping(item)
        if entry.get("type") == "content":
            text = _block_text(entry.get("content"))
            if text:
                texts.append(text)
    return texts


def _json_object(text: str) -> dict[str, Any] | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return as_object(value) or None


def _output(call: TrackedCall) -> str | None:
    """A call's result as text: its text content, its diffs summarised, else its ``rawOutput``."""
    parts: list[str] = []
    for item in call.content:
        entry = as_mapping(item)
        match entry.get("type"):
            case "content":
                text = _block_text(entry.get("content"))
                if text:
                    parts.append(text)
            case "diff":
                parts.append(_diff_summary(entry))
            case "terminal":
                terminal = text_of(entry.get("terminalId"))
                if terminal:
                    parts.append(f"[terminal {terminal}]")
            case _:
                pass
    if not parts and call.raw_output is not None:
        raw = call.raw_output
        parts.append(raw if isinstance(raw, str) else _json(raw))
    if not parts:
        return None
    return excerpt("\n".join(parts))


def _block_text(block: object) -> str | None:
    entry = as_object(block)
    if entry is None:
        return None
    kind = entry.get("type")
    if kind == "text":
        return text_of(entry.get("text"))
    if kind == "resource_link":
        return text_of(entry.get("uri"))
    if kind == "resource":
        inner = as_object(entry.get("resource"))
        if inner is not None:
            return text_of(inner.get("text")) or text_of(inner.get("uri"))
    return None


def _diff_summary(entry: Mapping[str, Any]) -> str:
    path = text_of(entry.get("path")) or "a file"
    old = entry.get("oldText")
    new = entry.get("newText")
    new_lines = new.count("\n") + 1 if isinstance(new, str) and new else 0
    if not isinstance(old, str) or not old:
        return f"created {path} ({new_lines} lines)"
    old_lines = old.count("\n") + 1
    return f"edited {path} ({old_lines} lines -> {new_lines} lines)"


def excerpt(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters]"


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def text_of(value: object) -> str | None:
    """``value`` when it is non-empty text, else ``None`` (tolerant reading of a field of any type)."""
    return value if isinstance(value, str) and value else None
