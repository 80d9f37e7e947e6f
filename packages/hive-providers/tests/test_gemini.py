"""The Gemini adapter through ``httpx2`` against the scripted model server."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
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
from hive_providers.gemini import DEFAULT_BASE_URL, SKIP_SIGNATURE, GeminiClient, from_settings, gemini_schema

pytestmark = pytest.mark.anyio

WAIT = 10.0
"""Seconds any single wait of a test may take before it fails (a bound, never a synchronisation)."""

STREAM = "/v1beta/models/gemini-test:streamGenerateContent"
READ = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
READ_DECLARATION = {
    "name": "read_file",
    "description": "Read a file.",
    "parameters": {"type": "OBJECT", "properties": {"path": {"type": "STRING"}}, "required": ["path"]},
}


@asynccontextmanager
async def serve(*rounds: Round, **options: Any) -> AsyncGenerator[tuple[ScriptedModelServer, GeminiClient]]:
    async with ScriptedModelServer(rounds) as server:
        options.setdefault("model", "gemini-test")
        client = GeminiClient(api_key="test", base_url=server.url + "/v1beta", **options)
        try:
            yield server, client
        finally:
            await client.aclose()


async def collect(
    client: GeminiClient, messages: Sequence[Message] = (), options: ChatOptions | None = None
) -> list[ChatUpdate]:
    with anyio.fail_after(WAIT):
        return [u async for u in client.stream(messages or [user("hi")], options or ChatOptions())]


async def failing(client: GeminiClient) -> tuple[list[ChatUpdate], ChatError]:
    updates: list[ChatUpdate] = []

    async def run() -> None:
        async for update in client.stream([user("hi")], ChatOptions()):
            updates.append(update)

    with anyio.fail_after(WAIT), pytest.raises(ChatError) as caught:
        await run()
    return updates, caught.value


def calls_of(updates: Sequence[ChatUpdate]) -> list[ToolCallUpdate]:
    return [u for u in updates if isinstance(u, ToolCallUpdate)]


def last_signature(updates: Sequence[ChatUpdate]) -> dict[str, str]:
    signed = [u for u in updates if isinstance(u, ThinkingUpdate) and u.signature is not None]
    assert all(u.provider == "google" for u in signed)
    return json.loads(signed[-1].signature or "")


# -- streaming ----------------------------------------------------------------------------------------------


async def test_a_text_stream_carries_text_usage_and_the_finish() -> None:
    round_ = Round(parts=[TextPart(chunks=["Hel", "lo"])], usage=Usage(input_tokens=12, output_tokens=3))
    async with serve(round_) as (server, client):
        updates = await collect(
            client,
            [system("Be brief."), user("hi")],
            ChatOptions(instructions="Answer in English.", temperature=0.5, max_output_tokens=200),
        )
        [request] = server.requests
    assert updates == [
        TextUpdate("Hel"),
        TextUpdate("lo"),
        UsageUpdate(input_tokens=12, output_tokens=3),
        FinishUpdate("stop"),
    ]
    assert (request.method, request.path, request.query) == ("POST", STREAM, {"alt": "sse"})
    assert request.headers["x-goog-api-key"] == "test"
    assert request.body == {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"parts": [{"text": "Answer in English.\n\nBe brief."}]},
        "generationConfig": {"temperature": 0.5, "maxOutputTokens": 200},
    }


async def test_a_model_override_changes_the_path() -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(model="models/gemini-other"))
        [request] = server.requests
    assert request.path == "/v1beta/models/gemini-other:streamGenerateContent"


async def test_thoughts_stream_as_thinking_with_their_signature() -> None:
    round_ = Round(
        parts=[ThinkingPart(chunks=["Let me ", "look."], signature="thought-sig"), TextPart(chunks=["Done."])]
    )
    async with serve(round_, model="gemini-2.5-flash") as (server, client):
        updates = await collect(client, options=ChatOptions(reasoning_effort="high", max_output_tokens=1000))
        [request] = server.requests
    assert updates[:4] == [
        ThinkingUpdate("Let me "),
        ThinkingUpdate("look."),
        ThinkingUpdate("", signature='{"thought":"thought-sig"}', provider="google"),
        TextUpdate("Done."),
    ]
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
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), model=model) as (server, client):
        await collect(client, options=ChatOptions(reasoning_effort=effort))
        [request] = server.requests
    assert request.body.get("generationConfig", {}).get("thinkingConfig") == thinking


async def test_an_unknown_effort_is_rejected() -> None:
    client = GeminiClient(model="gemini-test", api_key="test")
    with anyio.fail_after(WAIT), pytest.raises(ChatError) as caught:
        await collect(client, options=ChatOptions(reasoning_effort="maximal"))
    assert caught.value.code == "request_rejected"


# -- tools --------------------------------------------------------------------------------------------------


async def test_one_function_call_arrives_whole_with_a_generated_id() -> None:
    round_ = Round(parts=[ToolCallPart(id="unused", name="read_file", arguments=['{"path":', ' "a.txt"}'])])
    async with serve(round_) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        [request] = server.requests
    [call] = calls_of(updates)
    assert (call.index, call.name, json.loads(call.arguments)) == (0, "read_file", {"path": "a.txt"})
    assert call.id is not None
    assert call.id.startswith("gemini_")
    assert updates[-1] == FinishUpdate("tool_calls")
    assert request.body["tools"] == [{"functionDeclarations": [READ_DECLARATION]}]
    assert request.body["toolConfig"] == {"functionCallingConfig": {"mode": "AUTO"}}


async def test_parallel_calls_get_distinct_ids_that_the_same_request_repeats() -> None:
    round_ = Round(
        parts=[
            TextPart(chunks=["Reading both."]),
            ToolCallPart(id="u", name="read_file", arguments=['{"path": ', '"a.txt"}'], signature="call-sig"),
            ToolCallPart(id="u", name="read_file", arguments=['{"path": "b', '.txt"}']),
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


async def collect_other(client: GeminiClient) -> list[ChatUpdate]:
    """A different request on a fresh server: its generated ids differ."""
    round_ = Round(parts=[ToolCallPart(id="u", name="read_file", arguments=['{"path": "c"}'])])
    async with ScriptedModelServer([round_]) as server:
        client = GeminiClient(model="gemini-test", api_key="test", base_url=server.url + "/v1beta")
        try:
            return await collect(client, [user("something else")], ChatOptions(tools=[READ]))
        finally:
            await client.aclose()


async def test_a_call_signature_is_kept_for_its_call() -> None:
    round_ = Round(
        parts=[
            ThinkingPart(chunks=["Plan."], signature="thought-sig"),
            ToolCallPart(id="u", name="read_file", arguments=['{"path": "a"}'], signature="call-sig"),
            ToolCallPart(id="u", name="read_file", arguments=['{"path": "b"}']),
        ]
    )
    async with serve(round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
    assert last_signature(updates) == {"thought": "thought-sig", "call:0": "call-sig"}


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        (RequiredTool("read_file"), {"mode": "ANY", "allowedFunctionNames": ["read_file"]}),
    ],
)
async def test_tool_choice_maps(choice: ToolChoice, config: dict[str, Any]) -> None:
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(tools=[READ], tool_choice=choice))
        [request] = server.requests
    assert request.body["toolConfig"] == {"functionCallingConfig": config}


async def test_whitespace_text_before_a_call_streams_but_is_not_sent_back() -> None:
    round_ = Round(
        parts=[TextPart(chunks=["\n"]), ToolCallPart(id="u", name="read_file", arguments=['{"path": "a"}'])]
    )
    async with serve(round_, Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        updates = await collect(client, options=ChatOptions(tools=[READ]))
        assert updates[0] == TextUpdate("\n")
        [call] = calls_of(updates)
        assert call.id is not None
        history = [
            user("hi"),
            Message("assistant", [Text("\n"), Call(call.id, "read_file", call.arguments, {"path": "a"})]),
            Message("tool", [Result(call.id, "read_file", "A")]),
        ]
        await collect(client, history, ChatOptions(tools=[READ]))
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
        Message(
            "assistant",
            [
                Thinking("Let me look.", signature, "google"),
                Text("Reading."),
                Call("gemini_0123456789ab_0", "read_file", '{"path": "a"}', {"path": "a"}),
                Call("server-id", "read_file", '{"path": ', None, "not JSON"),
            ],
        ),
        Message(
            "tool",
            [
                Result("gemini_0123456789ab_0", "read_file", "A"),
                Result("server-id", "read_file", "bad", is_error=True),
            ],
        ),
        user("thanks"),
        Message("assistant", [Thinking("theirs", "sig-1", "anthropic"), Text("ok")]),
        user("more"),
    ]
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
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
        Message(
            "assistant",
            [Call("toolu_a", "read_file", "{}", {}), Call("toolu_b", "read_file", "{}", {})],
        ),
        Message("tool", [Result("toolu_a", "read_file", "A"), Result("toolu_b", "read_file", "B")]),
    ]
    async with serve(Round(parts=[TextPart(chunks=["ok"])]), model="gemini-3-pro-preview") as (
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
    assert gemini_schema(schema) == {
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
    async with serve(Round(parts=[TextPart(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(tools=[bare]))
        [request] = server.requests
    assert request.body["tools"] == [{"functionDeclarations": [{"name": "now", "description": "The time."}]}]


# -- usage and finish reasons ---------------------------------------------------------------------------------


async def test_usage_reports_cached_input() -> None:
    round_ = Round(
        parts=[TextPart(chunks=["x"])],
        usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
    )
    async with serve(round_) as (_, client):
        updates = await collect(client)
    assert UsageUpdate(input_tokens=120, output_tokens=30, cached_input_tokens=100) in updates


@pytest.mark.parametrize("reason", ["stop", "length", "content_filter"])
async def test_finish_reasons_map(reason: Any) -> None:
    async with serve(Round(parts=[TextPart(chunks=["x"])], finish_reason=reason)) as (_, client):
        updates = await collect(client)
    assert updates[-1] == FinishUpdate(reason)


# -- failures -------------------------------------------------------------------------------------------------

INVALID_KEY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
        "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}],
    }
}
QUOTA = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota, please check your plan and billing details.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "13s"}],
    }
}


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (HttpFailure(status=400, body=INVALID_KEY), "auth"),
        (HttpFailure(status=401), "auth"),
        (HttpFailure(status=403), "auth"),
        (HttpFailure(status=400), "request_rejected"),
        (HttpFailure(status=404), "request_rejected"),
        (HttpFailure(status=429, body=QUOTA), "rate_limit"),
        (HttpFailure(status=500), "internal"),
        (HttpFailure(status=503), "internal"),
        (HttpFailure(status=504), "timeout"),
        (HttpFailure(status=502, body="<html>Bad gateway</html>"), "internal"),
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
    assert str(caught).startswith("google")


async def test_a_429_keeps_the_wait_it_asks_for() -> None:
    rounds = (
        Round(failure=HttpFailure(status=429, retry_after=7)),
        Round(failure=HttpFailure(status=429, body=QUOTA)),
    )
    async with serve(*rounds, max_retries=0) as (_, client):
        _, header = await failing(client)
        _, body = await failing(client)
    assert (header.code, header.retry_after) == ("rate_limit", 7.0)
    assert (body.code, body.retry_after) == ("rate_limit", 13.0)


async def test_a_429_is_retried_after_the_wait_it_asks_for() -> None:
    rounds = (Round(failure=HttpFailure(status=429, retry_after=1)), Round(parts=[TextPart(chunks=["ok"])]))
    async with serve(*rounds, max_retries=1) as (server, client):
        started = time.monotonic()
        updates = await collect(client)
        waited = time.monotonic() - started
        requests = server.requests
    assert updates[0] == TextUpdate("ok")
    assert [r.round for r in requests] == [0, 1]
    assert requests[0].raw_body == requests[1].raw_body
    assert waited >= 1.0  # the first backoff of its own is at most 0.5 s


async def test_a_wait_longer_than_the_limit_is_not_waited_for() -> None:
    rounds = (Round(failure=HttpFailure(status=429, retry_after=120)), Round(parts=[TextPart(chunks=["ok"])]))
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
    client = GeminiClient(
        model="gemini-test", api_key="test", base_url=f"http://127.0.0.1:{port}/v1beta", max_retries=0
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
                ThinkingPart(chunks=["Need the note."], signature="thought-sig"),
                ToolCallPart(id="u", name="read_note", arguments=['{"name": "todo"}'], signature="call-sig"),
            ],
            usage=Usage(input_tokens=50, output_tokens=10),
        ),
        Round(
            parts=[TextPart(chunks=["The note says ", "hi."])], usage=Usage(input_tokens=80, output_tokens=5)
        ),
    )
    async with serve(*rounds, model="gemini-2.5-flash") as (server, client):
        agent = Agent(client, tools=[read_note])
        with anyio.fail_after(WAIT):
            events = await collect_turn(agent.session(), "read my todo note")
        server.assert_consumed()
        first, second = server.requests
    assert verify(events) == []
    assert [e.content for e in events if isinstance(e, ThinkingDeltaEvent)] == ["Need the note."]
    [start] = [e for e in events if isinstance(e, ToolStartEvent)]
    assert (start.tool, start.input) == ("read_note", {"name": "todo"})
    assert start.call_id.startswith("gemini_")
    [end] = [e for e in events if isinstance(e, ToolEndEvent)]
    assert (end.success, end.output, end.call_id) == (True, "contents of todo", start.call_id)
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "The note says hi."
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert (turn_end.stop_reason, turn_end.input_tokens, turn_end.output_tokens) == ("completed", 130, 15)
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


async def test_list_models_returns_the_names() -> None:
    async with serve() as (server, client):
        with anyio.fail_after(WAIT):
            models = await client.list_models()
        [request] = server.requests
    assert models == ["scripted-model"]
    assert (request.method, request.path) == ("GET", "/v1beta/models")
    assert request.headers["x-goog-api-key"] == "test"


def test_capabilities_and_context_window() -> None:
    client = GeminiClient(model="gemini-2.5-pro", api_key="k")
    assert client.capabilities == Capabilities(
        tools=True, streamed_tool_calls=False, thinking=True, context_window=1_048_576
    )
    assert client.base_url == DEFAULT_BASE_URL
    assert GeminiClient(model="gemini-x", api_key="k", context_window=32_000).context_window == 32_000
    assert GeminiClient(model="gemma-3-27b-it", api_key="k").context_window is None


def test_the_key_falls_back_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLEAI_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="'api_key'"):
        GeminiClient(model="gemini-x")
    monkeypatch.setenv("GOOGLE_API_KEY", "from-env")
    assert GeminiClient(model="gemini-x")._headers() == {"x-goog-api-key": "from-env"}  # pyright: ignore[reportPrivateUsage]


def test_from_settings_builds_a_client() -> None:
    settings = ProviderSettings(
        provider="google",
        model="gemini-x",
        api_key="k",
        endpoint="https://gateway.example.test/",
        options={"context_length": "200000"},
        idle_timeout=30.0,
    )
    client = from_settings(settings)
    assert (client.model, client.base_url) == ("gemini-x", "https://gateway.example.test/v1beta")
    assert (client.context_window, client.idle_timeout) == (200_000, 30.0)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        (ProviderSettings(provider="google", model="gemini-x"), "'api_key'"),
        (ProviderSettings(provider="google", api_key="k"), "'model'"),
        (
            ProviderSettings(provider="google", model="m", api_key="k", options={"context_length": "big"}),
            "context_length",
        ),
    ],
)
def test_from_settings_names_what_is_missing_or_wrong(settings: ProviderSettings, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        from_settings(settings)
