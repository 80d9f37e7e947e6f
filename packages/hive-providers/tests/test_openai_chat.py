"""OpenAIChatClient through the real ``openai`` SDK against the scripted model server (Chat Completions)."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import httpx2
import pytest
from providers_harness import READ
from providers_harness import assembled
from providers_harness import chat_tool_call
from providers_harness import collect
from providers_harness import failing
from providers_harness import openai_chat
from providers_harness import scripted

import hive_core.messages as hm
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core import UsageUpdate
from hive_core.messages import user
from hive_providers.openai_chat import OpenAIChatClient

pytestmark = pytest.mark.anyio


def serving(
    *rounds: Round, **options: Any
) -> AbstractAsyncContextManager[tuple[ScriptedModelServer, OpenAIChatClient]]:
    return scripted(openai_chat, *rounds, **options)


async def test_a_text_request_streams_and_asks_for_the_usage() -> None:
    async with serving(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client)
        server.assert_consumed()
        body = server.requests[0].body
    assert server.requests[0].path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert "tools" not in body
    assert "tool_choice" not in body


async def test_reasoning_content_becomes_thinking_before_the_text() -> None:
    round_ = Round(parts=[ScriptThinking(chunks=["Let me ", "think."]), ScriptText(chunks=["Done."])])
    async with serving(round_) as (_, client):
        updates = await collect(client)
    assert updates[:3] == [ThinkingUpdate("Let me "), ThinkingUpdate("think."), TextUpdate("Done.")]
    assert updates[-1] == FinishUpdate("stop", client.model)


async def test_one_tool_call_with_arguments_streamed_in_pieces() -> None:
    call = ScriptToolCall(id="call_1", name="read_file", arguments=['{"pa', 'th": "a', '.txt"}'])
    async with serving(Round(parts=[call])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        body = server.requests[0].body
    pieces = [u for u in updates if isinstance(u, ToolCallUpdate)]
    assert [p.arguments for p in pieces if p.arguments] == ['{"pa', 'th": "a', '.txt"}']
    assert assembled(updates) == {0: ("call_1", "read_file", '{"path": "a.txt"}')}
    assert updates[-1] == FinishUpdate("tool_calls", client.model)
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read_file", "description": "Read a file.", "parameters": READ.parameters},
        }
    ]
    assert body["tool_choice"] == "auto"


async def test_whitespace_before_a_tool_call_is_not_sent_as_text() -> None:
    round_ = Round(
        parts=[
            ScriptText(chunks=["\n", "\n\n"]),
            ScriptToolCall(id="call_1", name="read_file", arguments=['{"path": "a.txt"}']),
        ]
    )
    async with serving(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert not [u for u in updates if isinstance(u, TextUpdate)]
    assert assembled(updates) == {0: ("call_1", "read_file", '{"path": "a.txt"}')}


async def test_whitespace_between_words_is_kept() -> None:
    round_ = Round(parts=[ScriptText(chunks=["Hello", " ", "\n", "world", "\n"])])
    async with serving(round_) as (_, client):
        updates = await collect(client)
    texts = [u.text for u in updates if isinstance(u, TextUpdate)]
    assert "".join(texts) == "Hello \nworld\n"
    assert texts[0] == "Hello"


@pytest.mark.parametrize(("effort", "sent"), [("none", "none"), ("low", "low"), ("high", "high")])
async def test_reasoning_efforts_are_spelled_for_the_api(effort: str, sent: str) -> None:
    async with serving(Round(parts=[ScriptText(chunks=["x"])])) as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort=effort))
        assert server.requests[0].body["reasoning_effort"] == sent


async def test_history_sends_tool_calls_and_results_but_not_thinking() -> None:
    history = [
        user("read a"),
        hm.Message(
            "assistant",
            [
                hm.ThinkingPart("I should read it.", "sig", "anthropic"),
                hm.TextPart("\n\n"),
                hm.ToolCallPart("call_1", "read_file", '{"path": "a.txt"}', {"path": "a.txt"}),
                hm.ToolCallPart("call_2", "read_file", "", {}),
            ],
        ),
        hm.Message(
            "tool",
            [
                hm.ToolResultPart("call_1", "read_file", "contents of a"),
                hm.ToolResultPart("call_2", "read_file", "missing path", is_error=True),
            ],
        ),
        hm.Message("assistant", [hm.ThinkingPart("only thinking")]),
        hm.Message("assistant", [hm.TextPart("It says: contents of a")]),
        user("thanks"),
    ]
    async with serving(Round(parts=[ScriptText(chunks=["x"])])) as (server, client):
        await collect(client, history, ChatOptions(tools=[READ]))
        sent = server.requests[0].body["messages"]
    assert sent == [
        {"role": "user", "content": "read a"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [chat_tool_call("call_1", '{"path": "a.txt"}'), chat_tool_call("call_2", "{}")],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "contents of a"},
        {"role": "tool", "tool_call_id": "call_2", "content": "missing path"},
        {"role": "assistant", "content": "It says: contents of a"},
        {"role": "user", "content": "thanks"},
    ]


async def test_a_server_that_never_answers_fails_with_timeout() -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepted by the kernel, never answered
        port = silent.getsockname()[1]
        client = OpenAIChatClient(
            model="m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, idle_timeout=0.3
        )
        async with client:
            _, error = await failing(client)
    assert error.code == "timeout"


async def test_missing_credentials_fail_as_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    client = OpenAIChatClient(model="m", base_url="http://127.0.0.1:9/v1")
    _, error = await failing(client)
    assert error.code == "auth"


async def test_list_models_maps_failures() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with OpenAIChatClient(
        model="m", api_key="k", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0
    ) as c:
        with anyio.fail_after(10), pytest.raises(ChatError) as caught:
            await c.list_models()
    assert caught.value.code == "network"


def test_capabilities_and_context_window() -> None:
    openai = OpenAIChatClient(model="gpt-4o-mini", api_key="k")
    assert openai.capabilities.tools
    assert openai.capabilities.streamed_tool_calls
    assert openai.capabilities.thinking is False
    assert openai.capabilities.context_window == 128_000
    local = OpenAIChatClient(model="qwen3", api_key="k", provider="ollama", context_window=32_768)
    assert local.capabilities.thinking is True
    assert local.capabilities.context_window == 32_768
    assert OpenAIChatClient(model="unknown-model", api_key="k").capabilities.context_window is None


def test_constructor_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="model"):
        OpenAIChatClient(model="")
    with pytest.raises(ValueError, match="idle_timeout"):
        OpenAIChatClient(model="m", idle_timeout=0)


def test_the_sdk_is_imported_on_first_use_only() -> None:
    code = (
        "import sys\n"
        "import hive_providers, hive_providers.openai_chat, hive_providers.openai_responses\n"
        "import hive_providers.compatible as c\n"
        "from hive_providers import ProviderSettings\n"
        "hive_providers.openai_chat.OpenAIChatClient(model='m', api_key='k')\n"
        "hive_providers.openai_responses.OpenAIResponsesChatClient(model='m', api_key='k')\n"
        "c.from_settings(ProviderSettings(provider='azure', endpoint='https://x', api_key='k', model='d'))\n"
        "assert 'openai' not in sys.modules, 'openai was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


# Behaviours of compatible servers the scripted server does not produce, through the SDK over a mock transport.


def mocked(
    body: bytes | Sequence[bytes], *, status: int = 200
) -> tuple[OpenAIChatClient, list[httpx2.Request]]:
    requests: list[httpx2.Request] = []
    chunks = [body] if isinstance(body, bytes) else list(body)

    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        return httpx2.Response(status, headers={"content-type": "text/event-stream"}, content=stream())

    def build(timeout: httpx2.Timeout, max_retries: int) -> Any:
        from openai import AsyncOpenAI

        transport = httpx2.MockTransport(handler)
        return AsyncOpenAI(
            api_key="k",
            base_url="http://compat.test/v1",
            max_retries=max_retries,
            timeout=timeout,
            http_client=httpx2.AsyncClient(transport=transport),
        )

    return OpenAIChatClient(model="m", provider="compat", max_retries=0, sdk_factory=build), requests


def sse(*payloads: str, newline: str = "\n") -> bytes:
    return "".join(f"data: {p}{newline}{newline}" for p in payloads).encode()


def delta(fields: str, finish: str | None = None) -> str:
    reason = f'"{finish}"' if finish else "null"
    return f'{{"choices":[{{"index":0,"delta":{fields},"finish_reason":{reason}}}]}}'


async def run_mocked(client: OpenAIChatClient) -> list[ChatUpdate]:
    async with client:
        return await collect(client)


async def test_reasoning_spelled_reasoning_is_thinking_too() -> None:
    client, _ = mocked(sse(delta('{"reasoning":"hmm"}'), delta('{"content":"hi"}', "stop"), "[DONE]"))
    updates = await run_mocked(client)
    assert updates == [ThinkingUpdate("hmm"), TextUpdate("hi"), FinishUpdate("stop")]


async def test_calls_without_index_or_sharing_one_are_told_apart_by_id() -> None:
    first = '{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\\"x\\":1}"}}]}'
    second = '{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}'
    third = '{"tool_calls":[{"id":"c","function":{"name":"h","arguments":"{"}}]}'
    rest = '{"tool_calls":[{"function":{"arguments":"}"}}]}'
    client, _ = mocked(sse(delta(first), delta(second), delta(third), delta(rest, "stop"), "[DONE]"))
    updates = await run_mocked(client)
    assert assembled(updates) == {0: ("a", "f", '{"x":1}'), 1: ("b", "g", "{}"), 2: ("c", "h", "{}")}
    assert updates[-1] == FinishUpdate("tool_calls")


async def test_crlf_framing_split_across_reads_is_read() -> None:
    body = sse(delta('{"content":"a"}'), delta('{"content":"b"}', "stop"), "[DONE]", newline="\r\n")
    pieces = [body[i : i + 7] for i in range(0, len(body), 7)]
    client, _ = mocked(pieces)
    updates = await run_mocked(client)
    assert updates == [TextUpdate("a"), TextUpdate("b"), FinishUpdate("stop")]


async def test_a_stream_that_ends_cleanly_without_finishing_fails() -> None:
    client, _ = mocked(sse(delta('{"content":"partial"}')))
    async with client:
        seen, error = await failing(client)
    assert seen == [TextUpdate("partial")]
    assert error.code == "network"


async def test_done_without_a_finish_reason_is_a_normal_end() -> None:
    client, _ = mocked(sse(delta('{"content":"a"}'), "[DONE]"))
    assert await run_mocked(client) == [TextUpdate("a"), FinishUpdate("stop")]


async def test_an_error_inside_the_stream_is_classified() -> None:
    error_event = '{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}'
    client, _ = mocked(sse(delta('{"content":"a"}'), error_event))
    async with client:
        seen, error = await failing(client)
    assert seen == [TextUpdate("a")]
    assert error.code == "rate_limit"


async def test_usage_sent_with_every_chunk_is_counted_once() -> None:
    usage = '"usage":{"prompt_tokens":5,"completion_tokens":%d}'
    first = '{"choices":[{"delta":{"content":"a"}}],' + usage % 1 + "}"
    second = '{"choices":[{"delta":{},"finish_reason":"stop"}],' + usage % 2 + "}"
    client, _ = mocked(sse(first, second, "[DONE]"))
    updates = await run_mocked(client)
    assert [u for u in updates if isinstance(u, UsageUpdate)] == [UsageUpdate(5, 2, 0)]


async def test_a_cancelled_stream_closes_its_response() -> None:
    # The first response sends "a" and then nothing until the client goes away: the cancel comes on an event
    # (the first update), not after a time a loaded machine may not keep.
    round_ = Round(parts=[ScriptText(chunks=["a", "b", "c"])], stall_after_chunks=1)
    async with serving(round_, Round(parts=[ScriptText(chunks=["next"])])) as (server, client):
        seen: list[ChatUpdate] = []
        with anyio.CancelScope() as scope:
            async for update in client.stream([user("hi")], ChatOptions()):
                seen.append(update)
                scope.cancel()
        # The connection of the cancelled stream is not reused: the next request still works.
        after = await collect(client)
        assert (after[0], after[-1]) == (TextUpdate("next"), FinishUpdate("stop", client.model))
        assert len(server.requests) == 2
    assert seen == [TextUpdate("a")]
