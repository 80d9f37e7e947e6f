"""The Gemini adapter through ``httpx2`` against the scripted model server."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
import pytest
from providers_harness import GOOGLE_QUOTA
from providers_harness import READ
from providers_harness import WAIT
from providers_harness import after_text_and_call
from providers_harness import collect
from providers_harness import failing
from providers_harness import google
from providers_harness import note_turn
from providers_harness import scripted
from providers_harness import text_then_call
from providers_harness import thought_then_text
from providers_harness import thought_then_text_updates
from providers_harness import tool_round

import hive_core.messages as hm
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import Capabilities
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core import ToolSpec
from hive_core.messages import system
from hive_core.messages import user
from hive_providers.google import DEFAULT_BASE_URL
from hive_providers.google import SKIP_SIGNATURE
from hive_providers.google import GoogleChatClient
from hive_providers.google import google_schema

pytestmark = pytest.mark.anyio

STREAM = "/v1beta/models/gemini-test:streamGenerateContent"
READ_DECLARATION = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {"type": "OBJECT", "properties": {"path": {"type": "STRING"}}, "required": ["path"]},
}


def serve(
    *rounds: Round, **options: Any
) -> AbstractAsyncContextManager[tuple[ScriptedModelServer, GoogleChatClient]]:
    return scripted(google, *rounds, **options)


def calls_of(updates: Sequence[ChatUpdate]) -> list[ToolCallUpdate]:
    return [u for u in updates if isinstance(u, ToolCallUpdate)]


def last_signature(updates: Sequence[ChatUpdate]) -> dict[str, str]:
    signed = [u for u in updates if isinstance(u, ThinkingUpdate) and u.signature is not None]
    assert all(u.provider == "google" for u in signed)
    return json.loads(signed[-1].signature or "")


# -- streaming ----------------------------------------------------------------------------------------------


async def test_a_request_carries_the_conversation_the_instructions_and_the_options() -> None:
    options = ChatOptions(instructions="Answer in English.", temperature=0.5, max_output_tokens=200)
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client, [system("Be brief."), user("hi")], options)
        [request] = server.requests
    assert (request.method, request.path, request.query) == ("POST", STREAM, {"alt": "sse"})
    assert request.headers["x-goog-api-key"] == "test"
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Answer in English.\n\nBe brief."}]},
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 200},
    }


async def test_a_model_override_changes_the_path() -> None:
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(model="models/gemini-other"))
        [request] = server.requests
    assert request.path == "/v1beta/models/gemini-other:streamGenerateContent"


async def test_thoughts_stream_as_thinking_with_their_signature() -> None:
    async with serve(thought_then_text("thought-sig"), model="gemini-2.5-flash") as (server, client):
        updates = await collect(client, options=ChatOptions(reasoning_effort="high", max_output_tokens=1000))
        [request] = server.requests
    assert updates[:4] == thought_then_text_updates('{"thought":"thought-sig"}', "google")
    assert request.body["generationConfig"] == {
        "maxOutputTokens": 1000 + 24576,
        "thinkingConfig": {"thinkingBudget": 24576, "includeThoughts": True},
    }


@pytest.mark.parametrize(
    ("model", "effort", "thinking"),
    [
        ("gemini-2.5-flash", None, {"includeThoughts": True}),
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini-2.5-pro", "none", {"thinkingBudget": 128, "includeThoughts": True}),
        ("gemini-3-pro-preview", "low", {"thinkingBudget": 1024, "includeThoughts": True}),
        ("gemini-2.0-flash", None, None),
    ],
)
async def test_thinking_config_follows_the_effort_and_the_model(
    model: str, effort: str | None, thinking: dict[str, Any] | None
) -> None:
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), model=model) as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort=effort))
        [request] = server.requests
    assert request.body.get("generationConfig", {}).get("thinkingConfig") == thinking


async def test_an_unknown_effort_is_rejected() -> None:
    client = GoogleChatClient(model="gemini-test", api_key="test")
    with anyio.fail_after(WAIT), pytest.raises(ChatError) as caught:
        await collect(client, options=ChatOptions(reasoning_effort="maximal"))
    assert caught.value.code == "request_rejected"


# -- tools --------------------------------------------------------------------------------------------------


async def test_one_function_call_arrives_whole_with_a_generated_id() -> None:
    round_ = Round(parts=[ScriptToolCall(id="unused", name="read_file", arguments=['{"path":', ' "a.txt"}'])])
    async with serve(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        [request] = server.requests
    [call] = calls_of(updates)
    assert (call.index, call.name, json.loads(call.arguments)) == (0, "read_file", {"path": "a.txt"})
    assert call.id is not None
    assert call.id.startswith("gemini_")
    assert updates[-1] == FinishUpdate("tool_calls", client.model)
    assert request.body["tools"] == [{"functionDeclarations": [READ_DECLARATION]}]
    assert request.body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


async def test_parallel_calls_get_distinct_ids_that_the_same_request_repeats() -> None:
    round_ = Round(
        parts=[
            ScriptText(chunks=["Reading both."]),
            ScriptToolCall(
                id="u", name="read_file", arguments=['{"path": ', '"a.txt"}'], signature="call-sig"
            ),
            ScriptToolCall(id="u", name="read_file", arguments=['{"path": "b', '.txt"}']),
        ]
    )
    async with serve(round_, round_) as (_, client):
        first = calls_of(await collect(client, options=ChatOptions(tools=[READ])))
        again = calls_of(await collect(client, options=ChatOptions(tools=[READ])))
        other = calls_of(await collect_other(client))
    assert [(c.index, json.loads(c.arguments)) for c in first] == [
        (0, {"path": "a.txt"}),
        (1, {"path": "b.txt"}),
    ]
    assert len({c.id for c in first}) == 2
    assert [c.id for c in again] == [c.id for c in first]
    assert not {c.id for c in other} & {c.id for c in first}


async def collect_other(client: GoogleChatClient) -> list[ChatUpdate]:
    """A different request on a fresh server: its generated ids differ."""
    round_ = Round(parts=[ScriptToolCall(id="u", name="read_file", arguments=['{"path": "c"}'])])
    async with ScriptedModelServer([round_]) as server:
        client = GoogleChatClient(model="gemini-test", api_key="test", base_url=server.url + "/v1beta")
        try:
            return await collect(client, [user("something else")], ChatOptions(tools=[READ]))
        finally:
            await client.aclose()


async def test_a_call_signature_is_kept_for_its_call() -> None:
    round_ = Round(
        parts=[
            ScriptThinking(chunks=["Plan."], signature="thought-sig"),
            ScriptToolCall(id="u", name="read_file", arguments=['{"path": "a"}'], signature="call-sig"),
            ScriptToolCall(id="u", name="read_file", arguments=['{"path": "b"}']),
        ]
    )
    async with serve(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert last_signature(updates) == {"thought": "thought-sig", "call:0": "call-sig"}


async def test_whitespace_text_before_a_call_streams_but_is_not_sent_back() -> None:
    round_ = text_then_call("\n", "u")
    async with serve(round_, Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        assert updates[0] == TextUpdate("\n")
        [call] = calls_of(updates)
        assert call.id is not None
        await collect(client, after_text_and_call("\n", call.id, call.arguments), ChatOptions(tools=[READ]))
        contents = server.requests[1].body["contents"]
    assert contents[1] == {
        "role": "model",
        "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a"}}}],
    }
    assert contents[2] == {
        "role": "user",
        "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "A"}}}],
    }


async def test_history_goes_back_with_each_signature_on_its_part() -> None:
    signature = json.dumps({"thought": "t-sig", "text": "x-sig", "call:0": "c-sig"})
    history = [
        user("hi"),
        *tool_round(
            hm.ThinkingPart("Let me look.", signature, "google"), "gemini_0123456789ab_0", "server-id"
        ),
        user("thanks"),
        hm.Message("assistant", [hm.ThinkingPart("theirs", "sig-1", "anthropic"), hm.TextPart("ok")]),
        user("more"),
    ]
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client, history, ChatOptions(tools=[READ]))
        [request] = server.requests
    assert request.body["contents"] == [
        {"role": "user", "parts": [{"text": "hi"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Let me look.", "thought": True, "thoughtSignature": "t-sig"},
                {"text": "Reading.", "thoughtSignature": "x-sig"},
                {"functionCall": {"name": "read_file", "args": {"path": "a"}}, "thoughtSignature": "c-sig"},
                {"functionCall": {"name": "read_file", "args": {}, "id": "server-id"}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_file", "response": {"output": "A"}}},
                {"functionResponse": {"name": "read_file", "response": {"error": "bad"}, "id": "server-id"}},
                {"text": "thanks"},
            ],
        },
        {"role": "model", "parts": [{"text": "ok"}]},
        {"role": "user", "parts": [{"text": "more"}]},
    ]


async def test_gemini_3_gets_the_placeholder_signature_for_calls_made_elsewhere() -> None:
    history = [
        user("hi"),
        hm.Message(
            "assistant",
            [
                hm.ToolCallPart("toolu_a", "read_file", "{}", {}),
                hm.ToolCallPart("toolu_b", "read_file", "{}", {}),
            ],
        ),
        hm.Message(
            "tool",
            [hm.ToolResultPart("toolu_a", "read_file", "A"), hm.ToolResultPart("toolu_b", "read_file", "B")],
        ),
    ]
    async with serve(Round(parts=[ScriptText(chunks=["ok"])]), model="gemini-3-pro-preview") as (
        server,
        client,
    ):
        await collect(client, history, ChatOptions(tools=[READ]))
        [request] = server.requests
    first, second = request.body["contents"][1]["parts"]
    assert first["thoughtSignature"] == SKIP_SIGNATURE
    assert "thoughtSignature" not in second


def test_schemas_are_rewritten_into_what_gemini_accepts() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "title": "Args",
        "additionalProperties": False,
        "$defs": {
            "Mode": {"type": "string", "enum": ["fast", "slow"]},
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}},
        },
        "properties": {
            "path": {"type": "string", "default": "a.txt", "format": "uri", "examples": ["b"]},
            "mode": {"$ref": "#/$defs/Mode", "description": "How."},
            "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "maxItems": 3},
            "kind": {"const": "file"},
            "level": {"type": "integer", "enum": [1, 2]},
            "tree": {"$ref": "#/$defs/Node"},
            "either": {"oneOf": [{"type": "string"}, {"type": "number"}]},
        },
        "required": ["path", "ghost"],
    }
    assert google_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "path": {"type": "STRING"},
            "mode": {"type": "STRING", "enum": ["fast", "slow"], "format": "enum", "description": "How."},
            "limit": {"type": "INTEGER", "minimum": 1, "nullable": True},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": 3, "nullable": True},
            "kind": {"type": "STRING", "enum": ["file"], "format": "enum"},
            "level": {"type": "INTEGER"},
            "tree": {"type": "OBJECT", "properties": {"child": {"type": "OBJECT"}}},
            "either": {"anyOf": [{"type": "STRING"}, {"type": "NUMBER"}]},
        },
        "required": ["path"],
    }


async def test_a_tool_without_parameters_declares_none() -> None:
    bare = ToolSpec("now", "The time.", {"type": "object", "properties": {}, "additionalProperties": False})
    async with serve(Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(tools=[bare]))
        [request] = server.requests
    assert request.body["tools"] == [{"functionDeclarations": [{"name": "now", "description": "The time."}]}]


# -- usage and finish reasons ---------------------------------------------------------------------------------


# -- failures -------------------------------------------------------------------------------------------------


async def test_a_429_keeps_the_wait_its_retry_info_asks_for() -> None:
    # The wait of a retry-after header: test_adapters.test_a_429_keeps_the_wait_it_asks_for.
    async with serve(Round(failure=HttpFailure(status=429, body=GOOGLE_QUOTA)), max_retries=0) as (_, client):
        _, body = await failing(client)
    assert (body.code, body.retry_after) == ("rate_limit", 13.0)


async def test_a_wait_longer_than_the_limit_is_not_waited_for() -> None:
    rounds = (
        Round(failure=HttpFailure(status=429, retry_after=120)),
        Round(parts=[ScriptText(chunks=["ok"])]),
    )
    async with serve(*rounds, max_retries=2, max_retry_wait=60) as (server, client):
        _, caught = await failing(client)
        assert len(server.requests) == 1
        assert len(server.remaining) == 1
    assert (caught.code, caught.retry_after) == ("rate_limit", 120.0)


async def test_retries_stop_after_max_retries() -> None:
    rounds = [Round(failure=HttpFailure(status=503, retry_after=0.01)) for _ in range(3)]
    async with serve(*rounds, max_retries=2) as (server, client):
        _, caught = await failing(client)
        server.assert_consumed()
    assert caught.code == "internal"


# -- one hive-core turn ---------------------------------------------------------------------------------------


async def test_a_hive_turn_runs_a_tool_round_then_a_text_round() -> None:
    first = Round(
        parts=[
            ScriptThinking(chunks=["Need the note."], signature="thought-sig"),
            ScriptToolCall(id="u", name="read_note", arguments=['{"name": "todo"}'], signature="call-sig"),
        ],
        usage=Usage(input_tokens=50, output_tokens=10),
    )
    start, first, second = await note_turn(google, first, model="gemini-2.5-flash")
    assert start.call_id.startswith("gemini_")
    assert first.body["tools"][0]["functionDeclarations"][0]["name"] == "read_note"
    assert second.body["contents"] == [
        {"role": "user", "parts": [{"text": "read my todo note"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Need the note.", "thought": True, "thoughtSignature": "thought-sig"},
                {
                    "functionCall": {"name": "read_note", "args": {"name": "todo"}},
                    "thoughtSignature": "call-sig",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "read_note", "response": {"output": "contents of todo"}}}
            ],
        },
    ]


# -- models, settings, capabilities ---------------------------------------------------------------------------


def test_capabilities_and_context_window() -> None:
    client = GoogleChatClient(model="gemini-2.5-pro", api_key="k")
    assert client.capabilities == Capabilities(
        tools=True,
        streamed_tool_calls=False,
        thinking=True,
        context_window=1_048_576,
        context_window_source="catalog",
    )
    assert client.base_url == DEFAULT_BASE_URL
    assert (
        GoogleChatClient(model="gemini-x", api_key="k", context_window=32_000).capabilities.context_window
        == 32_000
    )
    assert GoogleChatClient(model="gemma-3-27b-it", api_key="k").capabilities.context_window is None


def test_the_key_is_required_and_never_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The configuration loader is the one place environment variables are read.
    for name in ("GOOGLEAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "from-env")
    with pytest.raises(ValueError, match="'api_key'"):
        GoogleChatClient(model="gemini-x")
