"""The provider registry: names and aliases, the merged configuration it reads, when a provider counts as
configured, the default priority with local inference last, the errors, client creation and lazy imports."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import anyio
import pytest
from providers_harness import configuration
from providers_harness import run_isolated

from hive_core import Capabilities
from hive_core import ChatClient
from hive_core.config import ConfigError
from hive_providers import PROVIDERS
from hive_providers import ProviderSettings
from hive_providers.local import LocalChatClient
from hive_providers.local import default_model_path
from hive_providers.registry import MissingSettingError
from hive_providers.registry import ProviderSelectionError
from hive_providers.registry import UnknownProviderError
from hive_providers.registry import configured_providers
from hive_providers.registry import create_client
from hive_providers.registry import list_models
from hive_providers.registry import provider_settings
from hive_providers.registry import provider_spec
from hive_providers.registry import required_setting
from hive_providers.registry import select_provider

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


def configured_names(tmp_path: Path, env: dict[str, str] | None = None, text: str = "") -> list[str]:
    return [settings.provider for settings in configured_providers(configuration(tmp_path, env, text))]


def test_the_table_is_in_the_seeds_priority_order(tmp_path: Path) -> None:
    assert [spec.name for spec in PROVIDERS] == PRIORITY
    assert configured_names(tmp_path, EVERYTHING) == PRIORITY


@pytest.mark.parametrize("index", range(len(PRIORITY) - 1))
def test_the_default_is_the_first_configured_by_priority(tmp_path: Path, index: int) -> None:
    config = configuration(tmp_path, without(*PRIORITY[:index]))
    assert select_provider(config).provider == PRIORITY[index]


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
def test_aliases_and_any_case_name_the_canonical_provider(tmp_path: Path, name: str, canonical: str) -> None:
    assert provider_spec(name).name == canonical
    assert select_provider(configuration(tmp_path, EVERYTHING), name).provider == canonical


def test_an_unknown_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownProviderError) as caught:
        select_provider(configuration(tmp_path, EVERYTHING), "mistral")
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
        ("openai", {"OPENAI_API_KEY": "k"}, True),
        ("openai", {"OPENAI_MODEL": "m"}, False),
        ("anthropic", {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "m"}, True),
        ("anthropic", {"ANTHROPIC_API_KEY": "k"}, True),
        ("google", {"GOOGLEAI_API_KEY": "k", "GOOGLEAI_MODEL": "m"}, True),
        ("google", {"GOOGLE_API_KEY": "k", "GOOGLEAI_MODEL": "m"}, True),
        ("google", {"GOOGLE_API_KEY": "k"}, True),
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
        ("local", {"LMSUPPLY_ENABLED": ""}, True),
    ],
)
def test_configured_when(tmp_path: Path, provider: str, env: dict[str, str], configured: bool) -> None:
    assert (provider in configured_names(tmp_path, env)) is configured


@pytest.mark.parametrize(
    ("text", "name", "configured"),
    [
        ("openai:\n  apiKey: k\n  model: m\n", "openai", True),
        ("openai:\n  apiKey: k\n", "openai", True),
        ("anthropic:\n  model: m\n", "anthropic", False),
        ("googleai:\n  apiKey: k\n  model: m\n", "google", True),
        ("xai:\n  apiKey: k\n  model: m\n", "xai", True),
        ("gpuStack:\n  apiKey: k\n  model: m\n", "gpustack", False),
        ("gpuStack:\n  endpoint: http://g\n  apiKey: k\n  model: m\n", "gpustack", True),
        ("azureopenai:\n  endpoint: http://a\n  apiKey: k\n", "azure", False),
        ("azureopenai:\n  endpoint: http://a\n  apiKey: k\n  deploymentName: d\n", "azure", True),
        ("ollama:\n  model: m\n", "ollama", False),
        ("ollama:\n  enabled: true\n", "ollama", True),
        ("lmstudio:\n  enabled: true\n", "lmstudio", True),
        ("", "local", True),
        ("lmsupply:\n  enabled: false\n", "local", False),
    ],
)
def test_configured_by_the_config_file(tmp_path: Path, text: str, name: str, configured: bool) -> None:
    assert (name in configured_names(tmp_path, text=text)) is configured


def test_nothing_configured_means_local_with_the_default_model(tmp_path: Path) -> None:
    settings = select_provider(configuration(tmp_path))
    assert settings.provider == "local"
    assert settings.model is None
    client = create_client(settings)
    assert isinstance(client, LocalChatClient)
    assert client.model_path == default_model_path()


@pytest.mark.parametrize(
    ("text", "env"),
    [
        ("", {"LMSUPPLY_ENABLED": "false"}),
        ("lmsupply:\n  enabled: false\n", {}),
        ("local:\n  enabled: false\n", {}),
    ],
)
def test_nothing_configured_and_local_off_is_a_clear_error(
    tmp_path: Path, text: str, env: dict[str, str]
) -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        select_provider(configuration(tmp_path, env, text))
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


def test_the_environment_switches_local_back_on_over_the_config(tmp_path: Path) -> None:
    config = configuration(tmp_path, {"LMSUPPLY_ENABLED": "true"}, "lmsupply:\n  enabled: false\n")
    assert select_provider(config).provider == "local"


def test_local_is_available_by_name_even_when_it_is_not_the_fallback(tmp_path: Path) -> None:
    config = configuration(tmp_path, {"LMSUPPLY_ENABLED": "false"})
    assert select_provider(config, "local").provider == "local"
    assert select_provider(config, "lmsupply").provider == "local"


def test_a_named_provider_that_is_not_configured_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ProviderSelectionError) as caught:
        select_provider(configuration(tmp_path, {"ANTHROPIC_MODEL": "m"}), "claude")
    assert not isinstance(caught.value, UnknownProviderError)
    assert "anthropic" in str(caught.value)
    assert "set ANTHROPIC_API_KEY" in str(caught.value)
    with pytest.raises(ProviderSelectionError, match="OLLAMA_ENABLED=true"):
        select_provider(configuration(tmp_path), "ollama")


def test_the_seeds_sections_and_keys_fill_the_settings(tmp_path: Path) -> None:
    config = configuration(
        tmp_path,
        text=(
            "gpuStack:\n  endpoint: http://g/v1\n  apiKey: gk\n  model: gm\n"
            "openai:\n  apiKey: ok\n  model: om\n  endpoint: http://proxy/v1\n  streamIdleTimeoutSeconds: 30\n"
            "googleai:\n  apiKey: gk2\n  model: gemini-x\n"
            "azureopenai:\n  endpoint: https://az\n  apiKey: ak\n  deploymentName: dep\n"
            "  apiVersion: '2024-10-21'\n"
            "ollama:\n  enabled: true\n  endpoint: http://o:11434\n  model: llama3\n  carryToolImages: true\n"
            "lmsupply:\n  enabled: true\n  generatorModel: /models/a.gguf\n  maxContextLength: 4096\n"
        ),
    )
    assert config.warnings == ()
    # carryToolImages is off by default on the local servers, on for every other provider.
    assert provider_settings(config, "gpustack") == ProviderSettings(
        provider="gpustack", model="gm", api_key="gk", endpoint="http://g/v1", carry_tool_images=False
    )
    assert provider_settings(config, "openai") == ProviderSettings(
        provider="openai", model="om", api_key="ok", endpoint="http://proxy/v1", idle_timeout=30.0
    )
    google = provider_settings(config, "gemini")
    assert (google.api_key, google.model) == ("gk2", "gemini-x")
    assert provider_settings(config, "AzureOpenAI") == ProviderSettings(
        provider="azure", model="dep", api_key="ak", endpoint="https://az", api_version="2024-10-21"
    )
    assert provider_settings(config, "ollama") == ProviderSettings(
        provider="ollama", model="llama3", endpoint="http://o:11434", carry_tool_images=True
    )
    assert provider_settings(config, "lmstudio").carry_tool_images is False
    assert provider_settings(config, "local") == ProviderSettings(
        provider="local", model="/models/a.gguf", context_length=4096
    )


def test_defaults_of_the_table_fill_the_settings(tmp_path: Path) -> None:
    config = configuration(tmp_path)
    assert provider_settings(config, "ollama").endpoint == "http://localhost:11434"
    assert provider_settings(config, "xai").endpoint == "https://api.x.ai/v1"
    assert provider_settings(config, "openai").endpoint == "https://api.openai.com/v1"
    assert provider_settings(config, "anthropic").endpoint is None


@pytest.mark.parametrize("model", ["default", "gguf:default", "GGUF:Default"])
def test_the_default_local_model_names_mean_the_packaged_one(tmp_path: Path, model: str) -> None:
    config = configuration(tmp_path, text=f"lmsupply:\n  generatorModel: {model}\n")
    assert provider_settings(config, "local").model is None


@pytest.mark.parametrize("model", ["gguf:auto", "auto", "GGUF:AUTO"])
def test_the_seeds_automatic_local_model_reaches_the_adapter(tmp_path: Path, model: str) -> None:
    # gguf:auto is the machine's pick from the alias table (hive_providers.local.model_table), not the default.
    config = configuration(tmp_path, text=f"lmsupply:\n  generatorModel: {model}\n")
    assert provider_settings(config, "local").model == model


def test_the_local_model_is_unset_by_default(tmp_path: Path) -> None:
    # Unset: the packaged model, which the first command runs offline with nothing downloaded.
    assert provider_settings(configuration(tmp_path), "local").model is None


def test_the_environment_overrides_the_config_and_empty_values_do_not(tmp_path: Path) -> None:
    text = "openai:\n  apiKey: from-file\n  model: file-model\n"
    openai = provider_settings(
        configuration(tmp_path, {"OPENAI_API_KEY": "from-env", "OPENAI_MODEL": ""}, text), "openai"
    )
    assert openai.api_key == "from-env"
    assert openai.model == "file-model"
    assert (
        provider_settings(configuration(tmp_path, text="openai:\n  apiKey: ''\n"), "openai").api_key is None
    )
    # GOOGLEAI_API_KEY wins over GOOGLE_API_KEY.
    google = provider_settings(
        configuration(tmp_path, {"GOOGLE_API_KEY": "b", "GOOGLEAI_API_KEY": "a"}), "google"
    )
    assert google.api_key == "a"


def test_idle_timeout_from_config(tmp_path: Path) -> None:
    config = configuration(tmp_path, text="xai:\n  streamIdleTimeoutSeconds: 2.5\n")
    assert provider_settings(config, "xai").idle_timeout == 2.5
    assert (
        provider_settings(configuration(tmp_path), "xai").idle_timeout
        == ProviderSettings(provider="xai").idle_timeout
    )
    with pytest.raises(ConfigError, match="streamIdleTimeoutSeconds"):
        configuration(tmp_path, text="xai:\n  streamIdleTimeoutSeconds: soon\n")


def test_the_registry_reads_the_configuration_not_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The configuration loader is the one place environment variables are read.
    monkeypatch.setenv("XAI_API_KEY", "k")
    monkeypatch.setenv("XAI_MODEL", "grok")
    assert "xai" not in configured_names(tmp_path)


def test_a_configuration_without_the_providers_sections_is_refused(tmp_path: Path) -> None:
    from hive_core.config import load_config

    (tmp_path / "home").mkdir()
    with pytest.raises(ValueError, match="CONFIG_SCHEMA"):
        select_provider(load_config(tmp_path, {"HIVE_HOME": str(tmp_path / "home")}))


@pytest.mark.parametrize(
    ("settings", "name", "missing"),
    [
        (
            ProviderSettings(provider="azure"),
            "endpoint",
            "'endpoint'.*AZURE_OPENAI_ENDPOINT, or azureopenai.endpoint",
        ),
        (
            ProviderSettings(provider="google", api_key=" "),
            "api_key",
            "GOOGLEAI_API_KEY or GOOGLE_API_KEY, or",
        ),
        (
            ProviderSettings(provider="anthropic"),
            "model",
            "'model'.*ANTHROPIC_MODEL, or anthropic.model in config",
        ),
    ],
)
def test_a_missing_setting_names_its_variable_and_key(
    settings: ProviderSettings, name: Literal["model", "api_key", "endpoint"], missing: str
) -> None:
    with pytest.raises(MissingSettingError, match=missing):
        required_setting(settings, name)
    assert required_setting(ProviderSettings(provider="xai", model="grok"), "model") == "grok"


def test_every_provider_names_keys_its_section_has() -> None:
    names = [name for spec in PROVIDERS for name in (spec.name, *spec.aliases)]
    assert len(names) == len(set(names))
    for spec in PROVIDERS:
        keys = {key.name for key in spec.section.fields}
        assert set(spec.required) <= keys, spec.name
        assert set(spec.settings) <= keys, spec.name
        assert spec.required or "enabled" in keys, spec.name
        assert spec.key_of("model") is not None, spec.name


def test_every_factory_exists() -> None:
    for spec in PROVIDERS:
        module, _, attribute = spec.factory.partition(":")
        assert callable(getattr(importlib.import_module(module), attribute)), spec.factory


@pytest.mark.parametrize("provider", PRIORITY)
def test_create_client_builds_each_providers_chat_client(tmp_path: Path, provider: str) -> None:
    client = create_client(provider_settings(configuration(tmp_path, EVERYTHING), provider))
    assert isinstance(client, ChatClient)


def test_list_models_of_local_names_the_model_file(tmp_path: Path) -> None:
    settings = select_provider(configuration(tmp_path), "local")

    async def main() -> list[str]:
        with anyio.fail_after(30):
            return await list_models(settings)

    assert anyio.run(main) == [str(default_model_path())]


def test_list_models_falls_back_to_the_configured_model(monkeypatch: pytest.MonkeyPatch) -> None:
    class Plain:
        capabilities = Capabilities()

        def stream(self, messages: Sequence[object], options: object) -> object:
            raise NotImplementedError

    monkeypatch.setattr("hive_providers.registry.create_client", lambda settings: Plain())

    async def main() -> list[str]:
        return await list_models(ProviderSettings(provider="openai", model="gpt-x"))

    assert anyio.run(main) == ["gpt-x"]


def test_importing_the_registry_and_choosing_a_provider_imports_no_sdk(tmp_path: Path) -> None:
    script = f"""
import sys
import hive_providers.registry as registry
heavy = ("openai", "anthropic", "llama_cpp", "hive_providers.local", "hive_providers.openai_chat")
assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA
config = load_config({str(tmp_path)!r}, {{"HIVE_HOME": {str(tmp_path / "home")!r}}}, schema=CONFIG_SCHEMA)
settings = registry.select_provider(config)
client = registry.create_client(settings)
assert client.capabilities.context_window == 8192, client.capabilities
assert "llama_cpp" not in sys.modules, "creating the local client imported llama_cpp"
assert not [m for m in ("openai", "anthropic") if m in sys.modules]
print("ok")
"""
    assert run_isolated(script).strip() == "ok"
