"""The OpenAI-compatible family through the real ``openai`` SDK against the scripted model server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio
import pytest

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure, Round, TextPart, ThinkingPart, ToolCallPart, Usage
from hive_core import (
    ChatError,
    ChatOptions,
    ChatUpdate,
    FinishUpdate,
    TextUpdate,
    ThinkingUpdate,
    ToolCallUpdate,
    ToolSpec,
    UsageUpdate,
)
from hive_core.messages import user
from hive_providers import ProviderSettings
from hive_providers.compatible import (
    AZURE_API_VERSION,
    CONFIGS,
    DEFAULTS,
    FACTORIES,
    azure,
    configured,
    gpustack,
    lmstudio,
    ollama,
    xai,
)
from hive_providers.openai_chat import OpenAIChatClient

pytestmark = pytest.mark.anyio

READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


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
        lambda url: ProviderSettings(
            provider="ollama", endpoint=url, model="qwen3", options={"enabled": "true"}
        ),
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
        ThinkingPart(chunks=["Let me ", "look."]),
        TextPart(chunks=["Reading."]),
        ToolCallPart(id="call_a", name="read_file", arguments=['{"path": ', '"a.txt"}']),
        ToolCallPart(id="call_b", name="read_file", arguments=['{"path": "b', '.txt"}']),
    ],
    usage=Usage(input_tokens=20, output_tokens=6),
)


async def collect(client: OpenAIChatClient, options: ChatOptions) -> list[ChatUpdate]:
    with anyio.fail_after(10):
        return [update async for update in client.stream([user("hi")], options)]


@pytest.mark.parametrize("name", list(CASES))
async def test_each_provider_streams_through_its_endpoint(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    case = CASES[name]
    options = ChatOptions(tools=[READ], max_output_tokens=100, reasoning_effort="medium")
    async with ScriptedModelServer([FULL]) as server:
        async with FACTORIES[name](case.settings(server.url)) as client:
            assert client.provider == name
            updates = await collect(client, options)
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
    assert updates[-2:] == [UsageUpdate(20, 6, 0), FinishUpdate("tool_calls")]


async def test_azure_sends_the_api_version_and_takes_another() -> None:
    rounds = [Round(parts=[TextPart(chunks=["a"])]), Round(parts=[TextPart(chunks=["b"])])]
    async with ScriptedModelServer(rounds) as server:
        default = azure(ProviderSettings(provider="azure", endpoint=server.url + "/", api_key="k", model="d"))
        other = azure(
            ProviderSettings(
                provider="azure",
                endpoint=server.url + "/openai",
                api_key="k",
                model="d",
                options={"api_version": "2025-04-01-preview"},
            )
        )
        async with default, other:
            await collect(default, ChatOptions())
            await collect(other, ChatOptions())
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
    async with ScriptedModelServer([Round(parts=[TextPart(chunks=["x"])])]) as server:
        settings = ProviderSettings(
            provider="gpustack", endpoint=server.url + endpoint, api_key="k", model="m"
        )
        async with gpustack(settings) as client:
            await collect(client, ChatOptions())
        assert server.requests[0].path == "/v1-openai/chat/completions"


async def test_a_failure_names_the_provider() -> None:
    async with ScriptedModelServer([Round(failure=HttpFailure(status=401))]) as server:
        settings = ProviderSettings(provider="xai", endpoint=server.url + "/v1", api_key="bad", model="grok")
        async with xai(settings) as client:
            with anyio.fail_after(10), pytest.raises(ChatError) as caught:
                await collect(client, ChatOptions())
    assert caught.value.code == "auth"
    assert str(caught.value).startswith("xai: HTTP 401")


def test_default_endpoints() -> None:
    assert DEFAULTS == {
        "openai": "https://api.openai.com/v1",
        "azure": None,
        "xai": "https://api.x.ai/v1",
        "ollama": "http://localhost:11434/v1",
        "lmstudio": "http://localhost:1234/v1",
        "gpustack": None,
    }


@pytest.mark.parametrize(
    ("factory", "settings", "base_url"),
    [
        (xai, ProviderSettings(provider="xai", api_key="k", model="grok-4"), "https://api.x.ai/v1/"),
        (ollama, ProviderSettings(provider="ollama", model="llama3.2"), "http://localhost:11434/v1/"),
        (
            ollama,
            ProviderSettings(provider="ollama", model="llama3.2", endpoint="http://gpu-box:11434/"),
            "http://gpu-box:11434/v1/",
        ),
        (lmstudio, ProviderSettings(provider="lmstudio", model="m"), "http://localhost:1234/v1/"),
    ],
)
def test_unset_endpoints_take_the_defaults(
    factory: Callable[[ProviderSettings], OpenAIChatClient], settings: ProviderSettings, base_url: str
) -> None:
    assert str(factory(settings).sdk().base_url) == base_url


@pytest.mark.parametrize(
    ("factory", "settings", "missing"),
    [
        (
            azure,
            ProviderSettings(provider="azure", api_key="k", model="d"),
            "'endpoint'.*AZURE_OPENAI_ENDPOINT",
        ),
        (
            azure,
            ProviderSettings(provider="azure", endpoint="https://r", model="d"),
            "'api_key'.*AZURE_OPENAI_API_KEY",
        ),
        (
            azure,
            ProviderSettings(provider="azure", endpoint="https://r", api_key="k"),
            "'model'.*AZURE_OPENAI_DEPLOYMENT.*deploymentName",
        ),
        (xai, ProviderSettings(provider="xai", model="grok"), "'api_key'.*XAI_API_KEY"),
        (xai, ProviderSettings(provider="xai", api_key="k"), "'model'.*XAI_MODEL"),
        (ollama, ProviderSettings(provider="ollama", options={"enabled": "true"}), "'model'.*OLLAMA_MODEL"),
        (lmstudio, ProviderSettings(provider="lmstudio", model="  "), "'model'.*LMSTUDIO_MODEL"),
        (
            gpustack,
            ProviderSettings(provider="gpustack", api_key="k", model="m"),
            "'endpoint'.*GPUSTACK_ENDPOINT",
        ),
        (
            gpustack,
            ProviderSettings(provider="gpustack", endpoint="http://h", model="m"),
            "'api_key'.*GPUSTACK",
        ),
        (
            gpustack,
            ProviderSettings(provider="gpustack", endpoint="http://h", api_key="k"),
            "'model'.*GPUSTACK",
        ),
    ],
)
def test_a_missing_setting_is_named(
    factory: Callable[[ProviderSettings], OpenAIChatClient], settings: ProviderSettings, missing: str
) -> None:
    with pytest.raises(ValueError, match=missing):
        factory(settings)


def test_a_malformed_context_length_is_named() -> None:
    settings = ProviderSettings(provider="ollama", model="m", options={"context_length": "lots"})
    with pytest.raises(ValueError, match="context_length"):
        ollama(settings)
    assert (
        ollama(
            ProviderSettings(provider="ollama", model="m", options={"context_length": "8192"})
        ).context_window
        == 8192
    )


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        (ProviderSettings(provider="openai", api_key="k", model="m"), True),
        (ProviderSettings(provider="openai", api_key="k"), False),
        (ProviderSettings(provider="azure", endpoint="https://r", api_key="k", model="d"), True),
        (ProviderSettings(provider="azure", endpoint="https://r", api_key="k"), False),
        (ProviderSettings(provider="xai", api_key="k", model="grok"), True),
        (ProviderSettings(provider="xai", model="grok"), False),
        (ProviderSettings(provider="gpustack", endpoint="http://h", api_key="k", model="m"), True),
        (ProviderSettings(provider="gpustack", endpoint="http://h", model="m"), False),
        (ProviderSettings(provider="ollama", options={"enabled": "true"}), True),
        (ProviderSettings(provider="ollama", options={"enabled": " TRUE "}), True),
        (ProviderSettings(provider="ollama", model="m", options={"enabled": "yes"}), False),
        (ProviderSettings(provider="ollama", model="m"), False),
        (ProviderSettings(provider="lmstudio", options={"enabled": "True"}), True),
        (ProviderSettings(provider="lmstudio", model="m", options={"enabled": "1"}), False),
        (ProviderSettings(provider="anthropic", api_key="k", model="m"), False),
    ],
)
def test_configured_follows_the_seed_rules(settings: ProviderSettings, expected: bool) -> None:
    assert configured(settings) is expected


def test_the_provider_table_names_the_seed_variables() -> None:
    variables = {spec.name: set(spec.variables.values()) for spec in CONFIGS.values()}
    assert variables == {
        "openai": {"OPENAI_API_KEY", "OPENAI_MODEL", "OPENAI_ENDPOINT"},
        "azure": {"AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_DEPLOYMENT"},
        "xai": {"XAI_API_KEY", "XAI_MODEL", "XAI_ENDPOINT"},
        "ollama": {"OLLAMA_ENDPOINT", "OLLAMA_MODEL", "OLLAMA_ENABLED"},
        "lmstudio": {"LMSTUDIO_ENDPOINT", "LMSTUDIO_MODEL", "LMSTUDIO_ENABLED"},
        "gpustack": {"GPUSTACK_ENDPOINT", "GPUSTACK_API_KEY", "GPUSTACK_MODEL"},
    }
    assert {spec.name: spec.section for spec in CONFIGS.values()} == {
        "openai": "openai",
        "azure": "azureopenai",
        "xai": "xai",
        "ollama": "ollama",
        "lmstudio": "lmstudio",
        "gpustack": "gpuStack",
    }
    for spec in CONFIGS.values():
        assert set(spec.required) <= set(spec.variables)
        assert set(spec.keys) == set(spec.variables)
