"""Codex's app-server notifications and thread items, as hive reads them: frozen structs.

:func:`decode_notification` decodes one notification by its ``method`` (an unknown one is an
:class:`UnknownNotification`); the ``item`` of ``item/started`` / ``item/completed`` is decoded by its ``type``
with :func:`decode_item` (an item hive does not read, ``webSearch``, ``mcpToolCall``, a later version's, is an
:class:`UnknownItem` that keeps its type). The shapes follow ``codex-rs/app-server-protocol`` (v2, camelCase),
only the fields hive reads; decoding is tolerant (:mod:`hive_providers.backends.kit.wire`, salvaging): a
field of the wrong type reads as absent.
"""

from __future__ import annotations

from typing import Final
from typing import TypeAlias

import msgspec

from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.kit.wire import WireStruct
from hive_providers.backends.kit.wire import WireUnion
from hive_providers.backends.kit.wire import decode

__all__ = [
    "AgentMessage",
    "AgentMessageDelta",
    "AgentState",
    "AppServerNotification",
    "ChangeKind",
    "CollabAgentToolCall",
    "CommandExecution",
    "ErrorNotification",
    "FileChange",
    "FileUpdate",
    "Item",
    "ItemNotification",
    "ReasoningDelta",
    "SubAgentActivity",
    "ThreadItem",
    "TokenBreakdown",
    "TokenUsage",
    "TokenUsageUpdated",
    "Turn",
    "TurnError",
    "TurnNotification",
    "UnknownItem",
    "UnknownNotification",
    "camel_case",
    "decode_item",
    "decode_notification",
]


class _Camel(WireStruct, frozen=True, rename="camel"):
    """The app-server's fields are camelCase."""


# -- items ------------------------------------------------------------------------------------------------------


class ThreadItem(_Camel, frozen=True):
    """What every item has: its id."""

    id: str | None = None
    """The item's id (a tool call's, for the items that are calls)."""


class AgentMessage(ThreadItem, frozen=True, tag_field="type", tag="agentMessage"):
    """A message of the agent."""

    text: str | None = None
    """The whole message (on ``item/completed``)."""


class CommandExecution(ThreadItem, frozen=True, tag_field="type", tag="commandExecution"):
    """A command Codex runs."""

    command: str | None = None
    """The command line (a shell's ``-lc`` wrapper around it)."""
    aggregated_output: str | None = None
    """Its output, stdout and stderr."""
    exit_code: int | None = None
    """Its exit status."""
    status: str | None = None
    """``inProgress``, ``completed``, ``failed`` or ``declined``."""


class ChangeKind(_Camel, frozen=True):
    """What a file change does."""

    type: str | None = None
    """``add``, ``delete`` or ``update``."""


class FileUpdate(_Camel, frozen=True):
    """One file of a file change."""

    path: str | None = None
    """The file."""
    diff: str | None = None
    """Its unified diff."""
    kind: ChangeKind | None = None
    """What happens to it."""


class FileChange(ThreadItem, frozen=True, tag_field="type", tag="fileChange"):
    """An edit of files Codex makes."""

    changes: list[FileUpdate] = msgspec.field(default_factory=list[FileUpdate])
    """The files."""
    status: str | None = None
    """As a command's."""


class AgentState(_Camel, frozen=True):
    """A sub-agent's last known state, as a collab call reports it."""

    status: str | None = None
    """``CollabAgentStatus``: ``pendingInit``, ``running``, ``completed``, ``errored``... (camel or snake)."""
    message: str | None = None
    """Its latest message."""


class CollabAgentToolCall(ThreadItem, frozen=True, tag_field="type", tag="collabAgentToolCall"):
    """A call of Codex's collab tools (``spawnAgent``, ``wait``, ``sendInput``, ``closeAgent``...)."""

    tool: str | None = None
    """The collab tool."""
    status: str | None = None
    """The call's status (``failed``: a spawn that started no thread)."""
    prompt: str | None = None
    """The task of a spawn."""
    receiver_thread_ids: list[str] = msgspec.field(default_factory=list[str])
    """The sub-agents' threads the call is about."""
    agents_states: dict[str, AgentState] = msgspec.field(default_factory=dict[str, AgentState])
    """The sub-agents' states, by thread."""


class SubAgentActivity(ThreadItem, frozen=True, tag_field="type", tag="subAgentActivity"):
    """What happened to a sub-agent (``multi_agent_v2``)."""

    agent_thread_id: str | None = None
    """The sub-agent's thread."""
    agent_path: str | None = None
    """Its name."""
    kind: str | None = None
    """``started``, ``interacted``, ``interrupted`` or ``completed``."""


class UnknownItem(ThreadItem, frozen=True):
    """An item hive does not map (``webSearch``, ``mcpToolCall``, ``reasoning``... or a later version's)."""

    type: str | None = None
    """Its ``type``."""


_KnownItem: TypeAlias = AgentMessage | CommandExecution | FileChange | CollabAgentToolCall | SubAgentActivity

Item = _KnownItem | UnknownItem
"""One thread item, decoded."""

_ITEMS: Final = WireUnion[_KnownItem].of("type", _KnownItem, salvage=True)


def decode_item(item: object) -> Item:
    """Decode one raw item by its ``type`` (an unknown one keeps its id: it may be a tool call's)."""
    decoded = _ITEMS.decode(item)
    if isinstance(decoded, Unknown):
        return UnknownItem(type=decoded.kind, id=decode(decoded.raw, ThreadItem).id)
    return decoded


# -- notifications ----------------------------------------------------------------------------------------------


class TokenBreakdown(_Camel, frozen=True):
    """Token counts."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_input_tokens: int | None = None


class TokenUsage(_Camel, frozen=True):
    """A thread's usage: ``total`` so far, and the ``last`` model request's."""

    total: TokenBreakdown | None = None
    last: TokenBreakdown | None = None


class TurnError(_Camel, frozen=True):
    """Why a turn failed."""

    message: str | None = None
    additional_details: str | None = None
    codex_error_info: str | dict[str, object] | None = None
    """The ``CodexErrorInfo`` variant: a string, or an object keyed by the variant."""


class Turn(_Camel, frozen=True):
    """A turn, as ``turn/started`` and ``turn/completed`` carry it."""

    id: str | None = None
    status: str | None = None
    """``inProgress``, ``completed``, ``interrupted`` or ``failed``."""
    root_turn_id: str | None = None
    """For a sub-agent's turn: the main thread's turn it serves."""
    error: TurnError | None = None
    duration_ms: int | None = None


class _Params(_Camel, frozen=True):
    thread_id: str | None = None
    """The thread the notification is about."""
    turn_id: str | None = None
    """The turn, when it names one."""


class _Delta(_Params, frozen=True):
    delta: str | None = None
    """The piece of text."""


class AgentMessageDelta(_Delta, frozen=True):
    """``item/agentMessage/delta``: a piece of a message."""

    item_id: str | None = None


class ReasoningDelta(_Delta, frozen=True):
    """``item/reasoning/textDelta`` or ``item/reasoning/summaryTextDelta``: a piece of reasoning."""


class ItemNotification(_Params, frozen=True, kw_only=True):
    """``item/started`` or ``item/completed``."""

    item: Item
    """The item, decoded by its ``type``."""
    completed: bool
    """Whether it is ``item/completed``."""


class _ItemParams(_Params, frozen=True):
    item: dict[str, object] | None = None


class TokenUsageUpdated(_Params, frozen=True):
    """``thread/tokenUsage/updated``."""

    token_usage: TokenUsage | None = None


class TurnNotification(_Params, frozen=True, kw_only=True):
    """``turn/started`` or ``turn/completed``."""

    turn: Turn | None
    completed: bool
    """Whether it is ``turn/completed``."""


class _TurnParams(_Params, frozen=True):
    turn: Turn | None = None


class ErrorNotification(_Params, frozen=True):
    """``error``: a failure, which Codex may retry."""

    error: TurnError | None = None
    will_retry: bool | None = None


class UnknownNotification(_Params, frozen=True, kw_only=True):
    """A notification hive does not read."""

    method: str
    """Its method."""


AppServerNotification = (
    AgentMessageDelta
    | ReasoningDelta
    | ItemNotification
    | TokenUsageUpdated
    | TurnNotification
    | ErrorNotification
    | UnknownNotification
)
"""One app-server notification, decoded."""


def decode_notification(method: str, params: object) -> AppServerNotification:
    """Decode one notification's ``params`` by its ``method``."""
    match method:
        case "item/agentMessage/delta":
            return decode(params, AgentMessageDelta)
        case "item/reasoning/textDelta" | "item/reasoning/summaryTextDelta":
            return decode(params, ReasoningDelta)
        case "item/started" | "item/completed":
            items = decode(params, _ItemParams)
            return ItemNotification(
                thread_id=items.thread_id,
                turn_id=items.turn_id,
                item=decode_item(items.item),
                completed=method == "item/completed",
            )
        case "thread/tokenUsage/updated":
            return decode(params, TokenUsageUpdated)
        case "turn/started" | "turn/completed":
            turn = decode(params, _TurnParams)
            return TurnNotification(
                thread_id=turn.thread_id,
                turn_id=turn.turn_id,
                turn=turn.turn,
                completed=method == "turn/completed",
            )
        case "error":
            return decode(params, ErrorNotification)
        case _:
            other = decode(params, _Params)
            return UnknownNotification(thread_id=other.thread_id, turn_id=other.turn_id, method=method)


def camel_case(name: str) -> str:
    """``snake_case`` as ``snakeCase`` (``exec --json`` spells the app-server's names in snake case)."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)
