"""Hostile input to the decoders: nesting of any depth and huge bad lines give the protocol's errors, never an
exception of their own, and an error quotes only an excerpt of what it was sent."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from protocol_strategies import depth_of

from hive_protocol import DEFAULT_MAX_LINE_BYTES
from hive_protocol import MAX_NESTING_DEPTH
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import InvalidTurnOptions
from hive_protocol import ProtocolError
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnOptions
from hive_protocol import UnknownEvent
from hive_protocol import UnreadableRequest
from hive_protocol import decode_event
from hive_protocol import decode_request
from hive_protocol import encode
from hive_protocol import excerpt
from hive_protocol import nested_too_deep
from hive_protocol import validate_turn_options
from hive_protocol import verify

DEPTHS = [1_000, 10_000, 100_000]
"""Depths of the issue's attack lines: each one crashed a decoder with RecursionError."""

MIB = 1024 * 1024
QUOTE_BOUND = 1_000
"""What "a few hundred characters" of a bad input means for an error message, generously."""


def arrays(depth: int) -> bytes:
    """``depth`` arrays, each inside the one before."""
    return b"[" * depth + b"]" * depth


def objects(depth: int) -> bytes:
    """``depth`` objects, each the value of key ``k`` of the one before."""
    return b'{"k":' * (depth - 1) + b"{}" + b"}" * (depth - 1)


def nested_value(depth: int) -> Any:
    """A decoded value nested exactly ``depth`` levels (alternating objects and arrays)."""
    value: Any = []
    for level in range(depth - 1):
        value = {"k": value} if level % 2 == 0 else [value]
    return value


# -- the depth walker ------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=40,
)


@given(json_values, st.integers(min_value=0, max_value=12))
def test_nested_too_deep_agrees_with_the_reference_depth(value: Any, limit: int) -> None:
    assert nested_too_deep(value, limit) == (depth_of(value) > limit)


def test_the_walk_stops_at_the_limit_however_deep_the_value() -> None:
    # Built iteratively: a recursive walk over this value would itself exceed Python's recursion limit.
    assert nested_too_deep(nested_value(50_000))
    assert not nested_too_deep(nested_value(MAX_NESTING_DEPTH))
    assert nested_too_deep(nested_value(MAX_NESTING_DEPTH + 1))
    assert not nested_too_deep("[[[[")


# -- requests --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize(
    "shape",
    [
        "top_level",
        "typed_field",
        "modified_arguments",
        "unknown_field",
        "objects_in_modified_arguments",
    ],
)
def test_a_deep_request_is_unreadable_not_a_crash(shape: str, depth: int) -> None:
    line = {
        "top_level": arrays(depth),
        "typed_field": b'{"type":"user_message","content":"x","options":{"tool_names":'
        + arrays(depth)
        + b"}}",
        "modified_arguments": b'{"type":"hitl_response","approved":true,"modified_arguments":{"a":'
        + arrays(depth)
        + b"}}",
        "unknown_field": b'{"type":"user_message","content":"x","extra":' + arrays(depth) + b"}",
        "objects_in_modified_arguments": b'{"type":"hitl_response","approved":true,"modified_arguments":'
        + objects(depth)
        + b"}",
    }[shape]
    result = decode_request(line)
    assert isinstance(result, UnreadableRequest), result
    assert len(result.message) < QUOTE_BOUND
    assert result.to_event().code == "unreadable_request"


def test_modified_arguments_may_nest_exactly_to_the_limit() -> None:
    def line(depth: int) -> bytes:
        # The arguments object is level 1; its value "a" holds the rest.
        return (
            b'{"type":"hitl_response","approved":true,"modified_arguments":{"a":' + arrays(depth - 1) + b"}}"
        )

    accepted = decode_request(line(MAX_NESTING_DEPTH))
    assert isinstance(accepted, HitlResponseRequest)
    assert accepted.modified_arguments is not None
    assert depth_of(accepted.modified_arguments) == MAX_NESTING_DEPTH
    refused = decode_request(line(MAX_NESTING_DEPTH + 1))
    assert isinstance(refused, UnreadableRequest)
    assert "modified_arguments" in refused.message
    assert f"deeper than {MAX_NESTING_DEPTH} levels" in refused.message


def test_an_ignored_field_of_moderate_depth_is_ignored_as_before() -> None:
    # Unknown fields are skipped, never kept: only one too deep to skip at all makes the line unreadable.
    line = b'{"type":"user_message","content":"x","extra":' + arrays(200) + b"}"
    assert decode_request(line) == decode_request(b'{"type":"user_message","content":"x"}')


# -- events and verify -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("kind", ["tool_start", "hitl_request", "unknown", "text_delta", "top_level"])
def test_a_deep_event_is_a_protocol_error_not_a_crash(kind: str, depth: int) -> None:
    line = {
        "tool_start": b'{"type":"tool_start","tool":"t","call_id":"c","input":' + arrays(depth) + b"}",
        "hitl_request": b'{"type":"hitl_request","id":"h","action":"a","target":"t","description":"d",'
        b'"arguments":{"a":' + arrays(depth) + b"}}",
        "unknown": b'{"type":"future_event","payload":' + arrays(depth) + b"}",
        "text_delta": b'{"type":"text_delta","content":' + arrays(depth) + b"}",
        "top_level": arrays(depth),
    }[kind]
    with pytest.raises(ProtocolError) as caught:
        decode_event(line)
    assert len(str(caught.value)) < QUOTE_BOUND
    [violation] = verify([line], canonical=False)
    assert violation.rule == "readable"


def test_free_form_event_values_may_nest_exactly_to_the_limit() -> None:
    fits, over = nested_value(MAX_NESTING_DEPTH), nested_value(MAX_NESTING_DEPTH + 1)
    start = decode_event(encode(ToolStartEvent(tool="t", input=fits, call_id="c")))
    assert isinstance(start, ToolStartEvent)
    assert start.input == fits
    over_line = b'{"type":"tool_start","tool":"t","input":' + msgspec.json.encode(over) + b',"call_id":"c"}'
    with pytest.raises(ProtocolError, match="input: arrays and objects nested deeper than 64 levels"):
        decode_event(over_line)
    # An unknown event is kept whole, so the whole object counts: itself is level 1.
    assert isinstance(
        decode_event(b'{"type":"future","v":' + arrays(MAX_NESTING_DEPTH - 1) + b"}"), UnknownEvent
    )
    with pytest.raises(ProtocolError, match="unknown event type 'future'"):
        decode_event(b'{"type":"future","v":' + arrays(MAX_NESTING_DEPTH) + b"}")


def test_hive_cannot_build_an_event_it_could_not_read_back() -> None:
    with pytest.raises(ValueError, match="nested deeper than"):
        ToolStartEvent(tool="t", input=nested_value(MAX_NESTING_DEPTH + 1), call_id="c")
    with pytest.raises(ValueError, match="nested deeper than"):
        HitlRequestEvent(
            id="h", action="a", target="t", description="d", arguments={"a": nested_value(MAX_NESTING_DEPTH)}
        )
    with pytest.raises(ValueError, match="nested deeper than"):
        HitlResponseRequest(approved=True, modified_arguments={"a": nested_value(MAX_NESTING_DEPTH)})


def test_verify_reports_a_deep_line_and_goes_on() -> None:
    lines = [
        b'{"type":"text_delta","content":"a"}',
        b'{"type":"tool_start","tool":"t","call_id":"c","input":' + arrays(5_000) + b"}",
        b'{"type":"turn_end"}',
    ]
    violations = verify(lines, turns=1)
    assert [(v.line, v.rule) for v in violations] == [(2, "readable")]
    assert len(violations[0].text) <= 200


# -- huge bad lines --------------------------------------------------------------------------------------------

HUGE = 15 * MIB


@pytest.mark.parametrize(
    "line",
    [
        pytest.param(b'{"type":"' + b"x" * HUGE + b'"}', id="unknown_type"),
        pytest.param(
            b'{"type":"user_message","content":"x","options":{"tool_mode":' + b"1" * HUGE + b"}}", id="number"
        ),
        pytest.param(b'{"type":"user_message","content":' + b"[1," * (HUGE // 3) + b"]}", id="wrong_type"),
        pytest.param(b'{"type":"user_message","content":"' + b"\xff" * HUGE + b'"}', id="invalid_utf8"),
        pytest.param(b'{"type":"user_message","content":"' + b"a" * HUGE, id="truncated"),
        pytest.param(b'{"type":"' + "\u2028".encode() * (HUGE // 3) + b'","x":1}', id="line_separators"),
    ],
)
def test_a_15_mib_bad_request_is_answered_with_a_short_error(line: bytes) -> None:
    assert len(line) > 14 * MIB
    result = decode_request(line)
    assert isinstance(result, UnreadableRequest)
    answer = encode(result.to_event())
    assert len(answer) < QUOTE_BOUND, answer[:300]
    assert answer.endswith(b"\n")
    assert answer.count(b"\n") == 1
    assert len(answer) < DEFAULT_MAX_LINE_BYTES


def test_a_15_mib_bad_event_gives_a_short_protocol_error() -> None:
    line = b'{"type":"turn_end","stop_reason":"' + b"x" * HUGE + b'"}'
    with pytest.raises(ProtocolError) as caught:
        decode_event(line)
    assert len(str(caught.value)) < QUOTE_BOUND


def test_turn_options_errors_quote_an_excerpt_of_what_was_sent() -> None:
    long_name = "t" * (2 * MIB)
    cases = [
        TurnOptions(tool_names=[long_name]),
        TurnOptions(tool_names=[f"tool_{i}" for i in range(100_000)]),
        TurnOptions(tool_mode=long_name),
        TurnOptions(tool_mode=f"require:{long_name}"),
        TurnOptions(reasoning_effort=long_name),
    ]
    for options in cases:
        with pytest.raises(InvalidTurnOptions) as caught:
            validate_turn_options(options, ["read_file"])
        assert len(str(caught.value)) < QUOTE_BOUND, str(caught.value)[:300]
    with pytest.raises(InvalidTurnOptions, match=r"tool_0, tool_1, tool_2, tool_3, tool_4 and 99,995 more"):
        validate_turn_options(cases[1], ["read_file"])


def test_excerpt_marks_the_cut_and_the_length() -> None:
    assert excerpt("short") == "short"
    cut = excerpt("x" * 1_000)
    assert cut == "x" * 200 + "… (1,000 characters)"


# -- text that is not valid Unicode ----------------------------------------------------------------------------


def test_encode_writes_lone_surrogates_as_replacement_characters() -> None:
    # What Python makes of a file name that is not UTF-8 (os.listdir uses surrogateescape): the line stays valid.
    event = ToolEndEvent(tool="list_directory", success=True, output="caf\udce9 \ud800!", call_id="c")
    line = encode(event)
    assert (
        line
        == '{"type":"tool_end","tool":"list_directory","success":true,"output":"caf\ufffd \ufffd!","call_id":"c"}\n'.encode()
    )
    assert decode_event(line) == ToolEndEvent(
        tool="list_directory", success=True, output="caf\ufffd \ufffd!", call_id="c"
    )
    unknown = UnknownEvent("future", {"type": "future", "k\udcff": ["\udcff"]})
    assert encode(unknown) == '{"type":"future","k\ufffd":["\ufffd"]}\n'.encode()
