"""``codex exec --json``'s events and items, as hive reads them: frozen structs (snake_case, as exec prints them).

:func:`decode_exec_event` decodes one line's event by its ``type`` (an unknown one is an
:class:`~..kit.wire.Unknown`); an item event's ``item`` is decoded by its ``type`` too (an unknown one is an
:class:`UnknownExecItem`). A ``collab_tool_call`` item is the app-server's ``collabAgentToolCall`` in snake case:
it decodes to :class:`~.wire.CollabAgentToolCall`, so :class:`~.subagents.SubThreads` reads one shape. Decoding
is tolerant (:mod:`hive_providers.backends.kit.wire`, salvaging): a field of the wrong type reads as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Final
from typing import TypeAlias
from typing import cast

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireStruct
from hive_providers.backends.kit.wire import WireUnion
from hive_providers.backends.kit.wire import decode

from .wire import CollabAgentToolCall
from .wire import camel_case

__all__ = [
    "ExecAgentMessage",
    "ExecCommand",
    "ExecError",
    "ExecErrorEvent",
    "ExecEvent",
    "ExecFileChange",
    "ExecFileUpdate",
    "ExecItem",
    "ExecItemEvent",
    "ExecMcpCall",
    "ExecReasoning",
    "ExecTodoList",
    "ExecWarning",
    "McpResult",
    "ThreadStarted",
    "ThreadUsage",
    "TodoEntry",
    "TurnCompleted",
    "TurnFailed",
    "UnknownExecItem",
    "decode_exec_event",
]


class _Item(WireStruct, frozen=True):
    id: str | None = None
    """The item's id."""


class _TextItem(_Item, frozen=True):
    text: str | None = None
    """The item's whole text."""


class ExecAgentMessage(_TextItem, frozen=True, tag_field="type", tag="agent_message"):
    """A message of the agent, whole."""


class ExecReasoning(_TextItem, frozen=True, tag_field="type", tag="reasoning"):
    """The agent's reasoning, whole."""


class ExecCommand(_Item, frozen=True, tag_field="type", tag="command_execution"):
    """A command Codex runs."""

    command: str | None = None
    aggregated_output: str | None = None
    exit_code: int | None = None
    status: str | None = None
    """``in_progress``, ``completed``, ``failed`` or ``declined``."""


class ExecFileUpdate(WireStruct, frozen=True):
    """One file of a file change."""

    path: str | None = None
    kind: str | None = None
    """``add``, ``delete`` or ``update``."""


class ExecFileChange(_Item, frozen=True, tag_field="type", tag="file_change"):
    """An edit of files."""

    changes: list[ExecFileUpdate] = msgspec.field(default_factory=list[ExecFileUpdate])
    status: str | None = None


class _McpBlock(WireStruct, frozen=True):
    text: str | None = None


class McpResult(WireStruct, frozen=True):
    """An MCP tool's result."""

    content: list[_McpBlock] = msgspec.field(default_factory=list[_McpBlock])


class ExecError(WireStruct, frozen=True):
    """A failure's message."""

    message: str | None = None


class ExecMcpCall(_Item, frozen=True, tag_field="type", tag="mcp_tool_call"):
    """A call of an MCP server's tool."""

    server: str | None = None
    tool: str | None = None
    arguments: dict[str, Any] = msgspec.field(default_factory=dict[str, Any])
    result: McpResult | None = None
    error: ExecError | None = None
    status: str | None = None


class TodoEntry(WireStruct, frozen=True):
    """One step of a to-do list."""

    text: str | None = None
    completed: bool | None = None


class ExecTodoList(_Item, frozen=True, tag_field="type", tag="todo_list"):
    """The agent's plan."""

    items: list[TodoEntry] = msgspec.field(default_factory=list[TodoEntry])


class ExecWarning(_Item, frozen=True, tag_field="type", tag="error"):
    """An ``error`` item: a warning that did not stop the turn."""

    message: str | None = None


class UnknownExecItem(_Item, frozen=True):
    """An item hive does not map (``web_search``, a later version's...)."""

    type: str | None = None


ExecItem = (
    ExecAgentMessage
    | ExecReasoning
    | ExecCommand
    | ExecFileChange
    | ExecMcpCall
    | ExecTodoList
    | ExecWarning
    | CollabAgentToolCall
    | UnknownExecItem
)
"""One item of ``codex exec --json``, decoded."""

_ExecKnownItem: TypeAlias = (
    ExecAgentMessage | ExecReasoning | ExecCommand | ExecFileChange | ExecMcpCall | ExecTodoList | ExecWarning
)
_ITEMS: Final = WireUnion[_ExecKnownItem].of("type", _ExecKnownItem, salvage=True)


class ThreadStarted(WireStruct, frozen=True, tag_field="type", tag="thread.started"):
    """The thread the run is in (the session id)."""

    thread_id: str | None = None


class ExecItemEvent(WireStruct, frozen=True):
    """``item.started``, ``item.updated`` or ``item.completed``."""

    item: ExecItem
    completed: bool
    """Whether it is ``item.completed``."""


class ThreadUsage(WireStruct, frozen=True):
    """The thread's token total so far."""

    input_tokens: int | None = None
    cached_input_tokens: int | None = None
    output_tokens: int | None = None


class TurnCompleted(WireStruct, frozen=True, tag_field="type", tag="turn.completed"):
    """The end of the turn."""

    usage: ThreadUsage | None = None


class TurnFailed(WireStruct, frozen=True, tag_field="type", tag="turn.failed"):
    """The end of the turn, as a failure."""

    error: ExecError | None = None


class ExecErrorEvent(WireStruct, frozen=True, tag_field="type", tag="error"):
    """An ``error`` event: a failure's message (the turn's end comes as ``turn.failed``)."""

    message: str | None = None


_Tagged: TypeAlias = ThreadStarted | TurnCompleted | TurnFailed | ExecErrorEvent

ExecEvent = _Tagged | ExecItemEvent | Unknown
"""One line's event, decoded (an :class:`~..kit.wire.Unknown`: one hive does not read, ``turn.started``, a later
version's...)."""

_EVENTS: Final = WireUnion[_Tagged].of("type", _Tagged, salvage=True)
_ITEM_EVENTS: Final = frozenset({"item.started", "item.updated", "item.completed"})


def decode_exec_event(event: object) -> ExecEvent:
    """Decode one line's JSON value."""
    fields = _object(event)
    kind = fields.get("type")
    if isinstance(kind, str) and kind in _ITEM_EVENTS:
        return ExecItemEvent(item=_decode_item(fields.get("item")), completed=kind == "item.completed")
    return _EVENTS.decode(event)


def _decode_item(item: object) -> ExecItem:
    fields = _object(item)
    if fields.get("type") == "collab_tool_call":
        camel = {camel_case(key): value for key, value in fields.items()}
        return decode({**camel, "type": "collabAgentToolCall"}, CollabAgentToolCall)
    decoded = _ITEMS.decode(item)
    if isinstance(decoded, Unknown):
        return UnknownExecItem(type=decoded.kind, id=decode(decoded.raw, _Item).id)
    return decoded


def _object(value: object) -> Mapping[str, object]:
    return cast("Mapping[str, object]", value) if isinstance(value, Mapping) else {}
