"""Gemini ``generateContent`` and ``streamGenerateContent`` through raw ``httpx2`` (no SDK is installed here)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
import pytest

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

STREAM = "/v1beta/models/gemini-test:streamGenerateContent"
WHOLE = "/v1beta/models/gemini-test:generateContent"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
HEADERS = {"x-goog-api-key": "test"}

FULL = Round(
    parts=[
        ScriptThinking(chunks=["Let me ", "look."], signature="thought-sig"),
        ScriptText(chunks=["Reading ", "both."]),
        ScriptToolCall(
            id="unused", name="read_file", arguments=['{"path": ', '"a.txt"}'], signature="call-sig"
        ),
        ScriptToolCall(id="unused", name="read_file", arguments=['{"path": "b', '.txt"}']),
    ],
    usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
)


@contextmanager
def serve(*rounds: Round) -> Iterator[tuple[ScriptedModelServer, httpx2.Client]]:
    with (
        ScriptedModelServer(rounds) as server,
        httpx2.Client(base_url=server.url, headers=HEADERS, timeout=10) as client,
    ):
        yield server, client


def sse_payloads(client: httpx2.Client, path: str = STREAM) -> list[Any]:
    with client.stream("POST", path, params={"alt": "sse"}, json=REQUEST) as response:
        assert response.status_code == 200
        return [event.json() for event in httpx2.EventSource(response)]


def parts_of(responses: list[Any]) -> list[dict[str, Any]]:
    return [part for response in responses for part in response["candidates"][0]["content"]["parts"]]


def test_an_sse_stream_carries_thoughts_text_calls_and_usage() -> None:
    with serve(FULL) as (server, client):
        responses = sse_payloads(client)
        [request] = server.requests
    assert (request.path, request.query, request.stream) == (STREAM, {"alt": "sse"}, True)
    assert request.headers["x-goog-api-key"] == "test"
    assert request.body == REQUEST
    assert parts_of(responses) == [
        {"text": "Let me ", "thought": True},
        {"text": "look.", "thought": True, "thoughtSignature": "thought-sig"},
        {"text": "Reading "},
        {"text": "both."},
        {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}, "thoughtSignature": "call-sig"},
        {"functionCall": {"name": "read_file", "args": {"path": "b.txt"}}},
        {"text": ""},
    ]
    last = responses[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"] == {
        "promptTokenCount": 120,
        "candidatesTokenCount": 30,
        "totalTokenCount": 150,
        "cachedContentTokenCount": 100,
    }
    assert all("finishReason" not in r["candidates"][0] for r in responses[:-1])
    assert {r["modelVersion"] for r in responses} == {"gemini-test"}


def test_the_event_stream_uses_crlf_line_ends() -> None:
    with serve(Round(parts=[ScriptText(chunks=["x"])])) as (_, client):
        reply = client.post(STREAM, params={"alt": "sse"}, json=REQUEST)
    assert reply.headers["content-type"].startswith("text/event-stream")
    assert reply.content.startswith(b'data: {"candidates"')
    assert reply.content.count(b"\r\n\r\n") == 2


def test_without_alt_sse_the_stream_is_a_json_array() -> None:
    with serve(FULL) as (server, client):
        reply = client.post(STREAM, json=REQUEST)
        assert server.requests[0].stream is True
    assert reply.headers["content-type"].startswith("application/json")
    responses = reply.json()
    assert [p.get("text") for p in parts_of(responses)][:4] == ["Let me ", "look.", "Reading ", "both."]
    assert responses[-1]["candidates"][0]["finishReason"] == "STOP"


def test_a_whole_body_assembles_the_round() -> None:
    with serve(FULL) as (server, client):
        body = client.post(WHOLE, json=REQUEST).json()
        assert server.requests[0].stream is False
    candidate = body["candidates"][0]
    assert candidate["content"] == {
        "parts": [
            {"text": "Let me look.", "thought": True, "thoughtSignature": "thought-sig"},
            {"text": "Reading both."},
            {
                "functionCall": {"name": "read_file", "args": {"path": "a.txt"}},
                "thoughtSignature": "call-sig",
            },
            {"functionCall": {"name": "read_file", "args": {"path": "b.txt"}}},
        ],
        "role": "model",
    }
    assert candidate["finishReason"] == "STOP"
    assert body["usageMetadata"]["totalTokenCount"] == 150


@pytest.mark.parametrize(("reason", "wire"), [("length", "MAX_TOKENS"), ("content_filter", "SAFETY")])
def test_finish_reasons_map(reason: Any, wire: str) -> None:
    round_ = Round(parts=[ScriptText(chunks=["x"])], finish_reason=reason)
    with serve(round_, round_) as (_, client):
        whole = client.post(WHOLE, json=REQUEST).json()
        streamed = sse_payloads(client)
    assert whole["candidates"][0]["finishReason"] == streamed[-1]["candidates"][0]["finishReason"] == wire


def test_a_429_carries_retry_after_and_googles_error_shape() -> None:
    with serve(Round(failure=HttpFailure(status=429, retry_after=4))) as (_, client):
        reply = client.post(STREAM, params={"alt": "sse"}, json=REQUEST)
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "4"
    assert reply.json()["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert reply.json()["error"]["code"] == 429


def test_a_500_is_internal() -> None:
    with serve(Round(failure=HttpFailure(status=500))) as (_, client):
        reply = client.post(WHOLE, json=REQUEST)
    assert (reply.status_code, reply.json()["error"]["status"]) == (500, "INTERNAL")


def test_the_context_length_error_is_recognisable() -> None:
    with serve(Round(failure=ContextLengthFailure())) as (_, client):
        reply = client.post(STREAM, params={"alt": "sse"}, json=REQUEST)
    error = reply.json()["error"]
    assert (reply.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
    assert "exceeds the maximum number of tokens" in error["message"]


def test_malformed_sse_after_the_scripted_chunks() -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=MalformedStreamFailure(after_chunks=1))
    with (
        serve(round_) as (_, client),
        client.stream("POST", STREAM, params={"alt": "sse"}, json=REQUEST) as reply,
    ):
        events = list(httpx2.EventSource(reply))
    assert json.loads(events[0].data)["candidates"][0]["content"]["parts"] == [{"text": "a"}]
    assert len(events) == 2
    with pytest.raises(json.JSONDecodeError):
        events[1].json()


def test_a_call_is_sent_only_once_all_its_argument_chunks_are_due() -> None:
    round_ = Round(
        parts=[ScriptText(chunks=["a"]), ScriptToolCall(id="c", name="t", arguments=["{", "}"])],
        failure=DropConnectionFailure(after_chunks=2),
    )
    with (
        serve(round_) as (_, client),
        client.stream("POST", STREAM, params={"alt": "sse"}, json=REQUEST) as reply,
    ):
        seen: list[Any] = []
        with pytest.raises(httpx2.RemoteProtocolError):
            seen.extend(event.json() for event in httpx2.EventSource(reply))
    assert parts_of(seen) == [{"text": "a"}]


def test_a_dropped_whole_body_is_an_incomplete_read() -> None:
    round_ = Round(parts=[ScriptText(chunks=["abc"])], failure=DropConnectionFailure())
    with serve(round_) as (_, client), pytest.raises(httpx2.RemoteProtocolError):
        client.post(WHOLE, json=REQUEST)
