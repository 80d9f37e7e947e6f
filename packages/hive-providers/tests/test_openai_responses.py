"""OpenAIResponsesChatClient through the real ``openai`` SDK against the scripted model server (Responses API)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx2
import msgspec
import pytest
from providers_harness import READ
from providers_harness import assembled
from providers_harness import collect
from providers_harness import failing
from providers_harness import openai_responses
from providers_harness import scripted

import hive_core.messages as hm
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core.messages import user
from hive_providers import ProviderSettings
from hive_providers.openai_responses import OpenAIResponsesChatClient
from hive_providers.openai_responses import from_settings

pytestmark = pytest.mark.anyio


def serving(
    *rounds: Round, **options: Any
) -> AbstractAsyncContextManager[tuple[ScriptedModelServer, OpenAIResponsesChatClient]]:
    return scripted(openai_responses, *rounds, **options)


async def test_a_text_request_is_stateless_and_asks_for_no_reasoning() -> None:
    async with serving(Round(parts=[ScriptText(chunks=["ok"])]), reasoning=False) as (server, client):
        await collect(client)
        server.assert_consumed()
        request = server.requests[0]
    assert request.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.body
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["store"] is False
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert "reasoning" not in body
    assert "include" not in body
    assert "tools" not in body


async def test_reasoning_summary_is_thinking_and_its_encrypted_content_the_signature() -> None:
    round_ = Round(
        parts=[ScriptThinking(chunks=["Let me ", "look."], signature="enc-1"), ScriptText(chunks=["Done."])]
    )
    async with serving(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(reasoning_effort="high"))
        body = server.requests[0].body
    assert updates[:2] == [ThinkingUpdate("Let me "), ThinkingUpdate("look.")]
    signed = updates[2]
    assert isinstance(signed, ThinkingUpdate)
    assert signed.text == ""
    assert signed.provider == "openai"
    assert signed.signature is not None
    assert msgspec.json.decode(signed.signature) == [
        {"id": "rs_scripted_0_0", "encrypted_content": "enc-1", "summary": ["Let me look."]}
    ]
    assert updates[3] == TextUpdate("Done.")
    assert body["reasoning"] == {"summary": "auto", "effort": "high"}
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_a_non_reasoning_model_is_sent_an_effort_only_when_asked() -> None:
    async with serving(Round(parts=[ScriptText(chunks=["x"])]), reasoning=False) as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort="extra_high"))
        body = server.requests[0].body
    assert body["reasoning"] == {"effort": "max"}
    assert "include" not in body


async def test_thinking_signatures_go_back_and_other_providers_thinking_does_not() -> None:
    first = Round(
        parts=[
            ScriptThinking(chunks=["Plan."], signature="enc-1"),
            ScriptToolCall(id="call_1", name="read_file", arguments=['{"path": "a.txt"}']),
        ]
    )
    async with serving(first, Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        signature = next(u.signature for u in updates if isinstance(u, ThinkingUpdate) and u.signature)
        history = [
            user("read a"),
            hm.Message(
                "assistant",
                [
                    hm.ThinkingPart("Plan.", signature, "openai"),
                    hm.ToolCallPart("call_1", "read_file", '{"path": "a.txt"}', {"path": "a.txt"}),
                ],
            ),
            hm.Message("tool", [hm.ToolResultPart("call_1", "read_file", "contents of a")]),
            hm.Message(
                "assistant",
                [hm.ThinkingPart("Elsewhere.", "anthropic-sig", "anthropic"), hm.TextPart("Hi.")],
            ),
            hm.Message("assistant", [hm.ThinkingPart("Unanswered.", signature, "openai")]),
            user("and?"),
        ]
        await collect(client, history, ChatOptions(tools=[READ]))
        sent = server.requests[1].body["input"]
    assert sent == [
        {"role": "user", "content": "read a"},
        {
            "type": "reasoning",
            "id": "rs_scripted_0_0",
            "encrypted_content": "enc-1",
            "summary": [{"type": "summary_text", "text": "Plan."}],
        },
        {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": '{"path": "a.txt"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "contents of a"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "and?"},
    ]


async def test_one_tool_call_with_arguments_streamed_in_pieces() -> None:
    call = ScriptToolCall(id="call_1", name="read_file", arguments=['{"pa', 'th": "a', '.txt"}'])
    async with serving(Round(parts=[call])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        body = server.requests[0].body
    pieces = [u.arguments for u in updates if isinstance(u, ToolCallUpdate) and u.arguments]
    assert pieces == ['{"pa', 'th": "a', '.txt"}']
    assert assembled(updates) == {0: ("call_1", "read_file", '{"path": "a.txt"}')}
    assert updates[-1] == FinishUpdate("tool_calls", client.model)
    assert body["tools"] == [
        {
            "type": "function",
            "name": "read_file",
            "description": "Read a file.",
            "parameters": READ.parameters,
            "strict": False,
        }
    ]


async def test_whitespace_before_a_tool_call_is_not_sent_as_text() -> None:
    round_ = Round(
        parts=[ScriptText(chunks=["\n\n"]), ScriptToolCall(id="call_1", name="read_file", arguments=["{}"])]
    )
    async with serving(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert not [u for u in updates if isinstance(u, TextUpdate)]
    assert assembled(updates) == {0: ("call_1", "read_file", "{}")}


@pytest.mark.parametrize(
    ("scripted", "expected"), [("length", "length"), ("content_filter", "content_filter")]
)
async def test_an_incomplete_response_finishes_with_its_reason(scripted: Any, expected: str) -> None:
    async with serving(Round(parts=[ScriptText(chunks=["x"])], finish_reason=scripted)) as (_, client):
        updates = await collect(client)
    assert updates[-1] == FinishUpdate(expected, client.model)  # type: ignore[arg-type]


# Events the scripted server does not send, through the SDK over a mock transport.


def mocked(*events: dict[str, Any]) -> OpenAIResponsesChatClient:
    body = b"".join(
        b"event: " + e["type"].encode() + b"\ndata: " + msgspec.json.encode(e) + b"\n\n" for e in events
    )

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    def build(timeout: httpx2.Timeout, max_retries: int) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            api_key="k",
            base_url="http://responses.test/v1",
            max_retries=max_retries,
            timeout=timeout,
            http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)),
        )

    return OpenAIResponsesChatClient(model="m", max_retries=0, sdk_factory=build)


COMPLETED = {"type": "response.completed", "response": {"status": "completed", "usage": None}}


async def test_a_failed_response_is_classified() -> None:
    failed = {
        "type": "response.failed",
        "response": {"status": "failed", "error": {"code": "rate_limit_exceeded", "message": "Slow down."}},
    }
    async with mocked({"type": "response.output_text.delta", "delta": "a"}, failed) as client:
        seen, error = await failing(client)
    assert seen == [TextUpdate("a")]
    assert error.code == "rate_limit"


async def test_an_error_event_is_classified() -> None:
    event = {"type": "error", "code": "context_length_exceeded", "message": "Too long."}
    async with mocked(event) as client:
        _, error = await failing(client)
    assert error.code == "context_limit"


async def test_a_stream_that_ends_without_completing_fails() -> None:
    async with mocked({"type": "response.output_text.delta", "delta": "a"}) as client:
        seen, error = await failing(client)
    assert seen == [TextUpdate("a")]
    assert error.code == "network"


async def test_arguments_that_arrive_whole_and_unknown_events_are_handled() -> None:
    added = {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"type": "function_call", "call_id": "c1", "name": "f", "arguments": ""},
    }
    unknown = {"type": "response.future_thing.delta", "delta": {"shape": "not a string"}}
    done = {"type": "response.function_call_arguments.done", "output_index": 0, "arguments": '{"x": 1}'}
    async with mocked(added, unknown, done, COMPLETED) as client:
        updates = await collect(client)
    assert assembled(updates) == {0: ("c1", "f", '{"x": 1}')}
    assert updates[-1] == FinishUpdate("tool_calls")


async def test_summary_parts_are_separated() -> None:
    events = [
        {"type": "response.reasoning_summary_part.added", "summary_index": 0},
        {"type": "response.reasoning_summary_text.delta", "delta": "One."},
        {"type": "response.reasoning_summary_part.added", "summary_index": 1},
        {"type": "response.reasoning_summary_text.delta", "delta": "Two."},
        COMPLETED,
    ]
    async with mocked(*events) as client:
        updates = await collect(client)
    assert "".join(u.text for u in updates if isinstance(u, ThinkingUpdate)) == "One.\n\nTwo."


def test_capabilities_follow_the_model() -> None:
    assert OpenAIResponsesChatClient(model="o4-mini", api_key="k").capabilities.thinking is True
    assert OpenAIResponsesChatClient(model="gpt-5-mini", api_key="k").capabilities.thinking is True
    assert OpenAIResponsesChatClient(model="gpt-5-chat-latest", api_key="k").capabilities.thinking is False
    plain = OpenAIResponsesChatClient(model="gpt-4.1", api_key="k")
    assert plain.capabilities.thinking is False
    assert plain.capabilities.tools
    assert plain.capabilities.streamed_tool_calls
    assert plain.capabilities.context_window == 1_047_576


async def test_from_settings_builds_the_openai_provider() -> None:
    async with ScriptedModelServer([Round(parts=[ScriptText(chunks=["hi"])])]) as server:
        settings = ProviderSettings(
            provider="openai",
            model="gpt-test",
            api_key="sk-set",
            endpoint=server.url + "/v1",
            context_length=64_000,
            idle_timeout=5.0,
        )
        async with from_settings(settings) as client:
            assert client.capabilities.context_window == 64_000
            assert client.idle_timeout == 5.0
            updates = await collect(client)
        assert server.requests[0].path == "/v1/responses"
        assert server.requests[0].headers["authorization"] == "Bearer sk-set"
    assert updates[0] == TextUpdate("hi")


def test_from_settings_defaults_to_the_sdk_endpoint_and_names_missing_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = from_settings(ProviderSettings(provider="openai", model="gpt-4o", api_key="sk"))
    assert str(client.sdk().base_url).startswith("https://api.openai.com/v1")
    with pytest.raises(ValueError, match=r"'api_key'.*OPENAI_API_KEY"):
        from_settings(ProviderSettings(provider="openai", model="gpt-4o"))
    with pytest.raises(ValueError, match=r"'model'.*OPENAI_MODEL"):
        from_settings(ProviderSettings(provider="openai", api_key="sk"))
