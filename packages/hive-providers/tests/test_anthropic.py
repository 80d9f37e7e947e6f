"""The Anthropic adapter through the real ``anthropic`` SDK against the scripted model server."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from providers_harness import READ
from providers_harness import WAIT
from providers_harness import after_text_and_call
from providers_harness import anthropic
from providers_harness import assembled
from providers_harness import collect
from providers_harness import failing
from providers_harness import note_turn
from providers_harness import scripted
from providers_harness import text_then_call
from providers_harness import thought_then_text
from providers_harness import thought_then_text_updates
from providers_harness import tool_round

import hive_core.messages as hm
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import Capabilities
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core import UsageUpdate
from hive_core.messages import system
from hive_core.messages import user
from hive_providers.anthropic import AnthropicChatClient

pytestmark = pytest.mark.anyio

CACHE = {"type": "ephemeral"}


@pytest.fixture(scope="module", autouse=True)
def sdk_imported() -> None:
    """Import the SDK before any bounded wait: its first import takes seconds on a slow machine."""
    importlib.import_module("anthropic")


def serve(
    *rounds: Round, **options: Any
) -> AbstractAsyncContextManager[tuple[ScriptedModelServer, AnthropicChatClient]]:
    return scripted(anthropic, *rounds, **options)


# -- streaming ----------------------------------------------------------------------------------------------


async def test_a_request_carries_the_conversation_and_the_instructions() -> None:
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(
            client, [system("Be brief."), user("hi")], ChatOptions(instructions="Answer in English.")
        )
        [request] = server.requests
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
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), prompt_caching=False) as (server, client):
        await collect(
            client, options=ChatOptions(model="claude-other", temperature=0.25, max_output_tokens=100)
        )
        [request] = server.requests
    assert request.body["model"] == "claude-other"
    assert request.body["temperature"] == 0.25
    assert request.body["max_tokens"] == 100
    assert request.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


async def test_models_that_refuse_sampling_get_no_temperature() -> None:
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), model="claude-opus-4-7") as (server, client):
        await collect(client, options=ChatOptions(temperature=0.25))
        [request] = server.requests
    assert "temperature" not in request.body


async def test_thinking_streams_its_text_then_its_signature() -> None:
    async with serve(thought_then_text("sig-1")) as (server, client):
        updates = await collect(client, options=ChatOptions(reasoning_effort="high", temperature=0.5))
        [request] = server.requests
    assert updates[:4] == thought_then_text_updates("sig-1", "anthropic")
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
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), model="claude-opus-4-6") as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort=effort))
        [request] = server.requests
    assert request.body["thinking"] == thinking
    assert request.body.get("output_config") == output_config


async def test_a_forced_tool_choice_turns_thinking_off() -> None:
    round_ = Round(parts=[ScriptToolCall(id="toolu_1", name="read_file", arguments=['{"path": "a"}'])])
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
            ScriptThinking(chunks=["First."], signature="sig-a"),
            ScriptText(chunks=["Hm."]),
            ScriptThinking(chunks=["Second."], signature="sig-b"),
            ScriptText(chunks=["Done."]),
        ]
    )
    async with serve(round_, Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
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
            hm.Message(
                "assistant",
                [hm.ThinkingPart("First.Second.", signatures[-1], "anthropic"), hm.TextPart("Hm.Done.")],
            ),
            user("go on"),
        ]
        await collect(client, history)
        sent = server.requests[1].body["messages"][1]
    assert sent == {"role": "assistant", "content": [*blocks, {"type": "text", "text": "Hm.Done."}]}


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


START = {"type": "message_start", "message": {"usage": {"input_tokens": 5, "output_tokens": 1}}}


@asynccontextmanager
async def canned(data: bytes) -> AsyncGenerator[AnthropicChatClient]:
    """A client whose every request is answered with ``data`` as an event stream (for what the scripted
    server cannot send: redacted thinking and error events)."""

    def answer(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(answer)) as http:
        yield AnthropicChatClient(
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
    round_ = Round(
        parts=[ScriptToolCall(id="toolu_1", name="read_file", arguments=['{"path":', ' "a.txt"}'])]
    )
    async with serve(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        [request] = server.requests
    assert updates[:3] == [
        ToolCallUpdate(0, id="toolu_1", name="read_file"),
        ToolCallUpdate(0, arguments='{"path":'),
        ToolCallUpdate(0, arguments=' "a.txt"}'),
    ]
    assert updates[-1] == FinishUpdate("tool_calls", client.model)
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
            ScriptText(chunks=["Reading ", "both."]),
            ScriptToolCall(id="toolu_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
            ScriptToolCall(id="toolu_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
        ]
    )
    async with serve(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert [u for u in updates if isinstance(u, TextUpdate)] == [TextUpdate("Reading "), TextUpdate("both.")]
    assert assembled(updates) == {
        1: ("toolu_a", "read_file", '{"path": "a.txt"}'),
        2: ("toolu_b", "read_file", '{"path": "b.txt"}'),
    }
    assert updates[-1] == FinishUpdate("tool_calls", client.model)


async def test_whitespace_text_before_a_tool_call_streams_but_is_not_sent_back() -> None:
    round_ = text_then_call("\n\n", "toolu_1")
    async with serve(round_, Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        assert updates[0] == TextUpdate("\n\n")
        assert assembled(updates) == {1: ("toolu_1", "read_file", '{"path": "a"}')}
        await collect(client, after_text_and_call("\n\n", "toolu_1"), ChatOptions(tools=[READ]))
        sent = server.requests[1].body["messages"]
    assert sent[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}],
    }


async def test_history_goes_back_in_the_api_shape() -> None:
    history = [
        system("Be brief."),
        user("hi"),
        *tool_round(hm.ThinkingPart("Let me look.", "sig-1", "anthropic"), "toolu_a", "toolu_b"),
        user("thanks"),
        hm.Message(
            "assistant",
            [
                hm.ThinkingPart("theirs", "sig-openai", "openai"),
                hm.ThinkingPart("unsigned"),
                hm.TextPart("ok"),
            ],
        ),
        user("more"),
    ]
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
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


async def _after_a_call(call_id: str, options: ChatOptions) -> dict[str, Any]:
    """The body of the request sent after ``read_file`` call ``call_id`` ran, with ``options``."""
    history = [
        user("hi"),
        hm.Message("assistant", [hm.ToolCallPart(call_id, "read_file", "{}", {})]),
        hm.Message("tool", [hm.ToolResultPart(call_id, "read_file", "A")]),
    ]
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), prompt_caching=False) as (server, client):
        await collect(client, history, options)
        [request] = server.requests
    return request.body


async def test_tools_used_earlier_are_declared_when_none_are_offered() -> None:
    body = await _after_a_call("toolu_a", ChatOptions(tool_choice="none"))
    assert body["tools"] == [
        {"name": "read_file", "description": "Not available now.", "input_schema": {"type": "object"}}
    ]
    assert body["tool_choice"] == {"type": "none"}


async def test_call_ids_from_elsewhere_are_made_acceptable() -> None:
    body = await _after_a_call("fc:1/a", ChatOptions(tools=[READ]))
    assert body["messages"][1]["content"][0]["id"] == "fc_1_a"
    assert body["messages"][2]["content"][0]["tool_use_id"] == "fc_1_a"


# -- usage and finish reasons ---------------------------------------------------------------------------------


# -- failures -------------------------------------------------------------------------------------------------


# -- one hive-core turn ---------------------------------------------------------------------------------------


async def test_a_hive_turn_runs_a_tool_round_then_a_text_round() -> None:
    first = Round(
        parts=[
            ScriptThinking(chunks=["Need the note."], signature="sig-turn"),
            ScriptToolCall(id="toolu_1", name="read_note", arguments=['{"name": ', '"todo"}']),
        ],
        usage=Usage(input_tokens=50, output_tokens=10),
    )
    start, first, second = await note_turn(anthropic, first)
    assert start.call_id == "toolu_1"
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


def test_capabilities_and_context_window() -> None:
    client = AnthropicChatClient(model="claude-sonnet-4-5", api_key="k")
    assert client.capabilities == Capabilities(
        tools=True,
        streamed_tool_calls=True,
        thinking=True,
        context_window=200_000,
        context_window_source="catalog",
    )
    assert (
        AnthropicChatClient(model="claude-x", api_key="k", context_window=50_000).capabilities.context_window
        == 50_000
    )
    assert AnthropicChatClient(model="proxy-model", api_key="k").capabilities.context_window is None


def test_the_sdk_is_imported_only_when_a_client_talks_to_the_api() -> None:
    code = (
        "import sys\n"
        "from hive_providers.anthropic import AnthropicChatClient\n"
        "AnthropicChatClient(model='claude-x', api_key='k').capabilities\n"
        "print('anthropic' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=WAIT, check=True
    )
    assert result.stdout.strip() == "False"
