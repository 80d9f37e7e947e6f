"""The typed views of the merged configuration: providers, chat behaviour, permissions."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import ChatBehavior, LoadedConfig, load_config
from hive_core.permissions import load_permission_rules


def _load(project: Path, env: dict[str, str], text: str) -> LoadedConfig:
    home = Path(env["HIVE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)
    return load_config(project, env)


@pytest.mark.parametrize(
    ("text", "name", "configured"),
    [
        ("openai:\n  apiKey: k\n  model: m\n", "openai", True),
        ("openai:\n  apiKey: k\n", "openai", False),
        ("anthropic:\n  model: m\n", "anthropic", False),
        ("googleai:\n  apiKey: k\n  model: m\n", "googleai", True),
        ("xai:\n  apiKey: k\n  model: m\n", "xai", True),
        ("gpuStack:\n  apiKey: k\n  model: m\n", "gpuStack", False),
        ("gpuStack:\n  endpoint: http://g\n  apiKey: k\n  model: m\n", "gpuStack", True),
        ("azureopenai:\n  endpoint: http://a\n  apiKey: k\n", "azureopenai", False),
        ("azureopenai:\n  endpoint: http://a\n  apiKey: k\n  deploymentName: d\n", "azureopenai", True),
        ("ollama:\n  model: m\n", "ollama", False),
        ("ollama:\n  enabled: true\n", "ollama", True),
        ("lmstudio:\n  enabled: true\n", "lmstudio", True),
        ("", "lmsupply", True),
        ("lmsupply:\n  enabled: false\n", "lmsupply", False),
    ],
)
def test_provider_configured(
    project: Path, env: dict[str, str], text: str, name: str, configured: bool
) -> None:
    assert _load(project, env, text).provider(name).configured is configured


def test_provider_fields(project: Path, env: dict[str, str]) -> None:
    loaded = _load(
        project,
        env,
        "azureopenai:\n  endpoint: http://a\n  apiKey: k\n  deploymentName: dep\n  apiVersion: '2025-01-01'\n"
        "ollama:\n  enabled: true\n  streamIdleTimeoutSeconds: 30\n  carryToolImages: true\n",
    )
    azure = loaded.provider("AzureOpenAI")
    assert (azure.name, azure.model, azure.endpoint, azure.api_key, azure.enabled) == (
        "azureopenai",
        "dep",
        "http://a",
        "k",
        None,
    )
    assert azure.fields["apiVersion"] == "2025-01-01"
    ollama = loaded.provider("ollama")
    assert (ollama.endpoint, ollama.enabled, ollama.stream_idle_timeout_seconds) == (
        "http://localhost:11434",
        True,
        30.0,
    )
    assert ollama.fields["carryToolImages"] is True
    assert loaded.provider("local").model == "gguf:auto"


def test_providers_in_priority_order(project: Path, env: dict[str, str]) -> None:
    names = [provider.name for provider in load_config(project, env).providers()]
    assert names[:4] == ["gpuStack", "openai", "anthropic", "googleai"]
    assert names[-1] == "lmsupply"


def test_unknown_provider_or_section(project: Path, env: dict[str, str]) -> None:
    loaded = load_config(project, env)
    with pytest.raises(KeyError):
        loaded.provider("budget")
    with pytest.raises(KeyError):
        loaded.section("nope")
    with pytest.raises(KeyError):
        loaded.section("defaultProvider")


def test_chat_behavior(project: Path, env: dict[str, str]) -> None:
    loaded = _load(
        project,
        env,
        "chatBehavior:\n  maximumIterationsPerRequest: 7\n  reasoningEffort: low\n"
        "  toolCallTimeoutSeconds: 45\n",
    )
    assert loaded.chat_behavior == ChatBehavior(
        maximum_iterations_per_request=7,
        maximum_consecutive_errors_per_request=3,
        max_output_tokens=4096,
        reasoning_effort="low",
        tool_call_timeout_seconds=45.0,
    )
    assert loaded.approval_timeout_seconds == 300.0


def test_default_provider(project: Path, env: dict[str, str]) -> None:
    assert _load(project, env, "defaultProvider: anthropic\n").default_provider == "anthropic"


def test_the_permissions_section_feeds_the_permission_rules(project: Path, env: dict[str, str]) -> None:
    loaded = _load(
        project,
        env,
        "permissions:\n  defaultAction: deny\n  readOnlyTools: [web_*]\n"
        "  bash:\n    - pattern: 'make *'\n      action: allow\n",
    )
    assert loaded.permissions is not None
    assert str(Path(env["HIVE_HOME"]) / "config.yaml") in loaded.permissions_source
    rules = load_permission_rules(project, loaded.permissions, config_origin=loaded.permissions_source)
    assert rules.default_action == "deny"
    assert rules.read_only_tools == ("web_*",)
    assert [rule.pattern for rule in rules.bash] == ["make *"]
