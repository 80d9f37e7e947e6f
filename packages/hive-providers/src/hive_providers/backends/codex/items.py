"""Codex app-server notifications as hive events, and a finished turn as its ``turn_end``.

:class:`TurnItems` reads the notifications of one turn (``params`` dicts, in arrival order) and emits: agent
message deltas as ``text_delta`` (a message that streamed none as one ``text_delta`` when it completes), reasoning
text and summary deltas as ``thinking_delta``, ``commandExecution`` items as ``execute_command`` calls and
``fileChange`` items as ``edit_file`` calls (``tool_start`` when first seen, ``tool_end`` when completed, failed or
declined; identity kept by :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`), and the turn's
``thread/tokenUsage/updated`` figures as the usage of its ``turn_end``. A failed turn becomes a
:class:`~hive_core.failures.ChatError` with the code its ``codexErrorInfo`` names. Every field is read
tolerantly: a field of the wrong type is ignored, an unknown method or item type is skipped, nothing raises but
:meth:`TurnItems.finish` on a failed turn.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from typing import Any, Final

from hive_core.failures import ChatError
from hive_core.tool_names import EDIT_FILE, EXECUTE_COMMAND
from hive_core.tools import EventSink
from hive_protocol import ErrorCode, TextDeltaEvent, ThinkingDeltaEvent, TurnEndEvent
from hive_providers.backends.kit.json_values import as_list, as_mapping
from hive_providers.backends.kit.tool_calls import ToolCallTracker, text_of

__all__ = [
    "ERROR_CODES",
    "TurnItems",
    "command_line",
    "error_code",
    "item_arguments",
    "item_tool",
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

_TOOLS: Final = {"commandExecution": "execute", "fileChange": "edit"}
"""Item types that are tool calls, with the ACP kind that names their hive tool."""
_STATUSES: Final = {
    "inProgress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "declined": "failed",
}
_REASONING: Final = ("item/reasoning/textDelta", "item/reasoning/summaryTextDelta")
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


def item_tool(item: Mapping[str, Any]) -> str | None:
    """The hive tool a Codex item is a call of (``execute_command``, ``edit_file``); ``None`` for no tool."""
    kind = item.get("type")
    return (
        {"commandExecution": EXECUTE_COMMAND, "fileChange": EDIT_FILE}.get(kind)
        if isinstance(kind, str)
        else None
    )


def item_arguments(item: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a tool item is judged and shown with: ``{command}`` for a command (the line it runs),
    ``{path, paths?, diff}`` for a file change (the first changed path, every one when there are more)."""
    if item.get("type") == "commandExecution":
        return {"command": command_line(item.get("command"))}
    changes = [as_mapping(change) for change in as_list(item.get("changes"))]
    paths = [path for path in (text_of(change.get("path")) for change in changes) if path]
    edited: dict[str, Any] = {}
    if paths:
        edited["path"] = paths[0]
    if len(paths) > 1:
        edited["paths"] = paths
    diff = "\n".join(text_of(change.get("diff")) or "" for change in changes).strip()
    if diff:
        edited["diff"] = diff
    return edited


def error_code(info: object) -> ErrorCode:
    """Hive's error code for a ``codexErrorInfo`` value (see :data:`ERROR_CODES`)."""
    if isinstance(info, str):
        return ERROR_CODES.get(info, "unknown")
    for key in as_mapping(info):
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
        self.completed: dict[str, Any] | None = None
        """The ``turn`` of ``turn/completed``, once it arrived: the end of the turn."""
        self.last_error: dict[str, Any] | None = None
        """The ``error`` of the latest ``error`` notification Codex will not retry."""
        self.streamed_text = False
        """Whether any text reached hive."""
        self._streamed_items: set[str] = set()
        self._first_usage: dict[str, Any] | None = None
        self._last_usage: dict[str, Any] | None = None
        self._started = time.monotonic()

    def on_notification(self, method: str, params: Mapping[str, Any]) -> None:
        """Map one notification of the turn (its ``params``); anything else is ignored."""
        turn_id = text_of(params.get("turnId"))
        if turn_id is not None and self.turn_id is not None and turn_id != self.turn_id:
            return  # another turn's (a sub-thread's, or a late one of an earlier turn)
        match method:
            case "item/agentMessage/delta":
                self._text(params)
            case "item/reasoning/textDelta" | "item/reasoning/summaryTextDelta":
                delta = text_of(params.get("delta"))
                if delta is not None:
                    self._emit(ThinkingDeltaEvent(content=delta))
            case "item/started" | "item/completed":
                self._item(as_mapping(params.get("item")), completed=method == "item/completed")
            case "thread/tokenUsage/updated":
                usage = as_mapping(params.get("tokenUsage"))
                if usage:
                    # ``total`` is the thread's so far, ``last`` the latest model request's: the turn's usage is
                    # the latest total less the total before the turn's first request.
                    if self._first_usage is None:
                        self._first_usage = usage
                    self._last_usage = usage
            case "turn/started":
                turn = as_mapping(params.get("turn"))
                self.turn_id = self.turn_id or text_of(turn.get("id"))
            case "turn/completed":
                turn = as_mapping(params.get("turn"))
                if self.turn_id is None or text_of(turn.get("id")) in (None, self.turn_id):
                    self.completed = turn
            case "error":
                if params.get("willRetry") is not True:
                    self.last_error = as_mapping(params.get("error"))
            case _:
                pass

    def finish(self, *, cancelled: bool = False) -> TurnEndEvent:
        """The turn's ``turn_end`` (returned, not emitted), after ending every call still running.

        Raises :class:`~hive_core.failures.ChatError` for a turn Codex reports ``failed``.
        """
        turn = self.completed or {}
        status = text_of(turn.get("status"))
        interrupted = cancelled or status == "interrupted"
        self.tracker.close_all(_INTERRUPTED if interrupted else _OPEN_AT_END)
        if status == "failed" and not cancelled:
            error = as_mapping(turn.get("error")) or self.last_error or {}
            message = text_of(error.get("message")) or "Codex reported the turn failed"
            details = text_of(error.get("additionalDetails"))
            raise ChatError(
                f"codex: {message}" + (f" ({details})" if details else ""),
                code=error_code(error.get("codexErrorInfo")),
            )
        input_tokens, output_tokens, cached = self._turn_usage()
        duration = turn.get("durationMs")
        return TurnEndEvent(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens
            if input_tokens is not None and output_tokens is not None
            else None,
            cached_input_tokens=cached or None,
            stop_reason="cancelled" if interrupted else "completed",
            duration_ms=duration
            if isinstance(duration, int) and not isinstance(duration, bool)
            else int((time.monotonic() - self._started) * 1000),
        )

    # -- internals ----------------------------------------------------------------------------------------------

    def _text(self, params: Mapping[str, Any]) -> None:
        delta = text_of(params.get("delta"))
        if delta is None:
            return
        item_id = text_of(params.get("itemId"))
        if item_id is not None:
            self._streamed_items.add(item_id)
        self.streamed_text = True
        self._emit(TextDeltaEvent(content=delta))

    def _item(self, item: Mapping[str, Any], *, completed: bool) -> None:
        kind = text_of(item.get("type"))
        item_id = text_of(item.get("id"))
        if kind == "agentMessage":
            text = text_of(item.get("text"))
            if completed and text is not None and item_id not in self._streamed_items:
                # Codex sent the message whole (a resumed or replayed one streams no deltas).
                if item_id is not None:
                    self._streamed_items.add(item_id)
                self.streamed_text = True
                self._emit(TextDeltaEvent(content=text))
            return
        if kind not in _TOOLS or item_id is None:
            return
        status = (
            _STATUSES.get(text_of(item.get("status")) or "", "in_progress") if completed else "in_progress"
        )
        update: dict[str, Any] = {
            # item/started announces a call (a second one for an ended id is a new call); item/completed ends
            # one, creating it first when its start was never seen.
            "sessionUpdate": "tool_call_update" if completed else "tool_call",
            "toolCallId": item_id,
            "kind": _TOOLS[kind],
            "title": _title(item),
            "rawInput": item_arguments(item),
            "status": "in_progress",
        }
        output = _output(item)
        if output:
            update["content"] = [{"type": "content", "content": {"type": "text", "text": output}}]
        call_id = self.tracker.upsert(update)
        if call_id is None or status == "in_progress":
            return
        call = self.tracker.get(call_id)
        if text_of(item.get("status")) == "declined" and call is not None and call.refusal is None:
            self.tracker.refuse(
                call_id, "rejected"
            )  # Codex's own refusal (its approval policy or a reviewer)
        self.tracker.upsert({"sessionUpdate": "tool_call_update", "toolCallId": item_id, "status": status})

    def _turn_usage(self) -> tuple[int | None, int | None, int | None]:
        if self._first_usage is None or self._last_usage is None:
            return None, None, None
        first_total = as_mapping(self._first_usage.get("total"))
        first_last = as_mapping(self._first_usage.get("last"))
        total = as_mapping(self._last_usage.get("total"))
        return (
            _turn_figure(total, first_total, first_last, "inputTokens"),
            _turn_figure(total, first_total, first_last, "outputTokens"),
            _turn_figure(total, first_total, first_last, "cachedInputTokens"),
        )


def _title(item: Mapping[str, Any]) -> str:
    if item.get("type") == "commandExecution":
        return command_line(item.get("command")) or "command"
    paths = [text_of(as_mapping(change).get("path")) for change in as_list(item.get("changes"))]
    return "edit " + ", ".join(path for path in paths if path) if any(paths) else "edit files"


def _output(item: Mapping[str, Any]) -> str | None:
    if item.get("type") == "commandExecution":
        output = text_of(item.get("aggregatedOutput"))
        code = item.get("exitCode")
        if output is None and isinstance(code, int) and not isinstance(code, bool) and code != 0:
            return f"exit code {code}"
        return output
    if text_of(item.get("status")) == "completed":
        return (
            "\n".join(
                f"{_change_kind(change)} {text_of(as_mapping(change).get('path')) or 'a file'}"
                for change in as_list(item.get("changes"))
            )
            or None
        )
    return None


def _change_kind(change: object) -> str:
    kind = text_of(as_mapping(as_mapping(change).get("kind")).get("type"))
    return {"add": "created", "delete": "deleted", "update": "edited"}.get(kind or "", "changed")


def _turn_figure(
    total: Mapping[str, Any], first_total: Mapping[str, Any], first_last: Mapping[str, Any], key: str
) -> int | None:
    """``key`` of the turn: the thread's latest total less its total before the turn's first request."""
    now = _int(total.get(key))
    if now is None:
        return None
    before = (_int(first_total.get(key)) or 0) - (_int(first_last.get(key)) or 0)
    return max(0, now - max(0, before))


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
