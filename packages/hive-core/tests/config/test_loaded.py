"""The typed views of the merged configuration: chat behaviour, approval, the default provider, permissions."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import ChatBehavior
from hive_core.config import ConfigError
from hive_core.config import FallbackEntry
from hive_core.config import LoadedConfig
from hive_core.config import load_config
from hive_core.permissions import load_permission_rules


def _load(project: Path, env: dict[str, str], text: str) -> LoadedConfig:
    home = Path(env["HIVE_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text)
    return load_config(project, env)


def test_unknown_section(project: Path, env: dict[str, str]) -> None:
    loaded = load_config(project, env)
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


def test_the_fallback_list_in_order_its_items_checked(project: Path, env: dict[str, str]) -> None:
    loaded = _load(
        project,
        env,
        "fallback:\n  - provider: anthropic\n    model: claude-x\n  - provider: ollama\n    region: eu\n",
    )
    assert loaded.fallback == (
        FallbackEntry(provider="anthropic", model="claude-x"),
        FallbackEntry(provider="ollama"),
    )
    [warning] = loaded.warnings
    assert (warning.key, warning.line) == ("fallback.1.region", 5)
    assert "unknown key" in warning.message
    assert load_config(project, {**env, "HIVE_HOME": str(project / "empty-home")}).fallback == ()


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("fallback:\n  - provider: [a]\n", 2, "'fallback.0.provider' must be text"),
        ("fallback:\n  - provider: openai\n  - model: m\n", 3, "'fallback.1' must set 'provider'"),
        ("fallback:\n  - openai\n", 2, "each item of 'fallback' must be a mapping"),
    ],
)
def test_a_bad_fallback_item_names_its_line(
    project: Path, env: dict[str, str], text: str, line: int, problem: str
) -> None:
    with pytest.raises(ConfigError, match=problem) as caught:
        _load(project, env, text)
    assert caught.value.line == line


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
    assert rules.bash[0].pattern == "make *"  # first: the section adds to the defaults, which follow it
    assert len(rules.bash) > 1
