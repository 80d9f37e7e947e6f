"""OpenAI Responses through the real ``openai`` SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from openai import APIConnectionError
from openai import BadRequestError
from openai import InternalServerError
from openai import OpenAI
from openai import RateLimitError

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

FULL = Round(
    parts=[
        ScriptThinking(chunks=["Let me ", "look."], signature="enc-1"),
        ScriptText(chunks=["Reading ", "both."]),
        ScriptToolCall(id="call_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
        ScriptToolCall(id="call_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
    ],
    usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
)


@contextmanager
def serve(*rounds: Round, retries: int = 0) -> Iterator[tuple[ScriptedModelServer, OpenAI]]:
    with (
        ScriptedModelServer(rounds) as server,
        OpenAI(base_url=server.url + "/v1", api_key="test", max_retries=retries) as client,
    ):
        yield server, client


def test_a_stream_carries_thinking_text_parallel_calls_and_usage() -> None:
    with serve(FULL) as (server, client):
        events = list(client.responses.create(model="gpt-test", input="hi", stream=True))
        assert server.requests[0].path == "/v1/responses"
        assert server.requests[0].body["input"] == "hi"
    kinds = [event.type for event in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    by_kind: dict[str, list[Any]] = {}
    for event in events:
        by_kind.setdefault(event.type, []).append(event)
    assert [e.delta for e in by_kind["response.reasoning_summary_text.delta"]] == ["Let me ", "look."]
    assert [e.delta for e in by_kind["response.output_text.delta"]] == ["Reading ", "both."]
    arguments = [(e.output_index, e.delta) for e in by_kind["response.function_call_arguments.delta"]]
    assert arguments == [(2, '{"path": '), (2, '"a.txt"}'), (3, '{"path": "b'), (3, '.txt"}')]
    added = [e.item for e in by_kind["response.output_item.added"]]
    assert [item.type for item in added] == ["reasoning", "message", "function_call", "function_call"]
    assert [(item.call_id, item.name) for item in added if item.type == "function_call"] == [
        ("call_a", "read_file"),
        ("call_b", "read_file"),
    ]
    done = [e.item for e in by_kind["response.output_item.done"]]
    assert done[0].encrypted_content == "enc-1"
    assert [item.arguments for item in done if item.type == "function_call"] == [
        '{"path": "a.txt"}',
        '{"path": "b.txt"}',
    ]
    usage = events[-1].response.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (120, 30, 150)
    assert usage.input_tokens_details.cached_tokens == 100


def test_the_sdk_stream_helper_assembles_the_same_round() -> None:
    with serve(FULL) as (_, client), client.responses.stream(model="gpt-test", input="hi") as stream:
        texts = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert texts == ["Reading ", "both."]
    assert final.output_text == "Reading both."
    assert final.status == "completed"
    assert [(o.call_id, json.loads(o.arguments)) for o in final.output if o.type == "function_call"] == [
        ("call_a", {"path": "a.txt"}),
        ("call_b", {"path": "b.txt"}),
    ]


def test_a_whole_body_assembles_the_round() -> None:
    with serve(FULL) as (_, client):
        response = client.responses.create(model="gpt-test", input="hi", instructions="be brief")
    assert response.id == "resp_scripted_0"
    assert response.output_text == "Reading both."
    assert response.instructions == "be brief"
    reasoning = response.output[0]
    assert reasoning.type == "reasoning"
    assert [s.text for s in reasoning.summary] == ["Let me look."]
    assert reasoning.encrypted_content == "enc-1"
    assert [o.call_id for o in response.output if o.type == "function_call"] == ["call_a", "call_b"]
    assert response.usage is not None
    assert response.usage.output_tokens == 30


@pytest.mark.parametrize(
    ("reason", "detail"), [("length", "max_output_tokens"), ("content_filter", "content_filter")]
)
def test_a_cut_short_round_is_incomplete(reason: Any, detail: str) -> None:
    round_ = Round(parts=[ScriptText(chunks=["cut"])], finish_reason=reason)
    with serve(round_, round_) as (_, client):
        whole = client.responses.create(model="m", input="hi")
        events = list(client.responses.create(model="m", input="hi", stream=True))
    assert whole.status == "incomplete"
    assert whole.incomplete_details is not None
    assert whole.incomplete_details.reason == detail
    last = events[-1]
    assert last.type == "response.incomplete"
    assert last.response.incomplete_details is not None
    assert last.response.incomplete_details.reason == detail


def test_a_429_with_retry_after_is_a_rate_limit_error() -> None:
    round_ = Round(failure=HttpFailure(status=429, retry_after=3))
    with serve(round_) as (_, client), pytest.raises(RateLimitError) as caught:
        client.responses.create(model="m", input="hi")
    assert caught.value.response.headers["retry-after"] == "3"


def test_a_500_is_an_internal_server_error() -> None:
    with serve(Round(failure=HttpFailure(status=500))) as (_, client), pytest.raises(InternalServerError):
        client.responses.create(model="m", input="hi", stream=True)


def test_the_context_length_error_is_recognisable() -> None:
    with (
        serve(Round(failure=ContextLengthFailure())) as (_, client),
        pytest.raises(BadRequestError) as caught,
    ):
        client.responses.create(model="m", input="hi")
    assert caught.value.code == "context_length_exceeded"
    assert "context window" in caught.value.message


def test_malformed_sse_breaks_the_stream_after_the_scripted_chunks() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=MalformedStreamFailure(after_chunks=1))
    with serve(round_) as (_, client):
        events: list[Any] = []
        with pytest.raises(json.JSONDecodeError):
            events.extend(client.responses.create(model="m", input="hi", stream=True))
    assert [e.delta for e in events if e.type == "response.output_text.delta"] == ["a"]


def test_a_dropped_stream_is_a_connection_error_before_completion() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=DropConnectionFailure(after_chunks=2))
    with serve(round_) as (_, client):
        kinds: list[str] = []
        with pytest.raises(APIConnectionError):
            kinds.extend(event.type for event in client.responses.create(model="m", input="hi", stream=True))
    assert kinds.count("response.output_text.delta") == 2
    assert "response.completed" not in kinds
