"""What a turn came to, gathered from its events: the basis of every machine-readable output."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from itertools import pairwise
from typing import Any
from typing import Literal

import msgspec

from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import RefusalKind
from hive_protocol import StopReason
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

__all__ = ["CallRecord", "TurnSummary", "exit_code"]

Outcome = Literal["ok", "failed", "refused", "unknown"]


@dataclass
class CallRecord:
    """One tool call of the turn."""

    call_id: str
    tool: str
    arguments: Any
    result: str | None = None
    success: bool | None = None
    refusal: RefusalKind | None = None

    @property
    def outcome(self) -> Outcome:
        """``ok``, ``failed``, ``refused``, or ``unknown`` when the call never reported back."""
        if self.success is None:
            return "unknown"
        if self.refusal is not None:
            return "refused"
        return "ok" if self.success else "failed"

    @property
    def arguments_json(self) -> str:
        """The arguments as a JSON string (the raw text when they did not parse)."""
        if isinstance(self.arguments, str):
            return self.arguments
        return msgspec.json.encode(self.arguments).decode()


@dataclass
class TurnSummary:
    """Feed it a turn's events; read the content, thinking, calls, usage and how the turn ended."""

    text: list[str] = field(default_factory=list[str])
    thinking: list[str] = field(default_factory=list[str])
    addendum: str | None = None
    calls: dict[str, CallRecord] = field(default_factory=dict[str, CallRecord])
    end: TurnEndEvent | None = None
    error: ErrorEvent | None = None

    _rounds: list[int] = field(default_factory=list[int])
    """Where in :attr:`text` each later round's text begins (after a tool call, the model speaks again)."""
    _called: bool = False

    def add(self, event: Event) -> None:
        """Take one event of the turn into account."""
        if isinstance(event, TextDeltaEvent):
            if self._called and self.text:
                self._rounds.append(len(self.text))
            self._called = False
            self.text.append(event.content)
        elif isinstance(event, ThinkingDeltaEvent):
            self.thinking.append(event.content)
        elif isinstance(event, ToolStartEvent):
            self._called = True
            self.calls[event.call_id] = CallRecord(event.call_id, event.tool, event.input)
        elif isinstance(event, ToolEndEvent):
            record = self.calls.setdefault(event.call_id, CallRecord(event.call_id, event.tool, None))
            record.result, record.success, record.refusal = event.output, event.success, event.refusal
        elif isinstance(event, AddendumEvent):
            self.addendum = event.content
        elif isinstance(event, TurnEndEvent):
            self.end = event
        elif isinstance(event, ErrorEvent) and event.code != "unreadable_request":
            self.error = event

    @property
    def content(self) -> str:
        """The reply's text: the text of each round (the model's answer before and after its tool calls) with a
        blank line between rounds, never glued together."""
        bounds = [0, *self._rounds, len(self.text)]
        rounds = ("".join(self.text[start:end]).strip("\n") for start, end in pairwise(bounds))
        return "\n\n".join(text for text in rounds if text)

    @property
    def thinking_text(self) -> str:
        """The reasoning text."""
        return "".join(self.thinking)

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the turn ended; ``None`` when it failed or has not ended."""
        return self.end.stop_reason if self.end is not None else None


def exit_code(summary: TurnSummary, *, timed_out: bool = False) -> int:
    """The process exit code for a finished turn: 0 completed, 1 error, 2 stopped short, 3 filtered, 130 cancelled."""
    if timed_out:
        return 2
    if summary.error is not None or summary.end is None:
        return 1
    reason = summary.stop_reason
    if reason == "cancelled":
        return 130
    if reason == "content_filter":
        return 3
    if reason in ("step_limit", "output_limit", "tool_terminated", "awaiting_host_tools", "budget_exhausted"):
        return 2
    return 0
