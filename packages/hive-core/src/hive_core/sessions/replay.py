"""Rebuilding a conversation from a session's log.

The ``message`` entries are the conversation, message for message, so a turn that ended is restored exactly as
the live session held it. A turn that started and never ended (the process died) is closed the way the model
can make sense of:

- its user message is added if the crash came before it was written;
- if its last model round called tools and the round's tool message was never written, each call gets a
  result: the one its ``tool_end`` reported, or, for a call that never reported one, a ``Not finished`` error
  (or, for a call that was waiting for approval, an ``approval_unavailable`` refusal);
- a user message, :data:`INTERRUPTED_NOTE`, tells the model the turn was interrupted, unless the turn was
  *suspended*: it died while a call waited for approval, which a restarted server can resume (see
  :class:`Suspension`).

A result rebuilt from a ``tool_end`` carries what the client saw: output past
:data:`~hive_core.tool_round.TOOL_OUTPUT_EVENT_CAP` characters is cut, and the failure text stands in for the error.
Closing is computed on every restore, never written, so it comes out the same each time; a later turn's
``turn_start`` closes the turn before it the same way.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Final
from typing import Literal

from hive_core.messages import Message
from hive_core.messages import Part
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.turn_request import TurnRequest
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent

from .records import ApprovalClosed
from .records import ApprovalWait
from .records import Entry
from .records import PendingApproval

__all__ = [
    "ABANDONED_APPROVAL_TEXT",
    "INTERRUPTED_NOTE",
    "NOT_FINISHED_TEXT",
    "LastTurn",
    "Replay",
    "Suspension",
    "replay",
]

INTERRUPTED_NOTE: Final = (
    "[turn interrupted before it finished: hive stopped while working on the request above; "
    "tool calls without a result did not finish]"
)
"""The user message closing a turn that never ended."""

NOT_FINISHED_TEXT: Final = (
    "Not finished: hive stopped before this call's outcome was recorded; it may or may not have taken effect."
)
"""The result of a call that never reported its outcome."""

ABANDONED_APPROVAL_TEXT: Final = (
    "Not run: hive stopped while this call waited for approval, and the wait was not resumed."
)
"""The result of a call whose approval wait was left behind (the session continued without resuming it)."""

LastTurn = Literal["none", "ended", "interrupted", "suspended"]
"""How the log's last turn stands: no turn yet, ended, died mid-turn, or died waiting for approval."""


@dataclass(frozen=True)
class Suspension:
    """A turn that died while calls waited for approval: what resuming it needs."""

    request: TurnRequest
    """The request the turn answers."""
    messages: list[Message]
    """The conversation up to and including the assistant message whose calls wait (their results missing)."""
    calls: list[ToolCallPart]
    """Every call of that message, in order."""
    results: dict[str, ToolResultPart]
    """Results already known, by call id: calls that finished, and calls that died running (``Not finished``)."""
    pending: list[PendingApproval]
    """The calls still waiting, oldest request first."""


@dataclass(frozen=True)
class Replay:
    """A session's log, read."""

    messages: list[Message]
    """The conversation, every call answered, ready to continue."""
    last_turn: LastTurn
    """How the last turn stands."""
    suspension: Suspension | None
    """What resuming the last turn needs, when it is suspended."""


@dataclass
class _Turn:
    request: TurnRequest
    user_recorded: bool = False
    tool_ends: dict[str, ToolEndEvent] = field(default_factory=dict[str, ToolEndEvent])
    waits: dict[str, tuple[ApprovalWait, float]] = field(
        default_factory=dict[str, tuple[ApprovalWait, float]]
    )


def replay(entries: Iterable[Entry]) -> Replay:
    """Read a session's log (entries in sequence order); unreadable entries are skipped."""
    messages: list[Message] = []
    turn: _Turn | None = None
    last: LastTurn = "none"
    for entry in entries:
        payload = entry.payload
        if isinstance(payload, TurnRequest):
            if turn is not None:
                _close(messages, turn)
            turn = _Turn(payload)
        elif isinstance(payload, Message):
            if turn is not None and payload.role == "user":
                turn.user_recorded = True
            messages.append(payload)
        elif turn is None:
            continue  # turn events outside a turn: nothing to rebuild from them
        elif isinstance(payload, ToolEndEvent):
            turn.tool_ends[payload.call_id] = payload
        elif isinstance(payload, ApprovalWait):
            turn.waits[payload.request.id] = (payload, entry.ts)
        elif isinstance(payload, ApprovalClosed):
            turn.waits.pop(payload.request_id, None)
        elif isinstance(payload, TurnEndEvent):
            turn = None
            last = "ended"
    if turn is None:
        return Replay(messages, last, None)
    suspension = _suspension(messages, turn)
    suspended = _close(messages, turn)
    return Replay(messages, "suspended" if suspended else "interrupted", suspension)


def _result_from_tool_end(call: ToolCallPart, end: ToolEndEvent) -> ToolResultPart:
    """The result a call's ``tool_end`` reported, as the model would have read it."""
    content = end.output or ""
    failed = not end.success or end.refusal is not None
    return ToolResultPart(
        call.id,
        call.name,
        content,
        is_error=failed,
        refusal=end.refusal,
        error=content if failed and end.refusal is None else None,
    )


def _open_calls(messages: list[Message]) -> list[ToolCallPart]:
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant":
        return []
    return last.tool_calls


def _waits_by_call(turn: _Turn) -> dict[str, tuple[ApprovalWait, float]]:
    return {wait.request.call_id: (wait, ts) for wait, ts in turn.waits.values() if wait.request.call_id}


def _close(messages: list[Message], turn: _Turn) -> bool:
    """Close a turn that never ended; returns whether it was suspended on an approval wait."""
    if not turn.user_recorded:
        messages.append(Message("user", [TextPart(turn.request.prompt)]))
    calls = _open_calls(messages)
    waits = _waits_by_call(turn)
    suspended = False
    if calls:
        results: list[Part] = []
        for call in calls:
            end = turn.tool_ends.get(call.id)
            if end is not None:
                results.append(_result_from_tool_end(call, end))
            elif call.id in waits:
                suspended = True
                results.append(
                    ToolResultPart(
                        call.id,
                        call.name,
                        ABANDONED_APPROVAL_TEXT,
                        is_error=True,
                        refusal="approval_unavailable",
                    )
                )
            else:
                results.append(ToolResultPart(call.id, call.name, NOT_FINISHED_TEXT, is_error=True))
        messages.append(Message("tool", results))
    if not suspended:
        messages.append(Message("user", [TextPart(INTERRUPTED_NOTE)]))
    return suspended


def _suspension(messages: list[Message], turn: _Turn) -> Suspension | None:
    conversation = list(messages)
    if not turn.user_recorded:
        conversation.append(Message("user", [TextPart(turn.request.prompt)]))
    calls = _open_calls(conversation)
    waits = _waits_by_call(turn)
    pending: list[PendingApproval] = []
    results: dict[str, ToolResultPart] = {}
    for call in calls:
        end = turn.tool_ends.get(call.id)
        found = waits.get(call.id)
        if end is not None:
            results[call.id] = _result_from_tool_end(call, end)
        elif found is not None:
            wait, sent_at = found
            pending.append(
                PendingApproval(request=wait.request, call=call, sent_at=sent_at, timeout=wait.timeout)
            )
        else:
            results[call.id] = ToolResultPart(call.id, call.name, NOT_FINISHED_TEXT, is_error=True)
    if not pending:
        return None
    order = {wait.request.id: index for index, (wait, _) in enumerate(turn.waits.values())}
    pending.sort(key=lambda item: order[item.request.id])
    return Suspension(turn.request, conversation, calls, results, pending)
