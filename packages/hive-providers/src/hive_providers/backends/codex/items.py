"""Codex app-server notifications as hive events, and a finished turn as its ``turn_end``.

:class:`TurnItems` reads the notifications of one turn (decoded by :func:`~.wire.decode_notification`, in
arrival order) and emits: agent
message deltas as ``text_delta`` (a message that streamed none as one ``text_delta`` when it completes), reasoning
text and summary deltas as ``thinking_delta``, ``commandExecution`` items as ``execute_command`` calls and
``fileChange`` items as ``edit_file`` calls (``tool_start`` when first seen, ``tool_end`` when completed, failed or
declined; identity kept by :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`), and the turn's
``thread/tokenUsage/updated`` figures as the usage of its ``turn_end``. A failed turn becomes a
:class:`~hive_core.failures.ChatError` with the code its ``codexErrorInfo`` names. Decoding is
tolerant (a field of the wrong type reads as absent, an unknown method or item type is skipped), and nothing
raises but :meth:`TurnItems.finish` on a failed turn.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from typing import Any
from typing import Final

from hive_core.failures import ChatError
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tools import EventSink
from hive_protocol import ErrorCode
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import text_of
from hive_providers.backends.kit.tool_updates import text_content

from .wire import AgentMessage
from .wire import AgentMessageDelta
from .wire import AppServerNotification
from .wire import CommandExecution
from .wire import ErrorNotification
from .wire import FileChange
from .wire import FileUpdate
from .wire import Item
from .wire import ItemNotification
from .wire import ReasoningDelta
from .wire import TokenBreakdown
from .wire import TokenUsage
from .wire import TokenUsageUpdated
from .wire import Turn
from .wire import TurnError
from .wire import TurnNotification

__all__ = [
    "CHANGE_KINDS",
    "ERROR_CODES",
    "TurnItems",
    "command_line",
    "error_code",
    "item_arguments",
    "item_tool",
    "turn_end",
]

ERROR_CODES: Final[Mapping[str, ErrorCode]] = {
    "contextWindowExceeded": "context_limit",
    "sessionBudgetExceeded": "billing",
    "usageLimitExceeded": "billing",
    "rateLimitExceeded": "rate_limit",
    "serverOverloaded": "rate_limit",
    "unauthorized": "auth",
    "badRequest": "request_rejected",
    "modelNotFound": "request_rejected",
    "httpConnectionFailed": "network",
    "responseStreamConnectionFailed": "network",
    "responseStreamDisconnected": "network",
    "responseTooManyFailedAttempts": "network",
    "internalServerError": "internal",
    "sandboxError": "tool_execution",
}
"""Codex's ``codexErrorInfo`` (a string, or an object keyed by the variant) to hive's error code; any other is
``unknown``."""

CHANGE_KINDS: Final[Mapping[str, str]] = {"add": "created", "delete": "deleted", "update": "edited"}
"""What a file change did to a file, as its call's output says it."""
_STATUSES: Final = {
    "inProgress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "declined": "failed",
}
_NO_ERROR: Final = TurnError()
_NO_TOKENS: Final = TokenBreakdown()
_OPEN_AT_END: Final = "Codex ended the turn without reporting this call's result"
_INTERRUPTED: Final = "the turn was cancelled before the call finished"


def command_line(command: object) -> str:
    """The line a ``commandExecution`` runs: ``/bin/bash -lc '<line>'`` unwrapped to ``<line>``."""
    text = text_of(command) or ""
    try:
        parts = shlex.split(text)
    except ValueError:
        return text
    if len(parts) == 3 and parts[1] in ("-c", "-lc") and parts[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh"):
        return parts[2]
    return text


def item_tool(item: Item) -> str | None:
    """The hive tool a Codex item is a call of (``execute_command``, ``edit_file``); ``None`` for no tool."""
    if isinstance(item, CommandExecution):
        return EXECUTE_COMMAND
    return EDIT_FILE if isinstance(item, FileChange) else None


def item_arguments(item: CommandExecution | FileChange) -> dict[str, Any]:
    """The arguments a tool item is judged and shown with: ``{command}`` for a command (the line it runs),
    ``{path, paths?, diff}`` for a file change (the first changed path, every one when there are more)."""
    if isinstance(item, CommandExecution):
        return {"command": command_line(item.command)}
    paths = [change.path for change in item.changes if change.path]
    edited: dict[str, Any] = {}
    if paths:
        edited["path"] = paths[0]
    if len(paths) > 1:
        edited["paths"] = paths
    diff = "\n".join(change.diff or "" for change in item.changes).strip()
    if diff:
        edited["diff"] = diff
    return edited


def error_code(info: str | Mapping[str, object] | None) -> ErrorCode:
    """Hive's error code for a ``codexErrorInfo`` value (see :data:`ERROR_CODES`)."""
    if isinstance(info, str):
        return ERROR_CODES.get(info, "unknown")
    for key in info or {}:
        if key in ERROR_CODES:
            return ERROR_CODES[key]
    return "unknown"


class TurnItems:
    """Maps one Codex turn's notifications onto hive events through ``emit``; tool calls go through
    ``tracker``."""

    def __init__(self, emit: EventSink, tracker: ToolCallTracker) -> None:
        self._emit = emit
        self.tracker = tracker
        """The turn's tool calls (shared with the approval handler)."""
        self.turn_id: str | None = None
        """The Codex turn id, once ``turn/start`` answered or ``turn/started`` named it."""
        self.completed: Turn | None = None
        """The ``turn`` of ``turn/completed``, once it arrived: the end of the turn."""
        self.last_error: TurnError | None = None
        """The ``error`` of the latest ``error`` notification Codex will not retry."""
        self.streamed_text = False
        """Whether any text reached hive."""
        self._streamed_items: set[str] = set()
        self._first_usage: TokenUsage | None = None
        self._last_usage: TokenUsage | None = None
        self._started = time.monotonic()

    def on_notification(self, notification: AppServerNotification) -> None:
        """Map one decoded notification of the turn (:func:`~.wire.decode_notification`); anything else is
        ignored."""
        turn_id = notification.turn_id or None
        if turn_id is not None and self.turn_id is not None and turn_id != self.turn_id:
            return  # another turn's (a sub-thread's, or a late one of an earlier turn)
        match notification:
            case AgentMessageDelta(delta=delta, item_id=item_id) if delta:
                if item_id:
                    self._streamed_items.add(item_id)
                self.streamed_text = True
                self._emit(TextDeltaEvent(content=delta))
            case ReasoningDelta(delta=delta) if delta:
                self._emit(ThinkingDeltaEvent(content=delta))
            case ItemNotification(item=item, completed=completed):
                self._item(item, completed=completed)
            case TokenUsageUpdated(token_usage=usage) if usage is not None:
                # ``total`` is the thread's so far, ``last`` the latest model request's: the turn's usage is the
                # latest total less the total before the turn's first request.
                if self._first_usage is None:
                    self._first_usage = usage
                self._last_usage = usage
            case TurnNotification(turn=turn, completed=False):
                self.turn_id = self.turn_id or (turn.id if turn is not None else None) or None
            case TurnNotification(turn=turn, completed=True):
                turn = turn or Turn()
                if self.turn_id is None or (turn.id or None) in (None, self.turn_id):
                    self.completed = turn
            case ErrorNotification(error=error, will_retry=will_retry) if will_retry is not True:
                self.last_error = error or TurnError()
            case _:
                pass

    def finish(self, *, cancelled: bool = False) -> TurnEndEvent:
        """The turn's ``turn_end`` (returned, not emitted), after ending every call still running.

        Raises :class:`~hive_core.failures.ChatError` for a turn Codex reports ``failed``.
        """
        turn = self.completed or Turn()
        status = turn.status
        interrupted = cancelled or status == "interrupted"
        self.tracker.close_all(_INTERRUPTED if interrupted else _OPEN_AT_END)
        if status == "failed" and not cancelled:
            error = turn.error if turn.error not in (None, _NO_ERROR) else self.last_error
            error = error or _NO_ERROR
            message = error.message or "Codex reported the turn failed"
            details = error.additional_details
            raise ChatError(
                f"codex: {message}" + (f" ({details})" if details else ""),
                code=error_code(error.codex_error_info),
            )
        input_tokens, output_tokens, cached = self._turn_usage()
        duration = turn.duration_ms
        elapsed = duration if duration is not None else int((time.monotonic() - self._started) * 1000)
        return turn_end(input_tokens, output_tokens, cached, cancelled=interrupted, duration_ms=elapsed)

    # -- internals ----------------------------------------------------------------------------------------------

    def _item(self, item: Item, *, completed: bool) -> None:
        item_id = item.id or None
        if isinstance(item, AgentMessage):
            text = item.text
            if completed and text and item_id not in self._streamed_items:
                # Codex sent the message whole (a resumed or replayed one streams no deltas).
                if item_id is not None:
                    self._streamed_items.add(item_id)
                self.streamed_text = True
                self._emit(TextDeltaEvent(content=text))
            return
        if not isinstance(item, CommandExecution | FileChange) or item_id is None:
            return
        status = _STATUSES.get(item.status or "", "in_progress") if completed else "in_progress"
        update: dict[str, Any] = {
            # item/started announces a call (a second one for an ended id is a new call); item/completed ends
            # one, creating it first when its start was never seen.
            "sessionUpdate": "tool_call_update" if completed else "tool_call",
            "toolCallId": item_id,
            "kind": "execute" if isinstance(item, CommandExecution) else "edit",
            "title": _title(item),
            "rawInput": item_arguments(item),
            "status": "in_progress",
        }
        output = _output(item)
        if output:
            update["content"] = text_content(output)
        call_id = self.tracker.upsert(update)
        if call_id is None or status == "in_progress":
            return
        call = self.tracker.get(call_id)
        if item.status == "declined" and call is not None and call.refusal is None:
            self.tracker.refuse(
                call_id, "rejected"
            )  # Codex's own refusal (its approval policy or a reviewer)
        self.tracker.upsert({"sessionUpdate": "tool_call_update", "toolCallId": item_id, "status": status})

    def _turn_usage(self) -> tuple[int | None, int | None, int | None]:
        if self._first_usage is None or self._last_usage is None:
            return None, None, None
        first_total = self._first_usage.total or _NO_TOKENS
        first_last = self._first_usage.last or _NO_TOKENS
        total = self._last_usage.total or _NO_TOKENS
        return (
            _turn_figure(total.input_tokens, first_total.input_tokens, first_last.input_tokens),
            _turn_figure(total.output_tokens, first_total.output_tokens, first_last.output_tokens),
            _turn_figure(
                total.cached_input_tokens, first_total.cached_input_tokens, first_last.cached_input_tokens
            ),
        )


def turn_end(
    input_tokens: int | None,
    output_tokens: int | None,
    cached: int | None,
    *,
    cancelled: bool,
    duration_ms: int,
) -> TurnEndEvent:
    """A Codex turn's ``turn_end`` (the app-server's or exec's): its usage, and whether it was cancelled."""
    return TurnEndEvent(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens
        if input_tokens is not None and output_tokens is not None
        else None,
        cached_input_tokens=cached or None,
        stop_reason="cancelled" if cancelled else "completed",
        duration_ms=duration_ms,
    )


def _title(item: CommandExecution | FileChange) -> str:
    if isinstance(item, CommandExecution):
        return command_line(item.command) or "command"
    paths = [change.path for change in item.changes if change.path]
    return "edit " + ", ".join(paths) if paths else "edit files"


def _output(item: CommandExecution | FileChange) -> str | None:
    if isinstance(item, CommandExecution):
        output = item.aggregated_output or None
        if output is None and item.exit_code is not None and item.exit_code != 0:
            return f"exit code {item.exit_code}"
        return output
    if item.status == "completed":
        return (
            "\n".join(f"{_change_kind(change)} {change.path or 'a file'}" for change in item.changes) or None
        )
    return None


def _change_kind(change: FileUpdate) -> str:
    return CHANGE_KINDS.get(change.kind.type or "" if change.kind is not None else "", "changed")


def _turn_figure(now: int | None, first_total: int | None, first_last: int | None) -> int | None:
    """A figure of the turn: the thread's latest total less its total before the turn's first request."""
    if now is None:
        return None
    before = (first_total or 0) - (first_last or 0)
    return max(0, now - max(0, before))
