from __future__ import annotations

import pytest

from hive_protocol import RULES
from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import FallbackEvent
from hive_protocol import HitlRequestEvent
from hive_protocol import QuestionRequestEvent
from hive_protocol import SessionStartedEvent
from hive_protocol import StreamVerifier
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import encode
from hive_protocol import verify

S = SessionStartedEvent(session_id="s1")
END = TurnEndEvent(stop_reason="completed")


def start(call: str, tool: str = "read_file") -> ToolStartEvent:
    return ToolStartEvent(tool=tool, input={"path": "a"}, call_id=call)


def end(call: str, tool: str = "read_file", **kw: object) -> ToolEndEvent:
    return ToolEndEvent(tool=tool, success=kw.pop("success", True), call_id=call, **kw)  # type: ignore[arg-type]


def hitl(call: str | None) -> HitlRequestEvent:
    return HitlRequestEvent(id=f"h-{call}", action="edit", target="a", description="Allow?", call_id=call)


def rules(stream: list[Event], **kw: object) -> list[tuple[int, str]]:
    return [(v.line, v.rule) for v in verify(stream, **kw)]  # type: ignore[arg-type]


VALID = {
    "plain text": [S, TextDeltaEvent(content="hi"), END],
    "thinking then text": [S, ThinkingDeltaEvent(content="hm"), TextDeltaEvent(content="ok"), END],
    "tool pair": [S, start("c1"), end("c1"), TextDeltaEvent(content="done"), END],
    "parallel tools ending out of order": [
        S,
        start("c1"),
        start("c2", "grep_files"),
        end("c2", "grep_files"),
        end("c1"),
        END,
    ],
    "approval inside its call": [
        S,
        start("c1"),
        hitl("c1"),
        end("c1", success=False, refusal="rejected"),
        END,
    ],
    "error then turn_end": [S, ErrorEvent(message="boom", code="network"), TurnEndEvent()],
    "addendum last": [S, TextDeltaEvent(content="a"), AddendumEvent(content="note"), END],
    "two turns reusing a call id": [S, start("c1"), end("c1"), END, start("c1"), end("c1"), END],
    "cancelled turn closes its tools": [
        S,
        start("c1"),
        end("c1", success=False),
        TurnEndEvent(stop_reason="cancelled"),
    ],
    "unreadable request mid-turn": [
        S,
        TextDeltaEvent(content="a"),
        ErrorEvent(message="Unreadable request skipped: x", code="unreadable_request"),
        TextDeltaEvent(content="b"),
        END,
    ],
    "unreadable request between turns": [S, END, ErrorEvent(message="x", code="unreadable_request")],
    "fallback between turns": [
        S,
        FallbackEvent(
            kind="retry",
            provider_index=0,
            total_providers=2,
            category="transient",
            message="m",
            attempt=1,
            max_attempts=3,
        ),
        TextDeltaEvent(content="a"),
        END,
    ],
    "tokens add up": [S, TurnEndEvent(input_tokens=3, output_tokens=4, total_tokens=7)],
    "question inside its call": [
        S,
        start("c1", "ask"),
        QuestionRequestEvent(id="q", call_id="c1", questions=[]),
        end("c1", "ask"),
        END,
    ],
    "no session_started": [TextDeltaEvent(content="hi"), END],
    "empty turn": [S, END],
}


@pytest.mark.parametrize("name", VALID)
def test_valid_streams_pass(name: str) -> None:
    stream = VALID[name]
    turns = sum(isinstance(e, TurnEndEvent) for e in stream)
    assert verify(stream, turns=turns) == []
    assert verify([encode(e) for e in stream], turns=turns) == []
    assert verify([encode(e).decode() for e in stream]) == []


BROKEN: dict[str, tuple[list[Event], dict[str, object], list[tuple[int, str]], str]] = {
    "missing tool_end": (
        [S, start("c1"), END],
        {},
        [(3, "tool_pairs")],
        "turn_end before tool_end of call(s) c1 (read_file)",
    ),
    "tool_end never started": (
        [S, end("c9"), END],
        {},
        [(2, "tool_pairs")],
        "tool_end for call 'c9', which was never started",
    ),
    "second tool_end": (
        [S, start("c1"), end("c1"), end("c1"), END],
        {},
        [(4, "tool_pairs")],
        "which already ended",
    ),
    "tool_end names another tool": (
        [S, start("c1"), end("c1", "write_file"), END],
        {},
        [(3, "tool_pairs")],
        "its tool_start named 'read_file'",
    ),
    "call id reused within a turn": (
        [S, start("c1"), end("c1"), start("c1"), end("c1"), END],
        {},
        [(4, "tool_pairs")],
        "already used",
    ),
    "duplicate turn_end": (
        [S, TextDeltaEvent(content="a"), END, END],
        {"turns": 1},
        [(4, "turn_end_once")],
        "turn_end after the last turn_end",
    ),
    "event after turn_end": (
        [S, END, TextDeltaEvent(content="late")],
        {"turns": 1},
        [(3, "after_last_turn")],
        "text_delta after the last turn_end",
    ),
    "stream ends inside a turn": (
        [S, TextDeltaEvent(content="a")],
        {},
        [(2, "turn_end_once")],
        "ended inside a turn",
    ),
    "fewer turns than requested": (
        [S, END],
        {"turns": 2},
        [(2, "turn_end_once")],
        "2 turns were requested, 1 ended",
    ),
    "hitl_request outside its call": (
        [S, start("c1"), end("c1"), hitl("c1"), END],
        {},
        [(4, "hitl_in_call")],
        "which has already ended",
    ),
    "hitl_request for an unknown call": (
        [S, hitl("c5"), END],
        {},
        [(2, "hitl_in_call")],
        "which was never started",
    ),
    "hitl_request with no call running": (
        [S, hitl(None), END],
        {},
        [(2, "hitl_in_call")],
        "no tool call is running",
    ),
    "question for a call not running": (
        [S, QuestionRequestEvent(id="q", call_id="c3", questions=[]), END],
        {},
        [(2, "hitl_in_call")],
        "question_request for call 'c3'",
    ),
    "refusal with success true": (
        [S, start("c1"), end("c1", refusal="denied"), END],
        {},
        [(3, "refusal_fails")],
        "refusal 'denied' with success true",
    ),
    "addendum before a text_delta": (
        [S, AddendumEvent(content="n"), TextDeltaEvent(content="a"), END],
        {},
        [(3, "addendum_last")],
        "text_delta after the turn's addendum",
    ),
    "two addenda": (
        [S, AddendumEvent(content="n"), AddendumEvent(content="m"), END],
        {},
        [(3, "addendum_last")],
        "a second addendum",
    ),
    "error not followed by turn_end": (
        [S, ErrorEvent(message="x", code="internal"), TextDeltaEvent(content="a"), END],
        {},
        [(3, "error_then_turn_end")],
        "the error on line 2 is followed by text_delta, not turn_end",
    ),
    "error at the end of the stream": (
        [S, ErrorEvent(message="x")],
        {},
        [(2, "turn_end_once"), (2, "error_then_turn_end")],
        "never followed by turn_end",
    ),
    "session_started later": (
        [TextDeltaEvent(content="a"), S, END],
        {},
        [(2, "session_started_first")],
        "not the first line",
    ),
    "tokens do not add up": (
        [S, TurnEndEvent(input_tokens=3, output_tokens=4, total_tokens=8)],
        {},
        [(2, "token_sum")],
        "total_tokens 8 != 3 + 4",
    ),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken_streams_are_rejected_precisely(name: str) -> None:
    stream, kw, expected, fragment = BROKEN[name]
    violations = verify(stream, **kw)  # type: ignore[arg-type]
    assert [(v.line, v.rule) for v in violations] == expected
    assert any(fragment in v.message for v in violations), [str(v) for v in violations]
    assert all(v.rule in RULES for v in violations)


def test_every_rule_has_a_broken_stream() -> None:
    exercised = {rule for _, _, expected, _ in BROKEN.values() for _, rule in expected}
    assert exercised | {"readable", "canonical"} == set(RULES)


def test_unreadable_and_non_canonical_lines() -> None:
    lines = [
        b'{"type":"session_started","session_id":"s"}',
        b'{"type":"text_delta", "content":"a"}',
        b'{"content":"b","type":"text_delta"}',
        b'{"type":"turn_end","input_tokens":null}',
        b"not json",
    ]
    violations = verify(lines)
    assert [(v.line, v.rule) for v in violations] == [
        (2, "canonical"),
        (3, "canonical"),
        (4, "canonical"),
        (5, "readable"),
    ]
    assert 'expected {"type":"text_delta","content":"b"}' in violations[1].message
    assert violations[3].text == "not json"
    assert verify(lines[:4], canonical=False) == []


def test_incremental_feed_reports_at_the_offending_event() -> None:
    verifier = StreamVerifier(turns=1)
    assert verifier.feed(S) == []
    assert verifier.feed(start("c1")) == []
    found = verifier.feed(END)
    assert [v.rule for v in found] == ["tool_pairs"]
    assert "line 3 [tool_pairs]" in str(found[0])
    assert verifier.finish() == []
    assert verifier.violations == found


def test_unknown_events_are_tolerated() -> None:
    assert (
        verify(
            [b'{"type":"session_started","session_id":"s"}', b'{"type":"from_the_future","x":1}', encode(END)]
        )
        == []
    )
