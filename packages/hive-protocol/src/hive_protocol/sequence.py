"""The sequence rules of a session's event stream, as a state machine any client or runner can use.

Feed events (structs or wire lines) one at a time to :class:`StreamVerifier`, or pass a whole stream to
:func:`verify`. Each broken rule is reported once, as a :class:`Violation` naming the rule and the line.

The rules, per turn: ``turn_end`` comes last and exactly once; an ``error`` comes immediately before its
``turn_end``; every ``tool_start`` gets exactly one ``tool_end`` with its ``call_id`` before ``turn_end``; a
``hitl_request`` sits between its call's ``tool_start`` and ``tool_end``; a ``refusal`` means ``success: false``;
``addendum`` comes at most once, after the last ``text_delta``; ``total_tokens`` is input plus output. For the
session: ``session_started`` only as the first line. Lines given as bytes or text must also be canonical (exactly
what :func:`~hive_protocol.encode` writes).

Events that belong to no turn leave the turn state alone: ``session_started``, ``fallback``, ``error`` with code
``unreadable_request`` (a runner answers an unreadable line whenever it reads one) and unknown event types.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from .codec import ProtocolError
from .codec import UnknownEvent
from .codec import decode_event
from .codec import encode
from .events import AddendumEvent
from .events import ErrorEvent
from .events import Event
from .events import FallbackEvent
from .events import HitlRequestEvent
from .events import QuestionRequestEvent
from .events import SessionStartedEvent
from .events import TextDeltaEvent
from .events import ToolEndEvent
from .events import ToolStartEvent
from .events import TurnEndEvent

__all__ = ["RULES", "StreamVerifier", "Violation", "verify"]

RULES: Final[dict[str, str]] = {
    "readable": "every line is one protocol event",
    "canonical": "every line is written exactly as hive_protocol.encode writes it",
    "session_started_first": "session_started, if sent, is the first line and is sent once",
    "turn_end_once": "every turn ends with exactly one turn_end",
    "after_last_turn": "nothing of a turn follows the session's last turn_end",
    "error_then_turn_end": "an error inside a turn is immediately followed by its turn_end",
    "tool_pairs": "every tool_start has exactly one tool_end with the same call_id and tool before turn_end",
    "hitl_in_call": "a hitl_request, or a question_request naming a call, sits between the call's tool_start and tool_end",
    "refusal_fails": "a tool_end with a refusal has success false",
    "addendum_last": "addendum comes at most once per turn, after the last text_delta",
    "token_sum": "turn_end.total_tokens equals input_tokens plus output_tokens",
}
"""Rule id to the rule in one sentence."""

_EXCERPT: Final = 200


class Violation(msgspec.Struct, frozen=True):
    """One broken rule."""

    line: int
    """1-based position in the stream of the event that broke it (for a stream that ended early, the last)."""
    rule: str
    """The rule's id, a key of :data:`RULES`."""
    message: str
    """What exactly is wrong."""
    text: str = ""
    """The offending line, cut to 200 characters."""

    def __str__(self) -> str:
        where = f": {self.text}" if self.text else ""
        return f"line {self.line} [{self.rule}] {self.message}{where}"


class StreamVerifier:
    """Checks a session's events as they arrive.

    ``turns``, when known (the number of ``user_message`` requests sent), also catches extra ``turn_end`` lines and
    events after the last turn. ``canonical`` checks that byte and text lines are exactly the canonical encoding.
    """

    def __init__(self, *, turns: int | None = None, canonical: bool = True) -> None:
        self.turns = turns
        self.canonical = canonical
        self.violations: list[Violation] = []
        """Everything reported so far."""
        self._line = 0
        self._ended = 0
        self._in_turn = False
        self._open: dict[str, str] = {}
        self._closed: set[str] = set()
        self._error_line: int | None = None
        self._addendum = False
        self._last_text = ""

    def feed(self, item: Event | UnknownEvent | bytes | str) -> list[Violation]:
        """Check the next event; return the violations it caused."""
        self._line += 1
        found: list[Violation] = []
        if isinstance(item, bytes | str):
            text = item.decode("utf-8", "replace") if isinstance(item, bytes) else item
            raw = item if isinstance(item, bytes) else item.encode()
            raw = raw.removesuffix(b"\n")
            try:
                event = decode_event(raw)
            except ProtocolError as exc:
                found.append(self._violation("readable", str(exc), text))
                return self._keep(found)
            if self.canonical and encode(event)[:-1] != raw:
                found.append(
                    self._violation("canonical", f"expected {encode(event)[:-1].decode()[:_EXCERPT]}", text)
                )
        else:
            event = item
            text = encode(event)[:-1].decode()
        self._last_text = text
        self._check(event, text, found)
        return self._keep(found)

    def finish(self) -> list[Violation]:
        """The stream ended: report what was left open."""
        found: list[Violation] = []
        if self._in_turn:
            found.append(self._violation("turn_end_once", "the stream ended inside a turn: no turn_end", ""))
            if self._open:
                found.append(self._unclosed("the stream ended"))
            if self._error_line is not None:
                found.append(
                    self._violation(
                        "error_then_turn_end",
                        f"the error on line {self._error_line} was never followed by turn_end",
                        "",
                    )
                )
        if self.turns is not None and self._ended < self.turns and not self._in_turn:
            found.append(
                self._violation(
                    "turn_end_once", f"{self.turns} turns were requested, {self._ended} ended", ""
                )
            )
        return self._keep(found)

    def _keep(self, found: list[Violation]) -> list[Violation]:
        self.violations.extend(found)
        return found

    def _violation(self, rule: str, message: str, text: str) -> Violation:
        return Violation(self._line, rule, message, text[:_EXCERPT])

    def _unclosed(self, when: str) -> Violation:
        calls = ", ".join(f"{call_id} ({tool})" for call_id, tool in self._open.items())
        return self._violation("tool_pairs", f"{when} before tool_end of call(s) {calls}", self._last_text)

    def _check(self, event: Event | UnknownEvent, text: str, found: list[Violation]) -> None:
        if isinstance(event, SessionStartedEvent):
            if self._line != 1:
                found.append(
                    self._violation("session_started_first", "session_started is not the first line", text)
                )
            return
        if isinstance(event, UnknownEvent | FallbackEvent) or (
            isinstance(event, ErrorEvent) and event.code == "unreadable_request"
        ):
            return
        if self.turns is not None and self._ended >= self.turns and not self._in_turn:
            kind = "turn_end" if isinstance(event, TurnEndEvent) else event.__struct_config__.tag
            rule = "turn_end_once" if isinstance(event, TurnEndEvent) else "after_last_turn"
            found.append(
                self._violation(
                    rule, f"{kind} after the last turn_end ({self.turns} turns were requested)", text
                )
            )
            return
        self._in_turn = True
        if self._error_line is not None and not isinstance(event, TurnEndEvent):
            found.append(
                self._violation(
                    "error_then_turn_end",
                    f"the error on line {self._error_line} is followed by {event.__struct_config__.tag}, not turn_end",
                    text,
                )
            )
            self._error_line = None
        match event:
            case TurnEndEvent():
                self._turn_end(event, text, found)
            case ErrorEvent():
                self._error_line = self._line
            case ToolStartEvent(call_id=call_id, tool=tool):
                if call_id in self._open or call_id in self._closed:
                    found.append(
                        self._violation(
                            "tool_pairs", f"call_id {call_id!r} was already used in this turn", text
                        )
                    )
                self._open[call_id] = tool
            case ToolEndEvent(call_id=call_id, tool=tool):
                self._tool_end(event, call_id, tool, text, found)
            case HitlRequestEvent(call_id=call_id):
                if call_id is None and not self._open:
                    found.append(
                        self._violation("hitl_in_call", "hitl_request while no tool call is running", text)
                    )
                elif call_id is not None and call_id not in self._open:
                    state = "has already ended" if call_id in self._closed else "was never started"
                    found.append(
                        self._violation(
                            "hitl_in_call", f"hitl_request for call {call_id!r}, which {state}", text
                        )
                    )
            case QuestionRequestEvent(call_id=call_id) if call_id is not None and call_id not in self._open:
                found.append(
                    self._violation(
                        "hitl_in_call", f"question_request for call {call_id!r}, which is not running", text
                    )
                )
            case TextDeltaEvent() if self._addendum:
                found.append(self._violation("addendum_last", "text_delta after the turn's addendum", text))
            case AddendumEvent():
                if self._addendum:
                    found.append(self._violation("addendum_last", "a second addendum in one turn", text))
                self._addendum = True
            case _:
                pass

    def _tool_end(
        self, event: ToolEndEvent, call_id: str, tool: str, text: str, found: list[Violation]
    ) -> None:
        if event.refusal is not None and event.success:
            found.append(
                self._violation("refusal_fails", f"refusal {event.refusal!r} with success true", text)
            )
        started = self._open.pop(call_id, None)
        if started is None:
            state = "already ended" if call_id in self._closed else "was never started"
            found.append(self._violation("tool_pairs", f"tool_end for call {call_id!r}, which {state}", text))
        elif started != tool:
            found.append(
                self._violation(
                    "tool_pairs", f"tool_end names tool {tool!r}, its tool_start named {started!r}", text
                )
            )
        self._closed.add(call_id)

    def _turn_end(self, event: TurnEndEvent, text: str, found: list[Violation]) -> None:
        if self._open:
            found.append(self._unclosed("turn_end"))
        if (
            event.total_tokens is not None
            and event.input_tokens is not None
            and event.output_tokens is not None
            and event.total_tokens != event.input_tokens + event.output_tokens
        ):
            found.append(
                self._violation(
                    "token_sum",
                    f"total_tokens {event.total_tokens} != {event.input_tokens} + {event.output_tokens}",
                    text,
                )
            )
        self._ended += 1
        self._in_turn = False
        self._open.clear()
        self._closed.clear()
        self._error_line = None
        self._addendum = False


def verify(
    stream: Iterable[Event | UnknownEvent | bytes | str], *, turns: int | None = None, canonical: bool = True
) -> list[Violation]:
    """Check a whole session stream; an empty list means it keeps every rule."""
    verifier = StreamVerifier(turns=turns, canonical=canonical)
    for item in stream:
        verifier.feed(item)
    verifier.finish()
    return verifier.violations
