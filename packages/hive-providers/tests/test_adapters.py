"""What every remote adapter does alike, through its real SDK (or ``httpx2``) against the scripted model server:
cached input in the usage, finish reasons, tool choices, rate limits and retries, broken and quiet
connections, and listing models."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from providers_harness import GOOGLE_INVALID_KEY
from providers_harness import GOOGLE_QUOTA
from providers_harness import READ
from providers_harness import WAIT
from providers_harness import WRITE
from providers_harness import anthropic
from providers_harness import assembled
from providers_harness import closed_port
from providers_harness import collect
from providers_harness import failing
from providers_harness import google
from providers_harness import openai_chat
from providers_harness import openai_responses
from providers_harness import scripted

from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import DropConnectionFailure
from hive_conformance.script import Failure
from hive_conformance.script import HttpFailure
from hive_conformance.script import MalformedStreamFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptPart
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import UsageUpdate
from hive_core.chat import FinishReason
from hive_core.chat import RequiredTool
from hive_core.chat import ToolChoice
from hive_core.messages import system
from hive_core.messages import user
from hive_providers import ProviderSettings
from hive_providers._client import RemoteChatClient
from hive_providers.anthropic import from_settings as anthropic_from_settings
from hive_providers.google import from_settings as google_from_settings

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Adapter:
    """One remote adapter as these tests drive it."""

    provider: str
    """The name its errors start with."""
    make: Callable[..., RemoteChatClient]
    """Makes a client for the scripted server at a URL."""
    failures: list[tuple[Failure, str]]
    """Failures of a request and the error code each one maps to."""
    models_path: str
    """Where it lists models."""
    auth: tuple[str, str]
    """The header that carries the key."""
    tool_choice: Callable[[dict[str, Any]], object]
    """Where the request body says the tool choice."""
    choices: dict[str, object]
    """How each tool choice is sent (``read_file``: the one required tool)."""
    finishes: tuple[FinishReason, ...] = ("stop", "length", "content_filter")
    """The finish reasons a text round can end with, mapped back as they were scripted."""
    sdk: bool = True
    """It retries through a vendor SDK, which counts retries in ``x-stainless-retry-count``."""


OPENAI_MODES: dict[str, object] = {"auto": "auto", "none": "none", "required": "required"}
OPENAI: dict[str, Any] = {
    "provider": "openai",
    "failures": [
        (HttpFailure(status=401), "auth"),
        (HttpFailure(status=403), "auth"),
        (HttpFailure(status=429), "rate_limit"),
        (
            HttpFailure(status=429, message="You exceeded your current quota (insufficient_quota)"),
            "billing",
        ),
        (HttpFailure(status=402), "billing"),
        (ContextLengthFailure(), "context_limit"),
        (HttpFailure(status=400, message="Invalid value for 'tool_choice'"), "request_rejected"),
        (HttpFailure(status=404, message="The model does not exist"), "request_rejected"),
        (HttpFailure(status=500), "internal"),
        (HttpFailure(status=503), "internal"),
        (HttpFailure(status=504), "timeout"),
        (MalformedStreamFailure(after_chunks=1), "network"),
        (DropConnectionFailure(after_chunks=1), "network"),
    ],
    "models_path": "/v1/models",
    "auth": ("authorization", "Bearer sk-test"),
    "tool_choice": lambda body: body["tool_choice"],
}
"""What the two OpenAI adapters (Chat Completions, Responses) share: the SDK and its errors."""

ADAPTERS = {
    "openai_chat": Adapter(
        make=openai_chat,
        choices={**OPENAI_MODES, "read_file": {"type": "function", "function": {"name": "read_file"}}},
        **OPENAI,
    ),
    "openai_responses": Adapter(
        make=openai_responses,
        choices={**OPENAI_MODES, "read_file": {"type": "function", "name": "read_file"}},
        finishes=(),
        **OPENAI,
    ),
    "anthropic": Adapter(
        provider="anthropic",
        make=anthropic,
        failures=[
            (HttpFailure(status=401), "auth"),
            (HttpFailure(status=403), "auth"),
            (HttpFailure(status=402), "billing"),
            (
                HttpFailure(
                    status=400, message="Your credit balance is too low to access the Anthropic API."
                ),
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
        models_path="/v1/models",
        auth=("authorization", "Bearer test"),
        tool_choice=lambda body: body["tool_choice"],
        choices={
            "auto": {"type": "auto"},
            "none": {"type": "none"},
            "required": {"type": "any"},
            "read_file": {"type": "tool", "name": "read_file"},
        },
        finishes=("stop", "length", "tool_calls", "content_filter"),
    ),
    "google": Adapter(
        provider="google",
        make=google,
        failures=[
            (HttpFailure(status=400, body=GOOGLE_INVALID_KEY), "auth"),
            (HttpFailure(status=401), "auth"),
            (HttpFailure(status=403), "auth"),
            (HttpFailure(status=400), "request_rejected"),
            (HttpFailure(status=404), "request_rejected"),
            (HttpFailure(status=429, body=GOOGLE_QUOTA), "rate_limit"),
            (HttpFailure(status=500), "internal"),
            (HttpFailure(status=503), "internal"),
            (HttpFailure(status=504), "timeout"),
            (HttpFailure(status=502, body="<html>Bad gateway</html>"), "internal"),
            (ContextLengthFailure(), "context_limit"),
            (MalformedStreamFailure(after_chunks=1), "internal"),
            (DropConnectionFailure(after_chunks=1), "network"),
        ],
        models_path="/v1beta/models",
        auth=("x-goog-api-key", "test"),
        tool_choice=lambda body: body["toolConfig"]["functionCallingConfig"],
        choices={
            "auto": {"mode": "AUTO"},
            "none": {"mode": "NONE"},
            "required": {"mode": "ANY"},
            "read_file": {"mode": "ANY", "allowedFunctionNames": ["read_file"]},
        },
        sdk=False,
    ),
}

each = pytest.mark.parametrize("adapter", list(ADAPTERS.values()), ids=list(ADAPTERS))


@pytest.fixture(scope="module", autouse=True)
def sdks_imported() -> None:
    """Import the SDKs before any bounded wait: their first import takes seconds on a slow machine."""
    importlib.import_module("anthropic")
    importlib.import_module("openai")


@each
async def test_a_text_stream_carries_text_usage_and_the_finish(adapter: Adapter) -> None:
    round_ = Round(parts=[ScriptText(chunks=["Hel", "lo"])], usage=Usage(input_tokens=12, output_tokens=3))
    async with scripted(adapter.make, round_) as (server, client):
        updates = await collect(client)
        server.assert_consumed()
    assert updates == [
        TextUpdate("Hel"),
        TextUpdate("lo"),
        UsageUpdate(12, 3, 0),
        FinishUpdate("stop", client.model),
    ]


@each
async def test_usage_reports_cached_input(adapter: Adapter) -> None:
    round_ = Round(
        parts=[ScriptText(chunks=["ok"])],
        usage=Usage(input_tokens=120, output_tokens=30, cached_input_tokens=100),
    )
    async with scripted(adapter.make, round_) as (_, client):
        updates = await collect(client)
    assert [u for u in updates if isinstance(u, UsageUpdate)] == [UsageUpdate(120, 30, 100)]


@pytest.mark.parametrize(
    ("adapter", "reason"),
    [(adapter, reason) for adapter in ADAPTERS.values() for reason in adapter.finishes],
    ids=[f"{name}-{reason}" for name, adapter in ADAPTERS.items() for reason in adapter.finishes],
)
async def test_finish_reasons_map(adapter: Adapter, reason: FinishReason) -> None:
    async with scripted(adapter.make, Round(parts=[ScriptText(chunks=["x"])], finish_reason=reason)) as (
        _,
        client,
    ):
        updates = await collect(client)
    assert updates[-1] == FinishUpdate(reason, client.model)


@pytest.mark.parametrize(
    ("adapter", "choice"),
    [(adapter, choice) for adapter in ADAPTERS.values() for choice in adapter.choices],
    ids=[f"{name}-{choice}" for name, adapter in ADAPTERS.items() for choice in adapter.choices],
)
async def test_tool_choice_maps(adapter: Adapter, choice: str) -> None:
    chosen: ToolChoice = RequiredTool(choice) if choice == "read_file" else choice  # type: ignore[assignment]
    async with scripted(adapter.make, Round(parts=[ScriptText(chunks=["ok"])])) as (server, client):
        await collect(client, options=ChatOptions(tools=[READ], tool_choice=chosen))
        [request] = server.requests
    assert adapter.tool_choice(request.body) == adapter.choices[choice]


@pytest.mark.parametrize(
    ("adapter", "failure", "code"),
    [(adapter, failure, code) for adapter in ADAPTERS.values() for failure, code in adapter.failures],
    ids=[f"{name}-{index}" for name, adapter in ADAPTERS.items() for index in range(len(adapter.failures))],
)
async def test_each_failure_maps_to_its_error_code(adapter: Adapter, failure: Failure, code: str) -> None:
    round_ = Round(parts=[ScriptText(chunks=["a", "b"])], failure=failure)
    async with scripted(adapter.make, round_, max_retries=0) as (server, client):
        updates, caught = await failing(client)
        assert len(server.requests) == 1
    assert caught.code == code
    assert str(caught).startswith(adapter.provider)
    if isinstance(failure, HttpFailure):
        assert updates == []
        assert str(caught).startswith(f"{adapter.provider}: HTTP ")
    elif isinstance(failure, DropConnectionFailure | MalformedStreamFailure):
        assert updates == [TextUpdate("a")]
    if isinstance(failure, MalformedStreamFailure):
        assert "unreadable" in str(caught)


@each
async def test_a_429_keeps_the_wait_it_asks_for(adapter: Adapter) -> None:
    async with scripted(
        adapter.make, Round(failure=HttpFailure(status=429, retry_after=7)), max_retries=0
    ) as (
        _,
        client,
    ):
        _, caught = await failing(client)
    assert (caught.code, caught.retry_after) == ("rate_limit", 7.0)


@each
async def test_a_429_is_retried_after_the_wait_it_asks_for(adapter: Adapter) -> None:
    rounds = (Round(failure=HttpFailure(status=429, retry_after=1)), Round(parts=[ScriptText(chunks=["ok"])]))
    async with scripted(adapter.make, *rounds, max_retries=1) as (server, client):
        started = time.monotonic()
        updates = await collect(client)
        waited = time.monotonic() - started
        requests = server.requests
    assert updates[0] == TextUpdate("ok")
    assert [r.round for r in requests] == [0, 1]
    assert requests[0].raw_body == requests[1].raw_body
    if adapter.sdk:
        assert requests[1].headers["x-stainless-retry-count"] == "1"
    assert waited >= 1.0  # a first backoff of the client's own is at most 0.5 s


@each
async def test_a_connection_cut_mid_stream_fails_after_what_arrived(adapter: Adapter) -> None:
    round_ = Round(parts=[ScriptText(chunks=["Hel", "lo"])], failure=DropConnectionFailure(after_chunks=1))
    async with scripted(adapter.make, round_) as (_, client):
        updates, caught = await failing(client)
    assert updates == [TextUpdate("Hel")]
    assert caught.code == "network"


@each
async def test_a_stream_that_goes_quiet_times_out(adapter: Adapter) -> None:
    round_ = Round(parts=[ScriptText(chunks=["a"])], chunk_delay=60)
    async with scripted(adapter.make, round_, idle_timeout=0.3, max_retries=0) as (_, client):
        started = time.monotonic()
        updates, caught = await failing(client)
        waited = time.monotonic() - started
    assert updates == []
    assert caught.code == "timeout"
    assert waited < WAIT


@each
async def test_a_refused_connection_is_a_network_error(adapter: Adapter) -> None:
    async with adapter.make(f"http://127.0.0.1:{closed_port()}", max_retries=0) as client:
        _, caught = await failing(client)
    assert caught.code == "network"


@each
async def test_list_models_returns_the_names(adapter: Adapter) -> None:
    async with scripted(adapter.make) as (server, client):
        with anyio.fail_after(WAIT):
            models = await client.list_models()
        [request] = server.requests
    assert models == ["scripted-model"]
    assert (request.method, request.path) == ("GET", adapter.models_path)
    assert request.headers[adapter.auth[0]] == adapter.auth[1]


# -- the two OpenAI adapters, each with its own request fields ----------------------------------------------

HISTORY: list[dict[str, Any]] = [
    {"role": "system", "content": "You are hive."},
    {"role": "user", "content": "hi"},
]
"""The conversation of :func:`test_options_become_request_fields` as both OpenAI APIs carry it."""


@pytest.mark.parametrize(
    ("make", "options", "fields"),
    [
        pytest.param(
            openai_chat,
            ChatOptions(
                temperature=0.25,
                max_output_tokens=321,
                reasoning_effort="extra_high",
                instructions="Be brief.",
                model="gpt-other",
            ),
            {
                "model": "gpt-other",
                "temperature": 0.25,
                "max_completion_tokens": 321,
                "reasoning_effort": "max",
                "messages": [{"role": "system", "content": "Be brief."}, *HISTORY],
            },
            id="openai_chat",
        ),
        pytest.param(
            openai_responses,
            ChatOptions(temperature=0.5, max_output_tokens=77, instructions="Be brief.", model="gpt-other"),
            {
                "model": "gpt-other",
                "temperature": 0.5,
                "max_output_tokens": 77,
                "instructions": "Be brief.",
                "input": HISTORY,
            },
            id="openai_responses",
        ),
    ],
)
async def test_options_become_request_fields(
    make: Callable[..., RemoteChatClient], options: ChatOptions, fields: dict[str, Any]
) -> None:
    async with scripted(make, Round(parts=[ScriptText(chunks=["x"])])) as (server, client):
        await collect(client, [system("You are hive."), user("hi")], options)
        body = server.requests[0].body
    assert {name: body[name] for name in fields} == fields


@pytest.mark.parametrize(
    ("make", "before"),
    [
        pytest.param(openai_chat, [], id="openai_chat"),
        pytest.param(
            openai_responses,
            [ScriptThinking(chunks=["Both."], signature="enc"), ScriptText(chunks=["Reading."])],
            id="openai_responses-after-thinking-and-text",
        ),
    ],
)
async def test_parallel_tool_calls_are_indexed_among_calls(
    make: Callable[..., RemoteChatClient], before: list[ScriptPart]
) -> None:
    round_ = Round(
        parts=[
            *before,
            ScriptToolCall(id="call_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
            ScriptToolCall(id="call_b", name="write_file", arguments=['{"path": "b', '.txt"}']),
        ]
    )
    async with scripted(make, round_) as (_, client):
        updates = await collect(client, options=ChatOptions(tools=[READ, WRITE]))
    assert assembled(updates) == {
        0: ("call_a", "read_file", '{"path": "a.txt"}'),
        1: ("call_b", "write_file", '{"path": "b.txt"}'),
    }
    texts = [TextUpdate(part.chunks[0]) for part in before if isinstance(part, ScriptText)]
    assert [u for u in updates if isinstance(u, TextUpdate)] == texts
    assert updates[-1] == FinishUpdate("tool_calls", client.model)


# -- from_settings: Anthropic and Gemini ---------------------------------------------------------------------

FROM_SETTINGS = [
    pytest.param(anthropic_from_settings, "anthropic", "claude-x", id="anthropic"),
    pytest.param(google_from_settings, "google", "gemini-x", id="google"),
]
"""Each adapter's ``from_settings``, its provider and a model name."""


GATEWAYS: dict[str, tuple[str, str, int]] = {
    "anthropic": ("https://gateway.example.test/v1/", "https://gateway.example.test", 300_000),
    "google": ("https://gateway.example.test/", "https://gateway.example.test/v1beta", 200_000),
}
"""Per provider: a gateway's endpoint, the base URL its client makes of it, and a context length."""


@pytest.mark.parametrize(("build", "provider", "model"), FROM_SETTINGS)
def test_from_settings_builds_a_client(
    build: Callable[[ProviderSettings], RemoteChatClient], provider: str, model: str
) -> None:
    endpoint, base_url, window = GATEWAYS[provider]
    settings = ProviderSettings(
        provider=provider,
        model=model,
        api_key="k",
        endpoint=endpoint,
        context_length=window,
        idle_timeout=30.0,
    )
    client = build(settings)
    assert (client.model, client.api_key, client.base_url) == (model, "k", base_url)
    assert (client.capabilities.context_window, client.idle_timeout) == (window, 30.0)


@pytest.mark.parametrize(("build", "provider", "model"), FROM_SETTINGS)
@pytest.mark.parametrize("missing", ["api_key", "model"])
def test_from_settings_names_what_is_missing(
    build: Callable[[ProviderSettings], RemoteChatClient], provider: str, model: str, missing: str
) -> None:
    given = {"model": model, "api_key": "k"}
    del given[missing]
    with pytest.raises(ValueError, match=f"'{missing}'"):
        build(ProviderSettings(provider=provider, **given))
