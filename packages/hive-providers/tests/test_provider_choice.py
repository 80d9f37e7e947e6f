"""Providers as users expect: ``OPENAI_BASE_URL``, ``openai.api`` (Responses for the OpenAI service, Chat
Completions elsewhere), the provider inferred from ``-m``, short model aliases, the default model of a key
without one, half-configured providers named in errors, and connection errors naming the URL."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from providers_harness import anthropic
from providers_harness import closed_port
from providers_harness import collect
from providers_harness import configuration
from providers_harness import google
from providers_harness import openai_chat
from providers_harness import openai_responses

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_core import AsyncClosable
from hive_core import ChatError
from hive_core import TextUpdate
from hive_core.config import ConfigError
from hive_providers.anthropic import AnthropicChatClient
from hive_providers.catalog import DEFAULT_MODELS
from hive_providers.catalog import MODEL_ALIASES
from hive_providers.catalog import catalog_window
from hive_providers.catalog import resolve_model
from hive_providers.google import GoogleChatClient
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.openai_responses import OpenAIResponsesChatClient
from hive_providers.registry import ProviderSelectionError
from hive_providers.registry import choose_provider
from hive_providers.registry import create_client
from hive_providers.registry import select_provider

KEYS = {
    "OPENAI_API_KEY": "sk-test",
    "ANTHROPIC_API_KEY": "sk-ant",
    "GOOGLEAI_API_KEY": "g-key",
    "XAI_API_KEY": "xai-key",
}


# -- OPENAI_BASE_URL ------------------------------------------------------------------------------------------


def test_openai_base_url_sets_the_endpoint(tmp_path: Path) -> None:
    env = {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert select_provider(configuration(tmp_path, env)).endpoint == "http://127.0.0.1:9/v1"


def test_openai_endpoint_wins_over_openai_base_url(tmp_path: Path) -> None:
    env = {
        "OPENAI_API_KEY": "k",
        "OPENAI_MODEL": "m",
        "OPENAI_BASE_URL": "http://base.test/v1",
        "OPENAI_ENDPOINT": "http://ep.test/v1",
    }
    assert select_provider(configuration(tmp_path, env)).endpoint == "http://ep.test/v1"


# -- openai.api -----------------------------------------------------------------------------------------------

ONE = Round(parts=[ScriptText(chunks=["Hello", " there"])])


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("text", "env", "path"),
    [
        # Any base URL other than the OpenAI service: Chat Completions, and no key is needed.
        ("", {"OPENAI_MODEL": "qwen3"}, "/v1/chat/completions"),
        ("openai:\n  api: chat\n", {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}, "/v1/chat/completions"),
        ("openai:\n  api: responses\n", {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}, "/v1/responses"),
        ("", {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m", "OPENAI_API": "responses"}, "/v1/responses"),
    ],
)
async def test_the_openai_provider_speaks_the_api_its_endpoint_expects(
    tmp_path: Path, text: str, env: dict[str, str], path: str
) -> None:
    async with ScriptedModelServer([ONE]) as server:
        config = configuration(tmp_path, {**env, "OPENAI_BASE_URL": server.url + "/v1"}, text)
        settings = select_provider(config)
        assert settings.provider == "openai"
        client = create_client(settings)
        try:
            updates = await collect(client)
        finally:
            if isinstance(client, AsyncClosable):
                await client.aclose()
        server.assert_consumed()
        [request] = server.requests
    assert request.path == path
    assert [u for u in updates if isinstance(u, TextUpdate)] == [TextUpdate("Hello"), TextUpdate(" there")]


def test_the_openai_service_speaks_responses_unless_told_chat(tmp_path: Path) -> None:
    default = create_client(select_provider(configuration(tmp_path, {"OPENAI_API_KEY": "k"})))
    assert isinstance(default, OpenAIResponsesChatClient)
    env = {"OPENAI_API_KEY": "k", "OPENAI_ENDPOINT": "https://api.openai.com/v1", "OPENAI_API": "chat"}
    chat = create_client(select_provider(configuration(tmp_path, env)))
    assert isinstance(chat, OpenAIChatClient)
    assert chat.api_key == "k"


def test_an_unknown_api_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="api"):
        configuration(tmp_path, text="openai:\n  apiKey: k\n  api: completions\n")


# -- -m: the provider inferred, aliases resolved --------------------------------------------------------------


PROVIDER_OF: dict[str, str] = {
    "gpt-4o-mini": "openai",
    "o3-mini": "openai",
    "o1": "openai",
    "o4-mini": "openai",
    "claude-opus-4-1": "anthropic",
    "gemini-2.5-pro": "google",
    "grok-4-fast": "xai",
}
"""Model names whose provider the name tells, and that provider."""


@pytest.mark.parametrize(("model", "provider"), list(PROVIDER_OF.items()))
def test_the_model_name_picks_its_provider(tmp_path: Path, model: str, provider: str) -> None:
    choice = choose_provider(configuration(tmp_path, KEYS), model=model)
    assert (choice.settings.provider, choice.settings.model) == (provider, model)
    assert choice.notices == ()


@pytest.mark.parametrize(("alias", "name"), [("sonnet", "sonnet"), ("Opus", "opus"), ("haiku", "haiku")])
def test_an_alias_picks_anthropic_and_the_model_it_stands_for(tmp_path: Path, alias: str, name: str) -> None:
    choice = choose_provider(configuration(tmp_path, KEYS), model=alias)
    assert (choice.settings.provider, choice.settings.model) == ("anthropic", MODEL_ALIASES[name][1])
    assert choice.notices == ()


@pytest.mark.parametrize("model", ["llama3.2", "gpt-oss:20b", "openai/gpt-4o", "omni-1", "qwen3"])
def test_other_model_names_go_to_the_default_provider(tmp_path: Path, model: str) -> None:
    assert resolve_model(model) == (None, model)
    env = {"OLLAMA_ENABLED": "true", "ANTHROPIC_API_KEY": "k"}
    settings = choose_provider(
        configuration(tmp_path, env, "defaultProvider: ollama\n"), model=model
    ).settings
    assert (settings.provider, settings.model) == ("ollama", model)


def test_provider_given_wins_over_the_model_name(tmp_path: Path) -> None:
    settings = choose_provider(configuration(tmp_path, KEYS), "openai", "claude-sonnet-4-5").settings
    assert (settings.provider, settings.model) == ("openai", "claude-sonnet-4-5")


def test_a_model_of_a_provider_without_its_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        choose_provider(configuration(tmp_path, {"OPENAI_API_KEY": "k"}), model="claude-sonnet-4-5")
    message = str(caught.value)
    assert "Anthropic" in message
    assert "ANTHROPIC_API_KEY" in message
    assert "--provider" in message


def test_the_default_provider_takes_a_model_whose_provider_is_not_set_up(tmp_path: Path) -> None:
    # LiteLLM behind OPENAI_ENDPOINT serves Claude models under their own names.
    env = {"OPENAI_ENDPOINT": "http://litellm.test/v1", "OPENAI_API_KEY": "k"}
    config = configuration(tmp_path, env, "defaultProvider: openai\n")
    settings = choose_provider(config, model="claude-sonnet-4-5").settings
    assert (settings.provider, settings.model, settings.endpoint) == (
        "openai",
        "claude-sonnet-4-5",
        "http://litellm.test/v1",
    )


# -- a key without a model ------------------------------------------------------------------------------------


VARIABLES: dict[str, tuple[str, str]] = {
    "openai": ("OPENAI_API_KEY", "OPENAI_MODEL"),
    "anthropic": ("ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"),
    "google": ("GOOGLE_API_KEY", "GOOGLEAI_MODEL"),
    "xai": ("XAI_API_KEY", "XAI_MODEL"),
}
"""Per provider, the variable of its key and the one of its model."""


@pytest.mark.parametrize("provider", list(VARIABLES))
def test_a_key_without_a_model_uses_the_current_default_and_says_so(tmp_path: Path, provider: str) -> None:
    variable, model_variable = VARIABLES[provider]
    choice = choose_provider(configuration(tmp_path, {variable: "k"}))
    assert (choice.settings.provider, choice.settings.model) == (provider, DEFAULT_MODELS[provider])
    [notice] = choice.notices
    assert DEFAULT_MODELS[provider] in notice
    assert model_variable in notice


def test_a_configured_model_is_not_announced(tmp_path: Path) -> None:
    choice = choose_provider(configuration(tmp_path, {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "gpt-4o"}))
    assert (choice.settings.model, choice.notices) == ("gpt-4o", ())


# -- half-configured providers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "named", "unnamed"),
    [
        ({"AZURE_OPENAI_API_KEY": "k"}, ["AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_DEPLOYMENT"], []),
        (
            {"AZURE_OPENAI_API_KEY": "k", "AZURE_OPENAI_DEPLOYMENT": "d"},
            ["AZURE_OPENAI_ENDPOINT"],
            ["AZURE_OPENAI_DEPLOYMENT"],
        ),
        ({"GPUSTACK_ENDPOINT": "http://g.test"}, ["GPUSTACK_API_KEY", "GPUSTACK_MODEL"], []),
        # The OpenAI service needs a key; a model alone does not make it.
        ({"OPENAI_MODEL": "gpt-4o"}, ["OPENAI_API_KEY"], ["OPENAI_MODEL"]),
        # Another server needs a model (hive does not know its models), not a key.
        ({"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}, ["OPENAI_MODEL"], ["OPENAI_API_KEY"]),
        ({"ANTHROPIC_MODEL": "claude-sonnet-4-5"}, ["ANTHROPIC_API_KEY"], []),
    ],
)
def test_a_half_configured_provider_is_an_error_naming_what_is_missing(
    tmp_path: Path, env: dict[str, str], named: list[str], unnamed: list[str]
) -> None:
    # Local inference is on: the error is instead of silently falling back to it.
    with pytest.raises(ProviderSelectionError) as caught:
        choose_provider(configuration(tmp_path, env))
    message = str(caught.value)
    assert "half-configured" in message
    for variable in named:
        assert variable in message
    for variable in unnamed:
        assert variable not in message


def test_a_named_half_configured_provider_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        select_provider(configuration(tmp_path, {"AZURE_OPENAI_API_KEY": "k"}), "azure")
    assert "half-configured" in str(caught.value)
    assert "AZURE_OPENAI_ENDPOINT" in str(caught.value)


def test_a_half_configured_provider_passed_over_is_a_notice(tmp_path: Path) -> None:
    # Azure comes after Anthropic in priority; GPUStack comes before it.
    env = {"GPUSTACK_API_KEY": "k", "ANTHROPIC_API_KEY": "a", "ANTHROPIC_MODEL": "claude-haiku-4-5"}
    choice = choose_provider(configuration(tmp_path, env))
    assert choice.settings.provider == "anthropic"
    [notice] = choice.notices
    assert "GPUStack" in notice
    assert "GPUSTACK_ENDPOINT" in notice
    assert "using anthropic" in notice


def test_an_openai_compatible_server_without_a_key_is_configured(tmp_path: Path) -> None:
    env = {"OPENAI_ENDPOINT": "http://127.0.0.1:8080/v1", "OPENAI_MODEL": "qwen3"}
    choice = choose_provider(configuration(tmp_path, env))
    assert (choice.settings.provider, choice.settings.model, choice.notices) == ("openai", "qwen3", ())


def test_model_from_the_command_line_completes_an_openai_compatible_server(tmp_path: Path) -> None:
    config = configuration(tmp_path, {"OPENAI_ENDPOINT": "http://127.0.0.1:8080/v1"})
    settings = choose_provider(config, model="qwen3").settings
    assert (settings.provider, settings.model) == ("openai", "qwen3")


# -- connection errors ----------------------------------------------------------------------------------------


def _anthropic(url: str) -> AnthropicChatClient:
    return anthropic(url, max_retries=0)


def _google(url: str) -> GoogleChatClient:
    return google(url, max_retries=0)


@pytest.mark.anyio
@pytest.mark.parametrize("make", [openai_chat, openai_responses, _anthropic, _google])
async def test_a_connection_error_names_the_url(
    make: Callable[
        [str], OpenAIChatClient | OpenAIResponsesChatClient | AnthropicChatClient | GoogleChatClient
    ],
) -> None:
    port = closed_port()
    client = make(f"http://127.0.0.1:{port}")
    with anyio.fail_after(10), pytest.raises(ChatError) as caught:
        await collect(client)
    await client.aclose()
    assert caught.value.code == "network"
    assert f"http://127.0.0.1:{port}/v" in str(caught.value)


def test_every_alias_and_default_model_is_a_model_the_catalog_knows() -> None:
    models = [model for _, model in MODEL_ALIASES.values()] + list(DEFAULT_MODELS.values())
    assert all(catalog_window(model) is not None for model in models), models
    for provider, model in [*MODEL_ALIASES.values(), *DEFAULT_MODELS.items()]:
        assert resolve_model(model)[0] == provider
