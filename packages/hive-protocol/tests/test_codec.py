from __future__ import annotations

from collections.abc import Callable
from typing import Any
from typing import get_args

import msgspec
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from protocol_strategies import for_struct

import hive_protocol as hp
from hive_protocol import ContextUpdateRequest
from hive_protocol import ErrorEvent
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import ProtocolError
from hive_protocol import SessionStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import TurnOptions
from hive_protocol import UnknownEvent
from hive_protocol import UnreadableRequest
from hive_protocol import UserMessageRequest
from hive_protocol import decode_event
from hive_protocol import decode_request
from hive_protocol import encode

EVENT_TYPES = get_args(hp.Event)
REQUEST_TYPES = get_args(hp.Request)


@pytest.mark.parametrize(
    ("cls", "decode"),
    [(cls, decode_event) for cls in EVENT_TYPES] + [(cls, decode_request) for cls in REQUEST_TYPES],
    ids=lambda value: getattr(value, "__name__", ""),
)
@settings(max_examples=60)
@given(data=st.data())
def test_every_event_and_request_round_trips_and_encodes_stably(
    cls: type[Any], decode: Callable[[bytes], object], data: st.DataObject
) -> None:
    message = data.draw(for_struct(cls))
    line = encode(message)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    decoded = decode(line)
    assert decoded == message
    assert encode(decoded) == line


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (TurnEndEvent(), b'{"type":"turn_end"}\n'),
        (
            TurnEndEvent(stop_reason="completed", input_tokens=1234, output_tokens=567, total_tokens=1801),
            b'{"type":"turn_end","input_tokens":1234,"output_tokens":567,"total_tokens":1801,"stop_reason":"completed"}\n',
        ),
        (
            ToolEndEvent(call_id="c1", success=True, tool="read_file", output=""),
            b'{"type":"tool_end","tool":"read_file","success":true,"output":"","call_id":"c1"}\n',
        ),
        (TextDeltaEvent(content=""), b'{"type":"text_delta","content":""}\n'),
        (
            TextDeltaEvent(content="h\u00e9llo \u2713 \u65e5\u672c"),
            '{"type":"text_delta","content":"h\u00e9llo \u2713 \u65e5\u672c"}\n'.encode(),
        ),
        (
            TextDeltaEvent(content="a\u2028b\u2029c"),
            b'{"type":"text_delta","content":"a\xe2\x80\xa8b\xe2\x80\xa9c"}\n',
        ),
        (
            TextDeltaEvent(content='q"\\\n\t\x01'),
            b'{"type":"text_delta","content":"q\\"\\\\\\n\\t\\u0001"}\n',
        ),
        (
            UserMessageRequest(content="do it", options=TurnOptions(temperature=0.1, max_output_tokens=256)),
            b'{"type":"user_message","content":"do it","options":{"temperature":0.1,"max_output_tokens":256}}\n',
        ),
        (
            UserMessageRequest(content="x", options=TurnOptions(temperature=1e-7, tool_names=[])),
            b'{"type":"user_message","content":"x","options":{"tool_names":[],"temperature":1e-7}}\n',
        ),
        (HitlResponseRequest(approved=False), b'{"type":"hitl_response","approved":false}\n'),
        (
            HitlRequestEvent(id="h1", action="edit", target="", description="Allow?"),
            b'{"type":"hitl_request","id":"h1","action":"edit","target":"","description":"Allow?"}\n',
        ),
        (
            ToolStartEvent(call_id="c", tool="t", input={"b": 1, "a": [None, 2.5]}),
            b'{"type":"tool_start","tool":"t","input":{"b":1,"a":[null,2.5]},"call_id":"c"}\n',
        ),
        (ErrorEvent(message="boom"), b'{"type":"error","message":"boom"}\n'),
        (
            SessionStartedEvent(session_id="s", protocol_version=1),
            b'{"type":"session_started","session_id":"s","protocol_version":1}\n',
        ),
        (hp.CancelRequest(), b'{"type":"cancel"}\n'),
    ],
)
def test_canonical_bytes(message: Any, expected: bytes) -> None:
    assert encode(message) == expected


def test_unset_optionals_are_never_written_as_null() -> None:
    for cls in EVENT_TYPES + REQUEST_TYPES:
        required = {f.name: f for f in msgspec.structs.fields(cls) if f.required}
        optional_none = [f.name for f in msgspec.structs.fields(cls) if not f.required and f.default is None]
        # Build with every required field given and every optional field left unset.
        values = {name: _sample(field.type) for name, field in required.items()}
        line = encode(cls(**values))
        for name in optional_none:
            assert f'"{name}"'.encode() not in line, (cls.__name__, name)
        assert b"null" not in line, line


def _sample(tp: Any) -> Any:
    return msgspec.convert(_SAMPLES.get(tp, _first_literal(tp)), tp)


def _first_literal(tp: Any) -> Any:
    args = get_args(tp)
    if args and isinstance(args[0], str):
        return args[0]
    if getattr(tp, "__origin__", None) is list:
        return []
    return {"x": 1}


_SAMPLES: dict[Any, Any] = {str: "s", int: 1, float: 0.5, bool: True, Any: {"k": "v"}}


# The example lines of the reference protocol (shared/reference/seeds-upstream.md §A.8): a client written
# for it must work against hive unchanged.
UPSTREAM_REQUESTS = [
    (
        '{"type":"user_message","content":"hello","model":"gpt-4o"}',
        UserMessageRequest(content="hello", model="gpt-4o"),
    ),
    (
        '{"type":"user_message","content":"do it","options":{"tool_names":["ReadFile"],"tool_mode":"none",'
        '"reasoning_effort":"low","temperature":0.1,"max_output_tokens":256}}',
        UserMessageRequest(
            content="do it",
            options=TurnOptions(
                tool_names=["ReadFile"],
                tool_mode="none",
                reasoning_effort="low",
                temperature=0.1,
                max_output_tokens=256,
            ),
        ),
    ),
    (
        '{"type":"context_update","working_path":"/home/user/docs"}',
        ContextUpdateRequest(working_path="/home/user/docs"),
    ),
    (
        '{"type":"hitl_response","approved":true,"reason":"looks good"}',
        HitlResponseRequest(approved=True, reason="looks good"),
    ),
    ('{"type":"cancel"}', hp.CancelRequest()),
    ('{"type":"shutdown"}', hp.ShutdownRequest()),
    ('{"id":"r1","approved":true,"type":"hitl_response"}', HitlResponseRequest(approved=True, id="r1")),
    (
        '{"type":"user_message","content":"hi","model":null,"extra":{"ignored":true}}',
        UserMessageRequest(content="hi"),
    ),
]


@pytest.mark.parametrize(("line", "expected"), UPSTREAM_REQUESTS)
def test_upstream_request_lines_decode(line: str, expected: hp.Request) -> None:
    assert decode_request(line) == expected
    assert decode_request(line.encode()) == expected


UPSTREAM_EVENTS = [
    ('{"type":"session_started","session_id":"sess-001"}', SessionStartedEvent(session_id="sess-001")),
    (
        '{"type":"tool_start","tool":"WriteFile","input":null,"call_id":"call-7"}',
        ToolStartEvent(tool="WriteFile", input=None, call_id="call-7"),
    ),
    (
        '{"type":"hitl_request","id":"0123456789abcdef0123456789abcdef","action":"Configuration file","target":"app.json",'
        '"description":"Allow this operation?","tool_name":"WriteFile","arguments":{"path":"app.json","content":"{}"},'
        '"call_id":"call-7","level":"medium"}',
        HitlRequestEvent(
            id="0123456789abcdef0123456789abcdef",
            action="Configuration file",
            target="app.json",
            description="Allow this operation?",
            tool_name="WriteFile",
            arguments={"path": "app.json", "content": "{}"},
            call_id="call-7",
            level="medium",
        ),
    ),
    (
        '{"type":"tool_end","tool":"WalkFolder","success":false,"output":"timed out","call_id":"tc-1","refusal":"timed_out"}',
        ToolEndEvent(
            tool="WalkFolder", success=False, output="timed out", call_id="tc-1", refusal="timed_out"
        ),
    ),
    (
        '{"type":"tool_end","tool":"SearchFolder","success":true,"output":"3 matches","call_id":"tc-1","stats":{"files_visited":40,"stopped":"budget"}}',
        ToolEndEvent(
            tool="SearchFolder",
            success=True,
            output="3 matches",
            call_id="tc-1",
            stats={"files_visited": 40, "stopped": "budget"},
        ),
    ),
    (
        '{"type":"turn_end","input_tokens":1234,"output_tokens":567,"total_tokens":1801,"stop_reason":"completed","duration_ms":4210}',
        TurnEndEvent(
            input_tokens=1234, output_tokens=567, total_tokens=1801, stop_reason="completed", duration_ms=4210
        ),
    ),
    ('{"type":"turn_end","input_tokens":null,"output_tokens":null,"total_tokens":null}', TurnEndEvent()),
    (
        '{"type":"error","message":"The prompt is too long.","code":"context_limit"}',
        ErrorEvent(message="The prompt is too long.", code="context_limit"),
    ),
]


@pytest.mark.parametrize(("line", "expected"), UPSTREAM_EVENTS)
def test_upstream_event_lines_decode(line: str, expected: hp.Event) -> None:
    assert decode_event(line) == expected


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b"{not json", "malformed JSON"),
        (b"null", "got null"),
        (b"[1,2]", "got list"),
        (b'"text"', "got str"),
        (b'{"type":"launch_rockets"}', "unknown request type 'launch_rockets'"),
        (b'{"content":"hi"}', "has no 'type'"),
        (b'{"type":"user_message"}', "invalid user_message"),
        (b'{"type":"user_message","content":7}', "invalid user_message"),
        (b'{"type":"hitl_response","approved":"yes"}', "invalid hitl_response"),
    ],
)
def test_unreadable_requests_become_a_typed_value(line: bytes, fragment: str) -> None:
    result = decode_request(line)
    assert isinstance(result, UnreadableRequest)
    assert fragment in result.message
    assert result.line == line
    event = result.to_event()
    assert event.code == "unreadable_request"
    assert event.message.startswith("Unreadable request skipped: ")


def test_unknown_event_type_is_kept_whole_and_written_back() -> None:
    line = b'{"type":"future_thing","b":1,"a":{"x":[1,2]}}'
    event = decode_event(line)
    assert event == UnknownEvent("future_thing", {"type": "future_thing", "b": 1, "a": {"x": [1, 2]}})
    assert encode(event) == line + b"\n"


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b"{oops", "malformed JSON"),
        (b"null", "got null"),
        (b'{"type":"text_delta"}', "invalid text_delta"),
        (b'{"type":"turn_end","stop_reason":"exploded"}', "invalid turn_end"),
        (b'{"no_type":1}', "has no 'type'"),
    ],
)
def test_bad_event_lines_raise_protocol_error(line: bytes, fragment: str) -> None:
    with pytest.raises(ProtocolError, match=fragment):
        decode_event(line)


def test_event_fields_in_any_order_and_unknown_fields_ignored() -> None:
    line = b'{"call_id":"c","success":true,"future":{"x":1},"tool":"t","type":"tool_end"}'
    assert decode_event(line) == ToolEndEvent(tool="t", success=True, call_id="c")
