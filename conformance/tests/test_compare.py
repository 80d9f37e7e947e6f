"""Comparing event lines: which values may differ, and the diff a report shows."""

from __future__ import annotations

from hive_conformance.compare import diff_lines
from hive_conformance.compare import mask_line
from hive_conformance.compare import same_lines

TURN_END = b'{"type":"turn_end","input_tokens":3,"output_tokens":1,"total_tokens":4,"stop_reason":"completed","duration_ms":0}\n'


def test_a_measured_duration_matches_any_non_negative_integer() -> None:
    actual = TURN_END.replace(b'"duration_ms":0', b'"duration_ms":1734')
    assert mask_line(actual, TURN_END, ["turn_end.duration_ms"]) == TURN_END


def test_a_duration_that_is_not_a_count_is_kept_so_it_shows() -> None:
    for value in (b"-1", b"1.5", b'"12"', b"true", b"null"):
        actual = TURN_END.replace(b'"duration_ms":0', b'"duration_ms":' + value)
        assert mask_line(actual, TURN_END, ["turn_end.duration_ms"]) == actual


def test_presence_still_counts() -> None:
    without = TURN_END.replace(b',"duration_ms":0', b"")
    assert mask_line(without, TURN_END, ["turn_end.duration_ms"]) == without
    assert mask_line(TURN_END, without, ["turn_end.duration_ms"]) == TURN_END


def test_only_the_named_field_of_the_named_type_is_taken_over() -> None:
    expected = b'{"type":"error","message":"boom","code":"internal"}\n'
    actual = b'{"type":"error","message":"kaboom","code":"unknown"}\n'
    assert (
        mask_line(actual, expected, ["error.message"])
        == b'{"type":"error","message":"boom","code":"unknown"}\n'
    )
    assert mask_line(actual, expected, ["tool_end.output"]) == actual


def test_lines_of_different_types_or_unreadable_lines_are_left_alone() -> None:
    text = b'{"type":"text_delta","content":"x"}\n'
    assert mask_line(text, TURN_END, ["turn_end.duration_ms", "text_delta.content"]) == text
    assert mask_line(b"not json\n", TURN_END, ["turn_end.duration_ms"]) == b"not json\n"
    assert mask_line(b"null\n", b"null\n", ["turn_end.duration_ms"]) == b"null\n"


def test_masking_keeps_key_order_and_raw_unicode() -> None:
    expected = b'{"type":"hitl_request","id":"hitl-call_1","description":"\xc3\xa9\xe2\x80\xa8"}\n'
    actual = b'{"type":"hitl_request","id":"0f3a","description":"\xc3\xa9\xe2\x80\xa8"}\n'
    assert mask_line(actual, expected, ["hitl_request.id"]) == expected


def test_same_lines_compares_bytes_after_masking() -> None:
    actual = [b'{"type":"session_started","session_id":"abc","protocol_version":1}\n', TURN_END]
    expected = [b'{"type":"session_started","session_id":"conformance","protocol_version":1}\n', TURN_END]
    assert same_lines(actual, expected, ["session_started.session_id"])[0]
    assert not same_lines(actual, expected, [])[0]
    assert not same_lines(actual[:1], expected, ["session_started.session_id"])[0]
    assert not same_lines([*actual, TURN_END], expected, ["session_started.session_id"])[0]
    # A line that differs only in its ending is a difference.
    assert not same_lines([expected[0], TURN_END.replace(b"\n", b"\r\n")], expected, [])[0]


def test_the_diff_shows_what_changed_and_cuts_long_lines() -> None:
    long = b'{"type":"text_delta","content":"' + b"x" * 5000 + b'"}\n'
    diff = diff_lines([TURN_END, long, b'{"type":"a"}'], [TURN_END, b'{"type":"text_delta","content":"y"}\n'])
    lines = diff.splitlines()
    assert lines[0] == "--- expected"
    assert lines[1] == "+++ actual"
    assert '-{"type":"text_delta","content":"y"}' in lines
    assert any(
        line.startswith('+{"type":"text_delta","content":"xxx') and "(5035 bytes, #" in line for line in lines
    )
    assert '+{"type":"a"}  (no newline)' in lines
    assert diff_lines([TURN_END], [TURN_END]) == ""
