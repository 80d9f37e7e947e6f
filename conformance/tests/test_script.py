from __future__ import annotations

from pathlib import Path
from types import FunctionType

import msgspec
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_conformance import script
from hive_conformance.script import SCRIPT_FINISH_REASONS
from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import DropConnectionFailure
from hive_conformance.script import HttpFailure
from hive_conformance.script import MalformedStreamFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_conformance.script import decode_script
from hive_conformance.script import encode_script
from hive_conformance.script import load_script

_text = st.text(max_size=8)
_chunks = st.lists(_text, max_size=4)
_count = st.integers(min_value=0, max_value=10_000)
_parts = st.one_of(
    st.builds(ScriptText, chunks=_chunks),
    st.builds(ScriptThinking, chunks=_chunks, signature=st.none() | _text),
    st.builds(ScriptToolCall, id=_text, name=_text, arguments=_chunks, signature=st.none() | _text),
)
_failures = st.one_of(
    st.none(),
    st.builds(
        HttpFailure,
        status=st.integers(min_value=400, max_value=599),
        message=st.none() | _text,
        body=st.none() | st.dictionaries(_text, _text, max_size=2),
        retry_after=st.none() | st.floats(min_value=0, max_value=60),
        headers=st.dictionaries(_text, _text, max_size=2),
    ),
    st.builds(ContextLengthFailure, message=st.none() | _text),
    st.builds(MalformedStreamFailure, after_chunks=_count),
    st.builds(DropConnectionFailure, after_chunks=_count),
)
rounds = st.builds(
    Round,
    parts=st.lists(_parts, max_size=4),
    usage=st.none() | st.builds(Usage, input_tokens=_count, output_tokens=_count, cached_input_tokens=_count),
    finish_reason=st.none() | st.sampled_from(SCRIPT_FINISH_REASONS),
    failure=_failures,
    chunk_delay=st.floats(min_value=0, max_value=5),
)


@settings(max_examples=80)
@given(st.lists(rounds, max_size=5))
def test_a_script_survives_jsonl(script_rounds: list[Round]) -> None:
    data = encode_script(script_rounds)
    assert data.count(b"\n") == len(script_rounds)
    assert decode_script(data) == script_rounds
    assert encode_script(decode_script(data)) == data


def test_the_jsonl_format_is_plain_tagged_json() -> None:
    round_ = Round(
        parts=[
            ScriptThinking(chunks=["hm"], signature="sig"),
            ScriptText(chunks=["Hel", "lo"]),
            ScriptToolCall(id="call_1", name="read_file", arguments=['{"path":', '"a"}']),
        ],
        usage=Usage(input_tokens=12, output_tokens=3),
        failure=HttpFailure(status=429, retry_after=2),
    )
    assert msgspec.json.decode(encode_script([round_])) == {
        "parts": [
            {"type": "thinking", "chunks": ["hm"], "signature": "sig"},
            {"type": "text", "chunks": ["Hel", "lo"]},
            {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": ['{"path":', '"a"}']},
        ],
        "usage": {"input_tokens": 12, "output_tokens": 3},
        "failure": {"kind": "http_error", "status": 429, "retry_after": 2.0},
    }


def test_blank_lines_are_skipped_and_a_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "script.jsonl"
    path.write_text(
        '\n{"parts": [{"type": "text", "chunks": ["hi"]}]}\n\n{"failure": {"kind": "context_length"}}\n'
    )
    assert load_script(path) == [
        Round(parts=[ScriptText(chunks=["hi"])]),
        Round(failure=ContextLengthFailure()),
    ]


@pytest.mark.parametrize(
    ("line", "complaint"),
    [
        ('{"partz": []}', "partz"),
        ('{"parts": [{"type": "picture"}]}', "picture"),
        ('{"failure": {"kind": "drop_connection", "after_chunks": -1}}', ">= 0"),
        ('{"failure": {"kind": "http_error", "status": 42}}', ">= 100"),
        ("not json", "malformed"),
    ],
)
def test_a_bad_line_is_named(line: str, complaint: str) -> None:
    with pytest.raises(ValueError, match=r"script line 2: .*") as caught:
        decode_script('{"parts": []}\n' + line + "\n")
    assert complaint in str(caught.value).lower()


@pytest.mark.parametrize(
    ("round_", "expected"),
    [
        (Round(), "stop"),
        (Round(parts=[ScriptText(chunks=["a"])]), "stop"),
        (Round(parts=[ScriptText(chunks=["a"]), ScriptToolCall(id="c", name="t")]), "tool_calls"),
        (Round(parts=[ScriptToolCall(id="c", name="t")], finish_reason="length"), "length"),
    ],
)
def test_the_finish_reason_defaults_from_the_parts(round_: Round, expected: str) -> None:
    assert round_.effective_finish_reason == expected


def test_chunks_are_counted_alike_in_every_part() -> None:
    round_ = Round(
        parts=[
            ScriptThinking(chunks=["a", "b"]),
            ScriptText(chunks=["c"]),
            ScriptToolCall(id="c", name="t", arguments=["{", "}"]),
            ScriptToolCall(id="d", name="t"),
        ]
    )
    assert round_.chunk_count == 5


def test_all_is_sorted_and_complete() -> None:
    names = script.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    defined_here = {
        name
        for name, value in vars(script).items()
        if isinstance(value, type | FunctionType)
        and value.__module__ == script.__name__
        and not name.startswith("_")
    }
    assert defined_here <= set(names)
    assert all(hasattr(script, name) for name in names)
