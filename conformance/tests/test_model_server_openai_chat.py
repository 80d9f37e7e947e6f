"""OpenAI Chat Completions through the real ``openai`` SDK."""

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

MESSAGES: Any = [{"role": "user", "content": "hi"}]

FULL = Round(
    parts=[
        ScriptThinking(chunks=["Let me ", "look."], signature="ignored-here"),
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
        stream = client.chat.completions.create(
            model="gpt-test", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
        )
        chunks = list(stream)
        server.assert_consumed()
        assert server.requests[0].stream is True
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    thinking = [
        d.model_extra["reasoning_content"]
        for d in deltas
        if d.model_extra and "reasoning_content" in d.model_extra
    ]
    assert thinking == ["Let me ", "look."]
    assert [d.content for d in deltas if d.content] == ["Reading ", "both."]
    calls = [call for d in deltas for call in d.tool_calls or []]
    assert [(c.index, c.id, c.function and c.function.name) for c in calls if c.id] == [
        (0, "call_a", "read_file"),
        (1, "call_b", "read_file"),
    ]
    arguments = {0: "", 1: ""}
    for call in calls:
        arguments[call.index] += (call.function.arguments or "") if call.function else ""
    assert {i: json.loads(text) for i, text in arguments.items()} == {
        0: {"path": "a.txt"},
        1: {"path": "b.txt"},
    }
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "tool_calls"
    ]
    usage = chunks[-1].usage
    assert usage is not None
    assert chunks[-1].choices == []
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (120, 30, 150)
    assert usage.prompt_tokens_details is not None
    assert usage.prompt_tokens_details.cached_tokens == 100
    assert all(chunk.id == "chatcmpl-scripted-0" for chunk in chunks)


def test_the_sdk_stream_helper_assembles_the_same_round() -> None:
    with (
        serve(FULL) as (_, client),
        client.chat.completions.stream(model="gpt-test", messages=MESSAGES) as stream,
    ):
        for _event in stream:
            pass
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Reading both."
    assert [(c.id, c.function.arguments) for c in message.tool_calls or []] == [
        ("call_a", '{"path": "a.txt"}'),
        ("call_b", '{"path": "b.txt"}'),
    ]
    # Without stream_options.include_usage, OpenAI sends no usage chunk.
    assert final.usage is None


def test_a_whole_body_assembles_the_round() -> None:
    with serve(FULL) as (_, client):
        reply = client.chat.completions.create(model="gpt-test", messages=MESSAGES)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "Reading both."
    assert choice.message.model_extra == {"reasoning_content": "Let me look."}
    assert [
        (c.id, c.type, c.function.name, c.function.arguments) for c in choice.message.tool_calls or []
    ] == [
        ("call_a", "function", "read_file", '{"path": "a.txt"}'),
        ("call_b", "function", "read_file", '{"path": "b.txt"}'),
    ]
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (120, 30)
    assert reply.model == "gpt-test"


@pytest.mark.parametrize(("reason", "wire"), [("length", "length"), ("content_filter", "content_filter")])
def test_finish_reasons_map(reason: Any, wire: str) -> None:
    round_ = Round(parts=[ScriptText(chunks=["cut"])], finish_reason=reason)
    with serve(round_, round_) as (_, client):
        whole = client.chat.completions.create(model="m", messages=MESSAGES)
        streamed = list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
    assert whole.choices[0].finish_reason == wire
    assert [c.choices[0].finish_reason for c in streamed if c.choices[0].finish_reason] == [wire]


def test_a_429_with_retry_after_is_a_rate_limit_error() -> None:
    round_ = Round(failure=HttpFailure(status=429, retry_after=7))
    with serve(round_) as (_, client), pytest.raises(RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.code == "rate_limit_exceeded"


def test_the_sdk_honours_retry_after_and_takes_the_next_round() -> None:
    rounds = (
        Round(failure=HttpFailure(status=429, retry_after=0.01)),
        Round(parts=[ScriptText(chunks=["ok"])]),
    )
    with serve(*rounds, retries=1) as (server, client):
        reply = client.chat.completions.create(model="m", messages=MESSAGES)
        assert reply.choices[0].message.content == "ok"
        assert [r.round for r in server.requests] == [0, 1]


def test_a_500_is_an_internal_server_error_with_the_scripted_message() -> None:
    round_ = Round(failure=HttpFailure(status=500, message="upstream fell over"))
    with serve(round_) as (_, client), pytest.raises(InternalServerError, match="upstream fell over"):
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_a_custom_error_body_is_sent_verbatim() -> None:
    failure = HttpFailure(status=503, body={"detail": "maintenance"}, headers={"x-should-retry": "false"})
    with serve(Round(failure=failure)) as (_, client), pytest.raises(InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert caught.value.body == {"detail": "maintenance"}
    assert caught.value.response.headers["x-should-retry"] == "false"


def test_the_context_length_error_is_recognisable() -> None:
    with serve(Round(failure=ContextLengthFailure()), Round(failure=ContextLengthFailure())) as (_, client):
        with pytest.raises(BadRequestError) as caught:
            client.chat.completions.create(model="m", messages=MESSAGES)
        assert caught.value.code == "context_length_exceeded"
        assert "maximum context length" in caught.value.message
        with pytest.raises(BadRequestError, match="maximum context length"):
            list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))


def test_malformed_sse_breaks_the_stream_after_the_scripted_chunks() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b", "c"])], failure=MalformedStreamFailure(after_chunks=2))
    with serve(round_) as (_, client):
        stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        seen: list[str] = []
        with pytest.raises(json.JSONDecodeError):
            seen.extend(chunk.choices[0].delta.content or "" for chunk in stream)
    assert seen == ["", "a", "b"]


def test_a_malformed_whole_body_does_not_parse() -> None:
    round_ = Round(parts=[ScriptText(chunks=["abc"])], failure=MalformedStreamFailure())
    with serve(round_) as (_, client), pytest.raises(json.JSONDecodeError):
        client.chat.completions.create(model="m", messages=MESSAGES)


def test_a_dropped_stream_is_a_connection_error_after_the_scripted_chunks() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b", "c"])], failure=DropConnectionFailure(after_chunks=1))
    with serve(round_) as (_, client):
        stream = client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
        seen: list[str] = []
        with pytest.raises(APIConnectionError):
            seen.extend(chunk.choices[0].delta.content or "" for chunk in stream)
    assert seen == ["", "a"]


def test_a_dropped_whole_body_is_a_connection_error() -> None:
    round_ = Round(parts=[ScriptText(chunks=["abc"])], failure=DropConnectionFailure())
    with serve(round_) as (server, client), pytest.raises(APIConnectionError):
        client.chat.completions.create(model="m", messages=MESSAGES)
    assert len(server.requests) == 1
