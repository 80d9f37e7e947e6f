"""The provider registry: names and aliases, where settings come from, when a provider counts as configured,
the default priority with local inference last, the errors, client creation and lazy imports."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Mapping

import anyio
import pytest

from hive_core import ChatClient
from hive_providers import ProviderSettings
from hive_providers.local import LocalChatClient, default_model_path
from hive_providers.registry import (
    PROVIDERS,
    ProviderSelectionError,
    UnknownProviderError,
    configured_providers,
    create_client,
    is_configured,
    list_models,
    parse_bool,
    provider_spec,
    resolve_settings,
    select_provider,
)

# Enough environment to configure every provider.
EVERYTHING: dict[str, str] = {
    "GPUSTACK_ENDPOINT": "http://gpustack.test/v1",
    "GPUSTACK_API_KEY": "gs-key",
    "GPUSTACK_MODEL": "qwen3",
    "OPENAI_API_KEY": "sk-test",
    "OPENAI_MODEL": "gpt-4o-mini",
    "ANTHROPIC_API_KEY": "sk-ant-test",
    "ANTHROPIC_MODEL": "claude-sonnet-4-5",
    "GOOGLEAI_API_KEY": "g-key",
    "GOOGLEAI_MODEL": "gemini-2.5-flash",
    "AZURE_OPENAI_ENDPOINT": "https://res.openai.azure.com",
    "AZURE_OPENAI_API_KEY": "az-key",
    "AZURE_OPENAI_DEPLOYMENT": "gpt4o-deploy",
    "XAI_API_KEY": "xai-key",
    "XAI_MODEL": "grok-4",
    "OLLAMA_ENABLED": "true",
    "OLLAMA_MODEL": "llama3.2",
    "LMSTUDIO_ENABLED": "true",
    "LMSTUDIO_MODEL": "qwen2.5",
}
PRIORITY = ["gpustack", "openai", "anthropic", "google", "azure", "xai", "ollama", "lmstudio", "local"]
PREFIX = {
    "gpustack": "GPUSTACK_",
    "openai": "OPENAI_",
    "anthropic": "ANTHROPIC_",
    "google": "GOOGLEAI_",
    "azure": "AZURE_OPENAI_",
    "xai": "XAI_",
    "ollama": "OLLAMA_",
    "lmstudio": "LMSTUDIO_",
}


def without(*providers: str) -> dict[str, str]:
    prefixes = tuple(PREFIX[p] for p in providers)
    return {k: v for k, v in EVERYTHING.items() if not k.startswith(prefixes)}


def test_the_table_is_in_the_seeds_priority_order() -> None:
    assert [spec.name for spec in PROVIDERS] == PRIORITY
    assert [s.provider for s in configured_providers({}, EVERYTHING)] == PRIORITY


@pytest.mark.parametrize("index", range(len(PRIORITY) - 1))
def test_the_default_is_the_first_configured_by_priority(index: int) -> None:
    env = without(*PRIORITY[:index])
    assert select_provider(env=env).provider == PRIORITY[index]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("claude", "anthropic"),
        ("Claude", "anthropic"),
        ("gemini", "google"),
        ("googleai", "google"),
        ("grok", "xai"),
        ("lmsupply", "local"),
        ("LMSupply", "local"),
        ("azureopenai", "azure"),
        ("OpenAI", "openai"),
        (" gpustack ", "gpustack"),
    ],
)
def test_aliases_and_any_case_name_the_canonical_provider(name: str, canonical: str) -> None:
    assert provider_spec(name).name == canonical
    assert select_provider(name, env=EVERYTHING).provider == canonical


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(UnknownProviderError) as caught:
        select_provider("mistral", env=EVERYTHING)
    message = str(caught.value)
    assert "'mistral'" in message
    for spec in PROVIDERS:
        assert spec.name in message
    assert "anthropic (claude)" in message
    assert "local (lmsupply)" in message


@pytest.mark.parametrize(
    ("provider", "env", "configured"),
    [
        ("openai", {"OPENAI_API_KEY": "k", "OPENAI_MODEL": "m"}, True),
        ("openai", {"OPENAI_API_KEY": "k"}, False),
        ("openai", {"OPENAI_MODEL": "m"}, False),
        ("anthropic", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "m"}, True),
        ("anthropic", {"ANTHROPIC_API_KEY": "k"}, False),
        ("google", {"GOOGLEAI_API_KEY": "k", "GOOGLEAI_MODEL": "m"}, True),
        ("google", {"GOOGLE_API_KEY": "k", "GOOGLEAI_MODEL": "m"}, True),
        ("google", {"GOOGLE_API_KEY": "k"}, False),
        ("xai", {"XAI_API_KEY": "k", "XAI_MODEL": "m"}, True),
        ("xai", {"XAI_MODEL": "m", "XAI_ENDPOINT": "http://x"}, False),
        ("gpustack", {"GPUSTACK_ENDPOINT": "http://g", "GPUSTACK_API_KEY": "k", "GPUSTACK_MODEL": "m"}, True),
        ("gpustack", {"GPUSTACK_API_KEY": "k", "GPUSTACK_MODEL": "m"}, False),
        ("gpustack", {"GPUSTACK_ENDPOINT": "http://g", "GPUSTACK_MODEL": "m"}, False),
        (
            "azure",
            {
                "AZURE_OPENAI_ENDPOINT": "https://a",
                "AZURE_OPENAI_API_KEY": "k",
                "AZURE_OPENAI_DEPLOYMENT": "d",
            },
            True,
        ),
        ("azure", {"AZURE_OPENAI_ENDPOINT": "https://a", "AZURE_OPENAI_API_KEY": "k"}, False),
        ("ollama", {"OLLAMA_ENABLED": "true"}, True),
        ("ollama", {"OLLAMA_ENABLED": "TRUE"}, True),
        ("ollama", {"OLLAMA_MODEL": "llama3", "OLLAMA_ENDPOINT": "http://o"}, False),
        ("ollama", {"OLLAMA_ENABLED": "false"}, False),
        ("ollama", {"OLLAMA_ENABLED": "maybe"}, False),
        ("lmstudio", {"LMSTUDIO_ENABLED": "True"}, True),
        ("lmstudio", {"LMSTUDIO_MODEL": "m"}, False),
        ("local", {}, True),
        ("local", {"LMSUPPLY_ENABLED": "true"}, True),
        ("local", {"LMSUPPLY_ENABLED": "false"}, False),
        ("local", {"LMSUPPLY_ENABLED": "nonsense"}, False),
        ("local", {"LMSUPPLY_ENABLED": ""}, True),
    ],
)
def test_configured_when(provider: str, env: dict[str, str], configured: bool) -> None:
    settings = resolve_settings({}, env)[provider]
    assert is_configured(settings) is configured
    assert (provider in [s.provider for s in configured_providers({}, env)]) is configured


def test_nothing_configured_means_local_with_the_default_model() -> None:
    settings = select_provider(config={}, env={})
    assert settings.provider == "local"
    assert settings.model is None
    client = create_client(settings)
    assert isinstance(client, LocalChatClient)
    assert client.model_path == default_model_path()


@pytest.mark.parametrize(
    ("config", "env"),
    [
        ({}, {"LMSUPPLY_ENABLED": "false"}),
        ({"lmsupply": {"enabled": False}}, {}),
        ({"local": {"enabled": "false"}}, {}),
        # A provider half configured does not count.
        ({"openai": {"apiKey": "sk"}}, {"LMSUPPLY_ENABLED": "False"}),
    ],
)
def test_nothing_configured_and_local_off_is_a_clear_error(
    config: dict[str, object], env: dict[str, str]
) -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        select_provider(config=config, env=env)
    message = str(caught.value)
    for variable in (
        "OPENAI_API_KEY",
        "OPENAI_MODEL",
        "ANTHROPIC_API_KEY",
        "GPUSTACK_ENDPOINT",
        "OLLAMA_ENABLED",
    ):
        assert variable in message
    assert "GOOGLEAI_API_KEY or GOOGLE_API_KEY" in message
    assert "AZURE_OPENAI_DEPLOYMENT" in message
    assert "LMSUPPLY_ENABLED" in message


def test_the_environment_switches_local_back_on_over_the_config() -> None:
    settings = select_provider(config={"lmsupply": {"enabled": False}}, env={"LMSUPPLY_ENABLED": "true"})
    assert settings.provider == "local"


def test_local_is_available_by_name_even_when_it_is_not_the_fallback() -> None:
    assert select_provider("local", env={"LMSUPPLY_ENABLED": "false"}).provider == "local"
    assert select_provider("lmsupply", env={"LMSUPPLY_ENABLED": "false"}).provider == "local"


def test_a_named_provider_that_is_not_configured_says_what_to_set() -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        select_provider("claude", env={"ANTHROPIC_MODEL": "m"})
    assert not isinstance(caught.value, UnknownProviderError)
    assert "anthropic" in str(caught.value)
    assert "ANTHROPIC_API_KEY + ANTHROPIC_MODEL" in str(caught.value)
    with pytest.raises(ProviderSelectionError, match="OLLAMA_ENABLED=true"):
        select_provider("ollama", env={})


def test_seed_sections_and_camel_case_keys() -> None:
    config: dict[str, object] = {
        "gpuStack": {"endpoint": "http://g/v1", "apiKey": "gk", "model": "gm", "embeddingModel": "emb"},
        "openai": {
            "apiKey": "ok",
            "model": "om",
            "endpoint": "http://proxy/v1",
            "streamIdleTimeoutSeconds": 30,
        },
        "googleai": {"apiKey": "gk2", "model": "gemini-x"},
        "azureopenai": {
            "endpoint": "https://az",
            "apiKey": "ak",
            "deploymentName": "dep",
            "apiVersion": "2024-10-21",
        },
        "ollama": {"enabled": True, "endpoint": "http://o:11434", "model": "llama3", "carryToolImages": True},
        "lmsupply": {"enabled": True, "generatorModel": "/models/a.gguf", "maxContextLength": 4096},
    }
    resolved = resolve_settings(config, {})
    assert resolved["gpustack"] == ProviderSettings(
        provider="gpustack",
        model="gm",
        api_key="gk",
        endpoint="http://g/v1",
        options={"embedding_model": "emb"},
    )
    assert resolved["openai"] == ProviderSettings(
        provider="openai", model="om", api_key="ok", endpoint="http://proxy/v1", idle_timeout=30.0
    )
    assert resolved["google"].api_key == "gk2"
    assert resolved["google"].model == "gemini-x"
    assert resolved["azure"] == ProviderSettings(
        provider="azure",
        model="dep",
        api_key="ak",
        endpoint="https://az",
        options={"api_version": "2024-10-21"},
    )
    assert resolved["ollama"].options == {"enabled": "true", "carry_tool_images": "true"}
    assert resolved["local"] == ProviderSettings(
        provider="local", model="/models/a.gguf", options={"enabled": "true", "context_length": "4096"}
    )


def test_hive_canonical_sections_and_snake_case_keys_are_accepted_too() -> None:
    config: dict[str, object] = {
        "gpustack": {"endpoint": "http://g", "api_key": "k", "model": "m"},
        "google": {"apiKey": "k", "model": "m"},
        "azure": {"endpoint": "https://a", "apiKey": "k", "deployment": "d"},
        "local": {"model": "/m.gguf", "contextLength": 2048, "threads": 4},
    }
    resolved = resolve_settings(config, {})
    assert is_configured(resolved["gpustack"])
    assert is_configured(resolved["google"])
    assert resolved["azure"].model == "d"
    assert resolved["local"].model == "/m.gguf"
    assert resolved["local"].options == {"enabled": "true", "context_length": "2048", "threads": "4"}


def test_the_canonical_section_overrides_the_seeds_key_by_key() -> None:
    config: dict[str, object] = {
        "lmsupply": {"generatorModel": "/seed.gguf", "maxContextLength": 1024},
        "local": {"model": "/hive.gguf"},
    }
    local = resolve_settings(config, {})["local"]
    assert local.model == "/hive.gguf"
    assert local.options["context_length"] == "1024"


@pytest.mark.parametrize("model", ["gguf:auto", "auto", "default", "gguf:default", "GGUF:AUTO"])
def test_the_seeds_automatic_local_model_means_the_default_one(model: str) -> None:
    assert resolve_settings({"lmsupply": {"generatorModel": model}}, {})["local"].model is None


def test_the_environment_overrides_the_config_and_empty_values_do_not() -> None:
    config: dict[str, object] = {"openai": {"apiKey": "from-file", "model": "file-model"}}
    env = {"OPENAI_API_KEY": "from-env", "OPENAI_MODEL": ""}
    openai = resolve_settings(config, env)["openai"]
    assert openai.api_key == "from-env"
    assert openai.model == "file-model"
    assert resolve_settings({"openai": {"apiKey": ""}}, {})["openai"].api_key is None
    # GOOGLEAI_API_KEY wins over GOOGLE_API_KEY.
    google = resolve_settings({}, {"GOOGLE_API_KEY": "b", "GOOGLEAI_API_KEY": "a"})["google"]
    assert google.api_key == "a"


def test_idle_timeout_from_config() -> None:
    assert resolve_settings({"xai": {"streamIdleTimeoutSeconds": "0"}}, {})["xai"].idle_timeout == float(
        "inf"
    )
    assert resolve_settings({}, {})["xai"].idle_timeout == ProviderSettings(provider="xai").idle_timeout
    with pytest.raises(ProviderSelectionError, match="streamIdleTimeoutSeconds"):
        resolve_settings({"xai": {"streamIdleTimeoutSeconds": "soon"}}, {})


def test_the_environment_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (variable for spec in PROVIDERS for variable in spec.env_vars()):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XAI_API_KEY", "k")
    monkeypatch.setenv("XAI_MODEL", "grok")
    monkeypatch.setenv("LMSUPPLY_ENABLED", "false")
    assert select_provider().provider == "xai"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("True", True),
        (" TRUE ", True),
        ("1", True),
        ("yes", True),
        ("false", False),
        ("0", False),
    ],
)
def test_boolean_settings(text: str, value: bool) -> None:
    assert parse_bool(text) is value
    assert parse_bool(value) is value


def test_every_factory_exists() -> None:
    for spec in PROVIDERS:
        module, _, attribute = spec.factory.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), spec.factory


@pytest.mark.parametrize("provider", PRIORITY)
def test_create_client_builds_each_providers_chat_client(provider: str) -> None:
    settings = resolve_settings({}, EVERYTHING)[provider]
    client = create_client(settings)
    assert isinstance(client, ChatClient)


def test_list_models_of_local_names_the_model_file() -> None:
    async def main() -> list[str]:
        with anyio.fail_after(30):
            return await list_models(select_provider("local", env={}))

    assert anyio.run(main) == [str(default_model_path())]


def test_list_models_falls_back_to_the_configured_model(monkeypatch: pytest.MonkeyPatch) -> None:
    class Plain:
        context_window = None

        def stream(self, messages: object, options: object) -> object:
            raise NotImplementedError

    monkeypatch.setattr("hive_providers.registry.create_client", lambda settings: Plain())

    async def main() -> list[str]:
        return await list_models(ProviderSettings(provider="openai", model="gpt-x"))

    assert anyio.run(main) == ["gpt-x"]


def run_isolated(script: str, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_importing_the_registry_and_choosing_a_provider_imports_no_sdk() -> None:
    script = """
import sys
import hive_providers.registry as registry
heavy = ("openai", "anthropic", "llama_cpp", "hive_providers.local", "hive_providers.openai_chat")
assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]
settings = registry.select_provider(config={}, env={})
client = registry.create_client(settings)
assert client.context_window == 8192, client.context_window
assert "llama_cpp" not in sys.modules, "creating the local client imported llama_cpp"
assert not [m for m in ("openai", "anthropic") if m in sys.modules]
print("ok")
"""
    assert run_isolated(script).strip() == "ok"
