"""Anthropic Messages through the real ``anthropic`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest
from anthropic import Anthropic
from anthropic import APIConnectionError
from anthropic import APIStatusError
from anthropic import BadRequestError
from anthropic import InternalServerError
from anthropic import RateLimitError

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import DropConnectionFailure
from hive_conformance.script import HttpFailure
from hive_conformance.script import MalformedStreamFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage

REQUEST: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}

FULL = Round(
    parts=[
        ScriptThinking(chunks=["Let me ", "look."], signature="sig-1"),
        ScriptText(chunks=["Reading ", "both."]),
        ScriptToolCall(id="toolu_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
        ScriptToolCall(id="toolu_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
    ],
    usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
)


@contextmanager
def serve(*rounds: Round, retries: int = 0) -> Iterator[tuple[ScriptedModelServer, Anthropic]]:
    with (
        ScriptedModelServer(rounds) as server,
        Anthropic(base_url=server.url, api_key="test", max_retries=retries) as client,
    ):
        yield server, client


def test_a_stream_carries_thinking_text_parallel_calls_and_usage() -> None:
    with serve(FULL) as (server, client):
        events = list(client.messages.create(**REQUEST, stream=True))
        [request] = server.requests
    assert request.headers["authorization"] == "Bearer test"
    assert "anthropic-version" in request.headers
    assert request.path == "/v1/messages"
    assert request.body["stream"] is True
    kinds = [event.type for event in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    starts = [e.content_block for e in events if e.type == "content_block_start"]
    assert [block.type for block in starts] == ["thinking", "text", "tool_use", "tool_use"]
    assert [(b.id, b.name) for b in starts if b.type == "tool_use"] == [
        ("toolu_a", "read_file"),
        ("toolu_b", "read_file"),
    ]
    deltas = [(e.index, e.delta) for e in events if e.type == "content_block_delta"]
    assert [d.thinking for _, d in deltas if d.type == "thinking_delta"] == ["Let me ", "look."]
    assert [d.signature for _, d in deltas if d.type == "signature_delta"] == ["sig-1"]
    assert [d.text for _, d in deltas if d.type == "text_delta"] == ["Reading ", "both."]
    assert [(i, d.partial_json) for i, d in deltas if d.type == "input_json_delta"] == [
        (2, '{"path": '),
        (2, '"a.txt"}'),
        (3, '{"path": "b'),
        (3, '.txt"}'),
    ]
    start, final = events[0], events[-2]
    assert start.type == "message_start"
    assert final.type == "message_delta"
    assert start.message.usage.input_tokens == 20
    assert start.message.usage.cache_read_input_tokens == 100
    assert final.delta.stop_reason == "tool_use"
    assert final.usage.output_tokens == 30


def test_the_sdk_stream_helper_assembles_the_same_round() -> None:
    with serve(FULL) as (_, client), client.messages.stream(**REQUEST) as stream:
        text = "".join(stream.text_stream)
        message = stream.get_final_message()
    assert text == "Reading both."
    thinking, _, first, second = message.content
    assert thinking.type == "thinking"
    assert (thinking.thinking, thinking.signature) == (
        "Let me look.",
        "sig-1",
    )
    assert first.type == "tool_use"
    assert first.input == {"path": "a.txt"}
    assert second.type == "tool_use"
    assert second.input == {"path": "b.txt"}
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (20, 30)


def test_a_whole_body_assembles_the_round() -> None:
    with serve(FULL) as (_, client):
        message = client.messages.create(**REQUEST)
    assert message.id == "msg_scripted_0"
    assert message.model == "claude-test"
    assert [block.type for block in message.content] == ["thinking", "text", "tool_use", "tool_use"]
    assert [b.input for b in message.content if b.type == "tool_use"] == [
        {"path": "a.txt"},
        {"path": "b.txt"},
    ]
    assert message.usage.cache_read_input_tokens == 100


@pytest.mark.parametrize(
    ("reason", "wire"),
    [
        ("stop", "end_turn"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("tool_calls", "tool_use"),
    ],
)
def test_finish_reasons_map(reason: Any, wire: str) -> None:
    round_ = Round(parts=[ScriptText(chunks=["x"])], finish_reason=reason)
    with serve(round_, round_) as (_, client):
        whole = client.messages.create(**REQUEST)
        with client.messages.stream(**REQUEST) as stream:
            streamed = stream.get_final_message()
    assert whole.stop_reason == streamed.stop_reason == wire


def test_malformed_tool_arguments_reach_a_whole_body_as_text() -> None:
    round_ = Round(parts=[ScriptToolCall(id="toolu_x", name="t", arguments=['{"broken'])])
    with serve(round_) as (_, client), httpx2.Client(base_url=client.base_url) as raw:
        body = raw.post("/v1/messages", json=REQUEST).json()
    assert body["content"] == [{"type": "tool_use", "id": "toolu_x", "name": "t", "input": '{"broken'}]


def test_a_429_with_retry_after_is_a_rate_limit_error() -> None:
    round_ = Round(failure=HttpFailure(status=429, retry_after=5))
    with serve(round_) as (_, client), pytest.raises(RateLimitError) as caught:
        client.messages.create(**REQUEST)
    assert caught.value.response.headers["retry-after"] == "5"
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "rate_limit_error", "message": "scripted failure: 429 Too Many Requests"},
        "request_id": "req_scripted",
    }


def test_the_sdk_honours_retry_after_and_takes_the_next_round() -> None:
    rounds = (
        Round(failure=HttpFailure(status=529, retry_after=0.01)),
        Round(parts=[ScriptText(chunks=["ok"])]),
    )
    with serve(*rounds, retries=1) as (server, client):
        message = client.messages.create(**REQUEST)
        assert message.content[0].type == "text"
        assert message.content[0].text == "ok"
        assert [r.round for r in server.requests] == [0, 1]


def test_an_overload_is_an_api_status_error_of_its_own_type() -> None:
    with (
        serve(Round(failure=HttpFailure(status=529))) as (_, client),
        pytest.raises(APIStatusError) as caught,
    ):
        client.messages.create(**REQUEST)
    assert caught.value.status_code == 529
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["type"] == "overloaded_error"


def test_a_500_is_an_internal_server_error() -> None:
    with serve(Round(failure=HttpFailure(status=500))) as (_, client), pytest.raises(InternalServerError):
        client.messages.create(**REQUEST)


def test_the_context_length_error_is_recognisable() -> None:
    with (
        serve(Round(failure=ContextLengthFailure())) as (_, client),
        pytest.raises(BadRequestError) as caught,
    ):
        client.messages.create(**REQUEST, stream=True)
    assert "prompt is too long" in caught.value.message
    assert isinstance(caught.value.body, dict)
    assert caught.value.body["error"]["type"] == "invalid_request_error"


def test_malformed_sse_breaks_the_stream_after_the_scripted_chunks() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=MalformedStreamFailure(after_chunks=1))
    with serve(round_) as (_, client):
        events: list[Any] = []
        with pytest.raises(json.JSONDecodeError):
            events.extend(client.messages.create(**REQUEST, stream=True))
    assert [e.delta.text for e in events if e.type == "content_block_delta"] == ["a"]


def test_a_dropped_stream_fails_before_message_stop() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=DropConnectionFailure(after_chunks=2))
    with serve(round_) as (_, client):
        kinds: list[str] = []
        with pytest.raises(httpx2.RemoteProtocolError, match="incomplete chunked read"):
            kinds.extend(event.type for event in client.messages.create(**REQUEST, stream=True))
    assert kinds[-1] == "content_block_stop"
    assert "message_delta" not in kinds


def test_a_dropped_whole_body_is_a_connection_error() -> None:
    round_ = Round(parts=[ScriptText(chunks=["abc"])], failure=DropConnectionFailure())
    with serve(round_) as (_, client), pytest.raises(APIConnectionError):
        client.messages.create(**REQUEST)
