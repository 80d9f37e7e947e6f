"""The Anthropic adapter through the real ``anthropic`` SDK against the scripted model server."""

from __future__ import annotations

import importlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import (
    ContextLengthFailure,
    DropConnectionFailure,
    Failure,
    HttpFailure,
    MalformedStreamFailure,
    Round,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    Usage,
)
from hive_core import (
    Agent,
    ChatError,
    ChatOptions,
    ChatUpdate,
    FinishUpdate,
    Message,
    TextUpdate,
    ThinkingUpdate,
    ToolCallUpdate,
    ToolSpec,
    UsageUpdate,
    collect_turn,
    tool,
)
from hive_core import TextPart as Text
from hive_core import ThinkingPart as Thinking
from hive_core import ToolCallPart as Call
from hive_core import ToolResultPart as Result
from hive_core.chat import RequiredTool, ToolChoice
from hive_core.messages import system, user
from hive_protocol import (
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
    TurnEndEvent,
    verify,
)
from hive_providers import Capabilities, ProviderSettings
from hive_providers.anthropic import AnthropicClient, from_settings

pytestmark = pytest.mark.anyio

WAIT = 10.0
"""Seconds any single wait of a test may take before it fails (a bound, never a synchronisation)."""

READ = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
CACHE = {"type": "ephemeral"}


@pytest.fixture(scope="module", autouse=True)
def sdk_imported() -> None:
    """Import the SDK before any bounded wait: its first import takes seconds on a slow machine."""
    importlib.import_module("anthropic")


@asynccontextmanager
async def serve(
    *rounds: Round, **options: Any
) -> AsyncGenerator[tuple[ScriptedModelServer, AnthropicClient]]:
    async with ScriptedModelServer(rounds) as server:
        options.setdefault("model", "claude-test")
        client = AnthropicClient(api_key="test", base_url=server.url, **options)
        try:
            yield server, client
        finally:
            await client.aclose()


async def collect(
    client: AnthropicClient, messages: Sequence[Message] = (), options: ChatOptions | None = None
) -> list[ChatUpdate]:
    with anyio.fail_after(WAIT):
        return [u async for u in client.stream(messages or [user("hi")], options or ChatOptions())]


async def failing(
    client: AnthropicClient, options: ChatOptions | None = None
) -> tuple[list[ChatUpdate], ChatError]:
    updates: list[ChatUpdate] = []

    async def run() -> None:
        async for update in client.stream([user("hi")], options or ChatOptions()):
            updates.append(update)

    with anyio.fail_after(WAIT), pytest.raises(ChatError) as caught:
        await run()
    return updates, caught.value


def arguments_by_index(updates: Sequence[ChatUpdate]) -> dict[int, tuple[str | None, str | None, str]]:
    calls: dict[int, tuple[str | None, str | None, str]] = {}
    for update in updates:
        if isinstance(update, ToolCallUpdate):
            call_id, name, text = calls.get(update.index, (None, None, ""))
            calls[update.index] = (update.id or call_id, update.name or name, text + update.arguments)
    return calls


# -- streaming ----------------------------------------------------------------------------------------------


async def test_a_text_stream_carries_text_usage_and_the_finish() -> None:
    round_ = Round(parts=[TextPart(chunks=["Hel", "lo"])], usage=Usage(input_tokens=12, output_tokens=3))
    async with serve(round_) as (server, client):
        updates = await collect(
            client, [system("Be brief."), user("hi")], ChatOptions(instructions="Answer in English.")
        )
        [request] = server.requests
    assert updates == [
        TextUpdate("Hel"),
        TextUpdate("lo"),
        UsageUpdate(input_tokens=12, output_tokens=3),
        FinishUpdate("stop"),
    ]
    assert request.path == "/v1/messages"
    assert request.headers["authorization"] == "Bearer test"
    assert "anthropic-version" in request.headers
    assert request.body == {
        "model": "claude-test",
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": CACHE}]}],
        "stream": True,
        "system": [{"type": "text", "text": "Answer in English.\n\nBe brief.", "cache_control": CACHE}],
    }


async def test_options_set_the_model_temperature_and_output_cap() -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), prompt_caching=False) as (server, client):
        await collect(
            client, options=ChatOptions(model="claude-other", temperature=0.25, max_output_tokens=100)
        )
        [request] = server.requests
    assert request.body["model"] == "claude-other"
    assert request.body["temperature"] == 0.25
    assert request.body["max_tokens"] == 100
    assert request.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_models_that_refuse_sampling_get_no_temperature() -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), model="claude-opus-4-7") as (server, client):
        await collect(client, options=ChatOptions(temperature=0.25))
        [request] = server.requests
    assert "temperature" not in request.body


async def test_thinking_streams_its_text_then_its_signature() -> None:
    round_ = Round(
        parts=[ThinkingPart(chunks=["Let me ", "look."], signature="sig-1"), TextPart(chunks=["Done."])]
    )
    async with serve(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(reasoning_effort="high", temperature=0.5))
        [request] = server.requests
    assert updates[:4] == [
        ThinkingUpdate("Let me "),
        ThinkingUpdate("look."),
        ThinkingUpdate("", signature="sig-1", provider="anthropic"),
        TextUpdate("Done."),
    ]
    assert request.body["thinking"] == {"type": "enabled", "budget_tokens": 12288}
    assert request.body["max_tokens"] == 4096 + 12288
    assert "temperature" not in request.body  # the API takes only its default temperature with thinking


@pytest.mark.parametrize(
    ("effort", "thinking", "output_config"),
    [
        ("extra_high", {"type": "adaptive"}, {"effort": "max"}),
        ("low", {"type": "adaptive"}, {"effort": "low"}),
        ("none", {"type": "disabled"}, None),
    ],
)
async def test_newer_models_get_adaptive_thinking_with_an_effort(
    effort: str, thinking: dict[str, Any], output_config: dict[str, Any] | None
) -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), model="claude-opus-4-6") as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort=effort))
        [request] = server.requests
    assert request.body["thinking"] == thinking
    assert request.body.get("output_config") == output_config


async def test_a_forced_tool_choice_turns_thinking_off() -> None:
    round_ = Round(parts=[ToolCallPart(id="toolu_1", name="read_file", arguments=['{"path": "a"}'])])
    async with serve(round_) as (server, client):
        await collect(
            client, options=ChatOptions(tools=[READ], tool_choice="required", reasoning_effort="high")
        )
        [request] = server.requests
    assert "thinking" not in request.body
    assert request.body["tool_choice"] == {"type": "any"}
    assert request.body["max_tokens"] == 4096


async def test_several_thinking_blocks_keep_each_signature_and_go_back_whole() -> None:
    round_ = Round(
        parts=[
            ThinkingPart(chunks=["First."], signature="sig-a"),
            TextPart(chunks=["Hm."]),
            ThinkingPart(chunks=["Second."], signature="sig-b"),
            TextPart(chunks=["Done."]),
        ]
    )
    async with serve(round_, Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        updates = await collect(client)
        signatures = [u.signature for u in updates if isinstance(u, ThinkingUpdate) and u.signature]
        assert signatures[0] == "sig-a"
        blocks = [
            {"type": "thinking", "thinking": "First.", "signature": "sig-a"},
            {"type": "thinking", "thinking": "Second.", "signature": "sig-b"},
        ]
        assert json.loads(signatures[-1]) == blocks
        history = [
            user("hi"),
            Message("assistant", [Thinking("First.Second.", signatures[-1], "anthropic"), Text("Hm.Done.")]),
            user("go on"),
        ]
        await collect(client, history)
        sent = server.requests[1].body["messages"][1]
    assert sent == {"role": "assistant", "content": [*blocks, {"type": "text", "text": "Hm.Done."}]}


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}


@asynccontextmanager
async def canned(data: bytes) -> AsyncGenerator[AnthropicClient]:
    """A client whose every request is answered with ``data`` as an event stream (for what the scripted
    server cannot send: redacted thinking and error events)."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        yield AnthropicClient(
            model="claude-test", api_key="test", base_url="http://anthropic.test", http_client=http
        )


async def test_redacted_thinking_stays_opaque() -> None:
    data = sse(
        START,
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "redacted_thinking", "data": "XYZ"},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    async with canned(data) as client:
        updates = await collect(client)
    redacted = [{"type": "redacted_thinking", "data": "XYZ"}]
    assert updates == [
        ThinkingUpdate("", signature=json.dumps(redacted, separators=(",", ":")), provider="anthropic"),
        TextUpdate("Hi"),
        UsageUpdate(input_tokens=5, output_tokens=9),
        FinishUpdate("stop"),
    ]


@pytest.mark.parametrize(
    ("kind", "code"),
    [("overloaded_error", "internal"), ("rate_limit_error", "rate_limit"), ("api_error", "internal")],
)
async def test_an_error_event_inside_the_stream_fails_with_its_code(kind: str, code: str) -> None:
    text = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}}
    error = {"type": "error", "error": {"type": kind, "message": "Overloaded"}}
    async with canned(sse(START, text, error)) as client:
        updates, caught = await failing(client)
    assert updates == [TextUpdate("Hi")]
    assert caught.code == code
    assert kind in str(caught)


# -- tools --------------------------------------------------------------------------------------------------


async def test_one_tool_call_streams_its_arguments() -> None:
    round_ = Round(parts=[ToolCallPart(id="toolu_1", name="read_file", arguments=['{"path":', ' "a.txt"}'])])
    async with serve(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        [request] = server.requests
    assert updates[:3] == [
        ToolCallUpdate(0, id="toolu_1", name="read_file"),
        ToolCallUpdate(0, arguments='{"path":'),
        ToolCallUpdate(0, arguments=' "a.txt"}'),
    ]
    assert updates[-1] == FinishUpdate("tool_calls")
    assert request.body["tools"] == [
        {
            "name": "read_file",
            "description": "Read a file.",
            "input_schema": READ.parameters,
            "cache_control": CACHE,
        }
    ]
    assert request.body["tool_choice"] == {"type": "auto"}


async def test_parallel_tool_calls_are_told_apart_by_block_index() -> None:
    round_ = Round(
        parts=[
            TextPart(chunks=["Reading ", "both."]),
            ToolCallPart(id="toolu_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
            ToolCallPart(id="toolu_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
        ]
    )
    async with serve(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert [u for u in updates if isinstance(u, TextUpdate)] == [TextUpdate("Reading "), TextUpdate("both.")]
    assert arguments_by_index(updates) == {
        1: ("toolu_a", "read_file", '{"path": "a.txt"}'),
        2: ("toolu_b", "read_file", '{"path": "b.txt"}'),
    }
    assert updates[-1] == FinishUpdate("tool_calls")


@pytest.mark.parametrize(
    ("choice", "wire"),
    [
        ("auto", {"type": "auto"}),
        ("none", {"type": "none"}),
        ("required", {"type": "any"}),
        (RequiredTool("read_file"), {"type": "tool", "name": "read_file"}),
    ],
)
async def test_tool_choice_maps(choice: ToolChoice, wire: dict[str, str]) -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(tools=[READ], tool_choice=choice))
        [request] = server.requests
    assert request.body["tool_choice"] == wire


async def test_whitespace_text_before_a_tool_call_streams_but_is_not_sent_back() -> None:
    round_ = Round(
        parts=[
            TextPart(chunks=["\n\n"]),
            ToolCallPart(id="toolu_1", name="read_file", arguments=['{"path": "a"}']),
        ]
    )
    async with serve(round_, Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        assert updates[0] == TextUpdate("\n\n")
        assert arguments_by_index(updates) == {1: ("toolu_1", "read_file", '{"path": "a"}')}
        history = [
            user("hi"),
            Message(
                "assistant", [Text("\n\n"), Call("toolu_1", "read_file", '{"path": "a"}', {"path": "a"})]
            ),
            Message("tool", [Result("toolu_1", "read_file", "A")]),
        ]
        await collect(client, history, ChatOptions(tools=[READ]))
        sent = server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}],
    }


async def test_history_goes_back_in_the_api_shape() -> None:
    history = [
        system("Be brief."),
        user("hi"),
        Message(
            "assistant",
            [
                Thinking("Let me look.", "sig-1", "anthropic"),
                Text("Reading."),
                Call("toolu_a", "read_file", '{"path": "a"}', {"path": "a"}),
                Call("toolu_b", "read_file", '{"path": ', None, "not JSON"),
            ],
        ),
        Message(
            "tool",
            [Result("toolu_a", "read_file", "A"), Result("toolu_b", "read_file", "bad", is_error=True)],
        ),
        user("thanks"),
        Message("assistant", [Thinking("theirs", "sig-openai", "openai"), Thinking("unsigned"), Text("ok")]),
        user("more"),
    ]
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        await collect(client, history, ChatOptions(tools=[READ]))
        [request] = server.requests
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig-1"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"},
                {"type": "tool_result", "tool_use_id": "toolu_b", "content": "bad", "is_error": True},
                {"type": "text", "text": "thanks"},
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
        {"role": "user", "content": [{"type": "text", "text": "more", "cache_control": CACHE}]},
    ]


async def test_tools_used_earlier_are_declared_when_none_are_offered() -> None:
    history = [
        user("hi"),
        Message("assistant", [Call("toolu_a", "read_file", "{}", {})]),
        Message("tool", [Result("toolu_a", "read_file", "A")]),
    ]
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), prompt_caching=False) as (server, client):
        await collect(client, history, ChatOptions(tool_choice="none"))
        [request] = server.requests
    assert request.body["tools"] == [
        {"name": "read_file", "description": "Not available now.", "input_schema": {"type": "object"}}
    ]
    assert request.body["tool_choice"] == {"type": "none"}


async def test_call_ids_from_elsewhere_are_made_acceptable() -> None:
    history = [
        user("hi"),
        Message("assistant", [Call("fc:1/a", "read_file", "{}", {})]),
        Message("tool", [Result("fc:1/a", "read_file", "A")]),
    ]
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), prompt_caching=False) as (server, client):
        await collect(client, history, ChatOptions(tools=[READ]))
        [request] = server.requests
    assert request.body["messages"][1]["content"][0]["id"] == "fc_1_a"
    assert request.body["messages"][2]["content"][0]["tool_use_id"] == "fc_1_a"


# -- usage and finish reasons ---------------------------------------------------------------------------------


async def test_usage_counts_cached_input_as_part_of_the_input() -> None:
    round_ = Round(
        parts=[TextPart(chunks=["x"])],
        usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
    )
    async with serve(round_) as (_, client):
        updates = await collect(client)
    assert UsageUpdate(input_tokens=120, output_tokens=30, cached_input_tokens=100) in updates


@pytest.mark.parametrize("reason", ["stop", "length", "tool_calls", "content_filter"])
async def test_stop_reasons_map(reason: Any) -> None:
    async with serve(Round(parts=[TextPart(chunks=["x"])], finish_reason=reason)) as (_, client):
        updates = await collect(client)
    assert updates[-1] == FinishUpdate(reason)


# -- failures -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (HttpFailure(status=401), "auth"),
        (HttpFailure(status=403), "auth"),
        (HttpFailure(status=402), "billing"),
        (
            HttpFailure(status=400, message="Your credit balance is too low to access the Anthropic API."),
            "billing",
        ),
        (HttpFailure(status=400), "request_rejected"),
        (HttpFailure(status=404), "request_rejected"),
        (HttpFailure(status=429), "rate_limit"),
        (HttpFailure(status=500), "internal"),
        (HttpFailure(status=529), "internal"),
        (HttpFailure(status=504), "timeout"),
        (ContextLengthFailure(), "context_limit"),
        (MalformedStreamFailure(after_chunks=1), "internal"),
        (DropConnectionFailure(after_chunks=1), "network"),
    ],
)
async def test_each_failure_maps_to_its_error_code(failure: Failure, code: str) -> None:
    round_ = Round(parts=[TextPart(chunks=["a", "b"])], failure=failure)
    async with serve(round_, max_retries=0) as (server, client):
        _, caught = await failing(client)
        assert len(server.requests) == 1
    assert caught.code == code
    assert str(caught).startswith("anthropic")


async def test_a_429_keeps_the_wait_it_asks_for() -> None:
    async with serve(Round(failure=HttpFailure(status=429, retry_after=7)), max_retries=0) as (_, client):
        _, caught = await failing(client)
    assert (caught.code, caught.retry_after) == ("rate_limit", 7.0)


async def test_a_429_is_retried_after_the_wait_it_asks_for() -> None:
    rounds = (Round(failure=HttpFailure(status=429, retry_after=1)), Round(parts=[TextPart(chunks=["ok"])]))
    async with serve(*rounds, max_retries=1) as (server, client):
        started = time.monotonic()
        updates = await collect(client)
        waited = time.monotonic() - started
        requests = server.requests
    assert updates[0] == TextUpdate("ok")
    assert [r.round for r in requests] == [0, 1]
    assert requests[1].headers["x-stainless-retry-count"] == "1"
    assert waited >= 1.0  # the SDK's own first backoff is at most 0.5 s


async def test_a_connection_cut_mid_stream_fails_after_what_arrived() -> None:
    round_ = Round(parts=[TextPart(chunks=["Hel", "lo"])], failure=DropConnectionFailure(after_chunks=1))
    async with serve(round_) as (_, client):
        updates, caught = await failing(client)
    assert updates == [TextUpdate("Hel")]
    assert caught.code == "network"


async def test_a_stream_that_goes_quiet_times_out() -> None:
    round_ = Round(parts=[TextPart(chunks=["a"])], chunk_delay=60)
    async with serve(round_, idle_timeout=0.3, max_retries=0) as (_, client):
        updates, caught = await failing(client)
    assert updates == []
    assert caught.code == "timeout"


async def test_a_refused_connection_is_a_network_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = AnthropicClient(
        model="claude-test", api_key="test", base_url=f"http://127.0.0.1:{port}", max_retries=0
    )
    try:
        _, caught = await failing(client)
    finally:
        await client.aclose()
    assert caught.code == "network"


# -- one hive-core turn ---------------------------------------------------------------------------------------


@tool(read_only=True)
def read_note(name: str) -> str:
    """Read a note.

    Args:
        name: The note's name.
    """
    return f"contents of {name}"


async def test_a_hive_turn_runs_a_tool_round_then_a_text_round() -> None:
    rounds = (
        Round(
            parts=[
                ThinkingPart(chunks=["Need the note."], signature="sig-turn"),
                ToolCallPart(id="toolu_1", name="read_note", arguments=['{"name": ', '"todo"}']),
            ],
            usage=Usage(input_tokens=50, output_tokens=10),
        ),
        Round(
            parts=[TextPart(chunks=["The note says ", "hi."])], usage=Usage(input_tokens=80, output_tokens=5)
        ),
    )
    async with serve(*rounds) as (server, client):
        agent = Agent(client, tools=[read_note])
        with anyio.fail_after(WAIT):
            events = await collect_turn(agent.session(), "read my todo note")
        server.assert_consumed()
        first, second = server.requests
    assert verify(events) == []
    assert [e.content for e in events if isinstance(e, ThinkingDeltaEvent)] == ["Need the note."]
    [start] = [e for e in events if isinstance(e, ToolStartEvent)]
    assert (start.tool, start.call_id, start.input) == ("read_note", "toolu_1", {"name": "todo"})
    [end] = [e for e in events if isinstance(e, ToolEndEvent)]
    assert (end.success, end.output) == (True, "contents of todo")
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "The note says hi."
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert (turn_end.stop_reason, turn_end.input_tokens, turn_end.output_tokens) == ("completed", 130, 15)
    assert [t["name"] for t in first.body["tools"]] == ["read_note"]
    assert second.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read my todo note"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Need the note.", "signature": "sig-turn"},
                {"type": "tool_use", "id": "toolu_1", "name": "read_note", "input": {"name": "todo"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "contents of todo",
                    "cache_control": CACHE,
                }
            ],
        },
    ]


# -- models, settings, capabilities ---------------------------------------------------------------------------


async def test_list_models_returns_the_ids() -> None:
    async with serve() as (server, client):
        with anyio.fail_after(WAIT):
            models = await client.list_models()
        [request] = server.requests
    assert models == ["scripted-model"]
    assert (request.method, request.path) == ("GET", "/v1/models")


def test_capabilities_and_context_window() -> None:
    client = AnthropicClient(model="claude-sonnet-4-5", api_key="k")
    assert client.capabilities == Capabilities(
        tools=True, streamed_tool_calls=True, thinking=True, context_window=200_000
    )
    assert AnthropicClient(model="claude-x", api_key="k", context_window=50_000).context_window == 50_000
    assert AnthropicClient(model="proxy-model", api_key="k").context_window is None


def test_from_settings_builds_a_client() -> None:
    settings = ProviderSettings(
        provider="anthropic",
        model="claude-x",
        api_key="k",
        endpoint="https://gateway.example.test/v1/",
        options={"context_length": "300000"},
        idle_timeout=30.0,
    )
    client = from_settings(settings)
    assert (client.model, client.api_key, client.base_url) == (
        "claude-x",
        "k",
        "https://gateway.example.test",
    )
    assert (client.context_window, client.idle_timeout) == (300_000, 30.0)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (ProviderSettings(provider="anthropic", model="claude-x"), "'api_key'"),
        (ProviderSettings(provider="anthropic", api_key="k"), "'model'"),
        (
            ProviderSettings(provider="anthropic", model="m", api_key="k", options={"context_length": "big"}),
            "context_length",
        ),
    ],
)
def test_from_settings_names_what_is_missing_or_wrong(settings: ProviderSettings, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        from_settings(settings)


def test_the_sdk_is_imported_only_when_a_client_talks_to_the_api() -> None:
    code = (
        "import sys\n"
        "from hive_providers.anthropic import AnthropicClient\n"
        "AnthropicClient(model='claude-x', api_key='k').capabilities\n"
        "print('anthropic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, check=True
    )
    assert result.stdout.strip() == "False"
