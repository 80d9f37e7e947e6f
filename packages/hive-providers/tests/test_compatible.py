"""The OpenAI-compatible family through the real ``openai`` SDK against the scripted model server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
import pytest
from providers_harness import READ
from providers_harness import collect

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import FinishUpdate
from hive_core import TextUpdate
from hive_core import ThinkingUpdate
from hive_core import ToolCallUpdate
from hive_core import UsageUpdate
from hive_providers import PROVIDERS
from hive_providers import ProviderSettings
from hive_providers.compatible import AZURE_API_VERSION
from hive_providers.compatible import from_settings

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Case:
    settings: Callable[[str], ProviderSettings]
    """Settings for a server at the given base URL."""
    path: str
    """Where the chat requests must go."""
    auth: tuple[str, str]
    """The header that must carry the key."""
    max_tokens_field: str
    effort_medium: str | None
    """How ``medium`` reasoning effort is sent (``None``: not at all)."""


CASES: dict[str, Case] = {
    "azure": Case(
        lambda url: ProviderSettings(provider="azure", endpoint=url, api_key="az-key", model="my-deploy"),
        "/openai/deployments/my-deploy/chat/completions",
        ("api-key", "az-key"),
        "max_completion_tokens",
        "medium",
    ),
    "xai": Case(
        lambda url: ProviderSettings(
            provider="xai", endpoint=url + "/v1", api_key="xai-key", model="grok-3-mini"
        ),
        "/v1/chat/completions",
        ("authorization", "Bearer xai-key"),
        "max_completion_tokens",
        "high",
    ),
    "ollama": Case(
        lambda url: ProviderSettings(provider="ollama", endpoint=url, model="qwen3"),
        "/v1/chat/completions",
        ("authorization", "Bearer ollama"),
        "max_tokens",
        "medium",
    ),
    "lmstudio": Case(
        lambda url: ProviderSettings(provider="lmstudio", endpoint=url + "/v1", model="local-model"),
        "/v1/chat/completions",
        ("authorization", "Bearer lm-studio"),
        "max_tokens",
        "medium",
    ),
    "gpustack": Case(
        lambda url: ProviderSettings(
            provider="gpustack", endpoint=url + "/v1", api_key="gs-key", model="qwen"
        ),
        "/v1-openai/chat/completions",
        ("authorization", "Bearer gs-key"),
        "max_tokens",
        "medium",
    ),
}

FULL = Round(
    parts=[
        ScriptThinking(chunks=["Let me ", "look."]),
        ScriptText(chunks=["Reading."]),
        ScriptToolCall(id="call_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
        ScriptToolCall(id="call_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
    ],
    usage=Usage(input_tokens=20, output_tokens=6),
)


@pytest.mark.parametrize("name", list(CASES))
async def test_each_provider_streams_through_its_endpoint(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    case = CASES[name]
    options = ChatOptions(tools=[READ], max_output_tokens=100, reasoning_effort="medium")
    async with ScriptedModelServer([FULL]) as server:
        async with from_settings(case.settings(server.url)) as client:
            assert client.provider == name
            updates = await collect(client, options=options)
        server.assert_consumed()
        request = server.requests[0]
    assert request.path == case.path
    assert request.headers.get(case.auth[0]) == case.auth[1]
    assert "sk-must-not-leak" not in str(request.headers)
    body = request.body
    assert body[case.max_tokens_field] == 100
    assert body.get("reasoning_effort") == case.effort_medium
    assert body["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in body["tools"]] == ["read_file"]

    assert updates[:3] == [ThinkingUpdate("Let me "), ThinkingUpdate("look."), TextUpdate("Reading.")]
    calls: dict[int, str] = {}
    for update in updates:
        if isinstance(update, ToolCallUpdate):
            calls[update.index] = calls.get(update.index, "") + update.arguments
    assert calls == {0: '{"path": "a.txt"}', 1: '{"path": "b.txt"}'}
    assert updates[-2:] == [UsageUpdate(20, 6, 0), FinishUpdate("tool_calls", client.model)]


async def test_azure_sends_the_api_version_and_takes_another() -> None:
    rounds = [Round(parts=[ScriptText(chunks=["a"])]), Round(parts=[ScriptText(chunks=["b"])])]
    async with ScriptedModelServer(rounds) as server:
        default = from_settings(
            ProviderSettings(provider="azure", endpoint=server.url + "/", api_key="k", model="d")
        )
        other = from_settings(
            ProviderSettings(
                provider="azure",
                endpoint=server.url + "/openai",
                api_key="k",
                model="d",
                api_version="2025-04-01-preview",
            )
        )
        async with default, other:
            await collect(default)
            await collect(other)
        first, second = server.requests
    assert (first.path, first.query.get("api-version")) == (
        "/openai/deployments/d/chat/completions",
        AZURE_API_VERSION,
    )
    assert (second.path, second.query.get("api-version")) == (
        "/openai/deployments/d/chat/completions",
        "2025-04-01-preview",
    )


@pytest.mark.parametrize("endpoint", ["", "/v1", "/v1/", "/v1-openai", "/v1-openai/"])
async def test_gpustack_always_talks_to_v1_openai(endpoint: str) -> None:
    async with ScriptedModelServer([Round(parts=[ScriptText(chunks=["x"])])]) as server:
        settings = ProviderSettings(
            provider="gpustack", endpoint=server.url + endpoint, api_key="k", model="m"
        )
        async with from_settings(settings) as client:
            await collect(client)
        assert server.requests[0].path == "/v1-openai/chat/completions"


async def test_a_failure_names_the_provider() -> None:
    async with ScriptedModelServer([Round(failure=HttpFailure(status=401))]) as server:
        settings = ProviderSettings(provider="xai", endpoint=server.url + "/v1", api_key="bad", model="grok")
        async with from_settings(settings) as client:
            with anyio.fail_after(10), pytest.raises(ChatError) as caught:
                await collect(client)
    assert caught.value.code == "auth"
    assert str(caught.value).startswith("xai: HTTP 401")


def test_default_endpoints() -> None:
    # The endpoints used when none is configured: the defaults of the table's endpoint keys. An Ollama
    # endpoint is the server's root; the client adds /v1 (test_unset_endpoints_take_the_defaults).
    assert {spec.name: spec.default_endpoint for spec in PROVIDERS} == {
        "gpustack": None,
        "openai": "https://api.openai.com/v1",
        "anthropic": None,
        "google": None,
        "azure": None,
        "xai": "https://api.x.ai/v1",
        "ollama": "http://localhost:11434",
        "lmstudio": "http://localhost:1234/v1",
        "local": None,
    }


@pytest.mark.parametrize(
    ("settings", "base_url"),
    [
        (ProviderSettings(provider="xai", api_key="k", model="grok-4"), "https://api.x.ai/v1/"),
        (ProviderSettings(provider="ollama", model="llama3.2"), "http://localhost:11434/v1/"),
        (
            ProviderSettings(provider="ollama", model="llama3.2", endpoint="http://gpu-box:11434/"),
            "http://gpu-box:11434/v1/",
        ),
        (ProviderSettings(provider="lmstudio", model="m"), "http://localhost:1234/v1/"),
    ],
)
def test_unset_endpoints_take_the_defaults(settings: ProviderSettings, base_url: str) -> None:
    assert str(from_settings(settings).sdk().base_url) == base_url


COMPLETE: dict[str, dict[str, str]] = {
    "azure": {"endpoint": "https://r", "api_key": "k", "model": "d"},
    "xai": {"api_key": "k", "model": "grok"},
    "gpustack": {"endpoint": "http://h", "api_key": "k", "model": "m"},
}
"""Per provider, settings it takes without complaint: each test leaves one out."""


NAMED: dict[tuple[str, str], str] = {
    ("azure", "endpoint"): "'endpoint'.*AZURE_OPENAI_ENDPOINT",
    ("azure", "api_key"): "'api_key'.*AZURE_OPENAI_API_KEY",
    ("azure", "model"): "'model'.*AZURE_OPENAI_DEPLOYMENT.*deploymentName",
    ("xai", "api_key"): "'api_key'.*XAI_API_KEY",
    ("xai", "model"): "'model'.*XAI_MODEL",
    ("gpustack", "endpoint"): "'endpoint'.*GPUSTACK_ENDPOINT",
    ("gpustack", "api_key"): "'api_key'.*GPUSTACK",
    ("gpustack", "model"): "'model'.*GPUSTACK",
}
"""Per provider and setting left out of :data:`COMPLETE`, what the error says (the setting and its variable)."""


@pytest.mark.parametrize(("case", "missing"), list(NAMED.items()), ids=["-".join(case) for case in NAMED])
def test_a_setting_left_out_is_named(case: tuple[str, str], missing: str) -> None:
    provider, left_out = case
    given = {name: value for name, value in COMPLETE[provider].items() if name != left_out}
    with pytest.raises(ValueError, match=missing):
        from_settings(ProviderSettings(provider=provider, **given))


@pytest.mark.parametrize(
    ("settings", "missing"),
    [
        (ProviderSettings(provider="ollama"), "'model'.*OLLAMA_MODEL"),
        (ProviderSettings(provider="lmstudio", model="  "), "'model'.*LMSTUDIO_MODEL"),
    ],
)
def test_a_missing_or_blank_model_is_named(settings: ProviderSettings, missing: str) -> None:
    with pytest.raises(ValueError, match=missing):
        from_settings(settings)


def test_a_configured_context_length_is_the_window() -> None:
    client = from_settings(ProviderSettings(provider="ollama", model="m", context_length=8192))
    assert client.capabilities.context_window == 8192
