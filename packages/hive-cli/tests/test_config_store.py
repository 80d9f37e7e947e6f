"""``set``, ``get`` and ``unset`` on the global file: round trips, typing, masking, and file modes."""

from __future__ import annotations

import inspect
import os
import stat
from pathlib import Path

import pytest
import yaml

from hive_cli.config_store import get_value
from hive_cli.config_store import set_value
from hive_cli.config_store import unset_value
from hive_core.config import ConfigError
from hive_core.config import ConfigSchema
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA
from hive_providers.registry import configured_providers

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _file(home: Path) -> object:
    return yaml.safe_load((home / "config.yaml").read_text())


def test_set_creates_the_home_0700_and_the_file_0600(home: Path) -> None:
    assert not home.exists()
    result = set_value("openai.apiKey", SECRET, home=home)
    assert result.path == home / "config.yaml"
    assert _mode(home) == 0o700
    assert _mode(home / "config.yaml") == 0o600
    assert _file(home) == {"openai": {"apiKey": SECRET}}


def test_set_makes_an_existing_file_0600(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("openai:\n  model: m\n")
    (home / "config.yaml").chmod(0o644)
    set_value("openai.apiKey", SECRET, home=home)
    assert _mode(home / "config.yaml") == 0o600
    assert [name for name in os.listdir(home)] == ["config.yaml"]  # no temporary file left behind


def test_set_echo_masks_secrets(home: Path) -> None:
    assert set_value("openai.apiKey", SECRET, home=home).display == "sk-p...wxyz"
    assert set_value("anthropic.apiKey", "short", home=home).display == "***"
    assert set_value("webSearch.tavilyApiKey", "tvly-0123456789abc", home=home).display == "tvly...9abc"
    assert set_value("openai.model", "gpt-4o-mini", home=home).display == "gpt-4o-mini"


@pytest.mark.parametrize(
    ("written", "canonical"),
    [
        ("openai.api_key", "openai.apiKey"),
        ("OPENAI.API_KEY", "openai.apiKey"),
        ("chat_behavior.max_output_tokens", "chatBehavior.maxOutputTokens"),
        ("gpustack.api_key", "gpuStack.apiKey"),
        ("gpu_stack.stream-idle-timeout_seconds", "gpuStack.streamIdleTimeoutSeconds"),
        ("local.generator_model", "lmsupply.generatorModel"),
        ("web_search.tavily_api_key", "webSearch.tavilyApiKey"),
        ("default_provider", "defaultProvider"),
        ("permissions.default_action", "permissions.defaultAction"),
        ("my_plugin.some_setting", "myPlugin.someSetting"),
    ],
)
def test_keys_are_normalised_to_camel_case(home: Path, written: str, canonical: str) -> None:
    result = set_value(written, "7", home=home)
    assert result.key == canonical
    assert get_value(canonical, raw=True, home=home) == {canonical: "7"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("FALSE", False),
        ("42", 42),
        ("-7", -7),
        ("2.5", 2.5),
        ("1e3", 1000.0),
        ("hello", "hello"),
    ],
)
def test_unknown_keys_infer_bool_then_int_then_float_then_text(
    home: Path, value: str, expected: object
) -> None:
    result = set_value("plugins.value", value, home=home)
    assert result.value == expected
    assert type(result.value) is type(expected)
    assert _file(home) == {"plugins": {"value": expected}}
    assert result.warnings  # hive does not know the key


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("openai.apiKey", "1234567890", "1234567890"),  # a text field stays text
        ("openai.model", "true", "true"),
        ("ollama.enabled", "True", True),
        ("chatBehavior.maxOutputTokens", "8192", 8192),
        ("approval.timeoutSeconds", "30", 30),
        ("approval.timeoutSeconds", "7.5", 7.5),
        ("skills.roots", "~/skills, ./more", ["~/skills", "./more"]),
        ("skills.exclude", "", []),
        ("chatBehavior.reasoningEffort", "extra_high", "extra_high"),
    ],
)
def test_known_keys_take_their_fields_type(home: Path, key: str, value: str, expected: object) -> None:
    result = set_value(key, value, home=home)
    assert result.value == expected
    assert type(result.value) is type(expected)
    assert result.warnings == ()


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("ollama.enabled", "yes", "true or false"),
        ("chatBehavior.maxOutputTokens", "4k", "whole number"),
        ("chatBehavior.maxOutputTokens", "0", "greater than zero"),
        ("approval.timeoutSeconds", "soon", "number"),
        ("chatBehavior.reasoningEffort", "max", "one of"),
        ("delegation.agents", "x", "edit the configuration file"),
        ("openai", "x", "is a section"),
        ("permissions", "x", "is a section"),
        ("openai.apiKey.inner", "x", "is a value"),
        ("defaultProvider.inner", "x", "is a value"),
        ("openai..model", "x", "invalid key"),
        ("", "x", "invalid key"),
    ],
)
def test_set_refuses_what_does_not_fit(home: Path, key: str, value: str, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        set_value(key, value, home=home)
    assert not (home / "config.yaml").exists()


def test_set_keeps_the_rest_of_the_file(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text(
        "# my keys\nopenai:\n  model: gpt-4o\n  apiKey: old\n"
        "mystery:\n  keep: [1, 2]\nanthropic:\n  model: c\n"
    )
    set_value("openai.apiKey", SECRET, home=home)
    assert _file(home) == {
        "openai": {"model": "gpt-4o", "apiKey": SECRET},
        "mystery": {"keep": [1, 2]},
        "anthropic": {"model": "c"},
    }


def test_set_writes_into_an_alias_section_already_in_the_file(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("local:\n  enabled: true\n")
    set_value("lmsupply.enabled", "false", home=home)
    assert _file(home) == {"local": {"enabled": False}}
    assert get_value(home=home) == {"lmsupply.enabled": "false"}


def test_set_refuses_to_overwrite_a_malformed_file(home: Path) -> None:
    home.mkdir()
    original = "openai:\n  model: [broken\n"
    (home / "config.yaml").write_text(original)
    with pytest.raises(ConfigError) as caught:
        set_value("openai.model", "m", home=home)
    assert caught.value.source == str(home / "config.yaml")
    assert (home / "config.yaml").read_text() == original


def test_set_refuses_to_replace_a_value_with_a_section(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("# c\nopenai: 5\n")
    with pytest.raises(ConfigError, match="holds a value") as caught:
        set_value("openai.model", "m", home=home)
    assert caught.value.line == 2


def test_get_flattens_and_masks_unless_raw(home: Path) -> None:
    set_value("openai.apiKey", SECRET, home=home)
    set_value("openai.model", "gpt-4o-mini", home=home)
    set_value("budget.maxSessionTokens", "50000", home=home)
    set_value("skills.roots", "a,b", home=home)
    assert get_value(home=home) == {
        "openai.apiKey": "sk-p...wxyz",
        "openai.model": "gpt-4o-mini",
        "budget.maxSessionTokens": "50000",  # a count of tokens is not a secret
        "skills.roots": '["a", "b"]',
    }
    assert get_value("openai.apiKey", raw=True, home=home) == {"openai.apiKey": SECRET}
    assert get_value("openai.api_key", home=home) == {"openai.apiKey": "sk-p...wxyz"}
    assert get_value("openai", home=home) == {"openai.apiKey": "sk-p...wxyz", "openai.model": "gpt-4o-mini"}
    assert get_value("anthropic", home=home) == {}


def test_get_without_a_file_is_empty(home: Path) -> None:
    assert get_value(home=home) == {}
    assert not home.exists()


def test_unset_removes_the_key_and_empty_sections(home: Path) -> None:
    set_value("openai.apiKey", SECRET, home=home)
    set_value("openai.model", "m", home=home)
    set_value("xai.model", "grok", home=home)
    assert unset_value("openai.api_key", home=home) is True
    assert _file(home) == {"openai": {"model": "m"}, "xai": {"model": "grok"}}
    assert unset_value("openai.model", home=home) is True
    assert _file(home) == {"xai": {"model": "grok"}}
    assert unset_value("xai", home=home) is True
    assert (home / "config.yaml").read_text() == ""
    assert _mode(home / "config.yaml") == 0o600


def test_unset_of_a_missing_key_changes_nothing(home: Path) -> None:
    assert unset_value("openai.apiKey", home=home) is False
    assert not (home / "config.yaml").exists()
    set_value("openai.model", "m", home=home)
    before = (home / "config.yaml").read_text()
    assert unset_value("openai.apiKey", home=home) is False
    assert unset_value("openai.model.deeper", home=home) is False
    assert (home / "config.yaml").read_text() == before


def test_unset_removes_a_key_spelled_as_in_the_file(home: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("openai:\n  api_key: typo\n  model: m\n")
    assert unset_value("openai.api_key", home=home) is True
    assert _file(home) == {"openai": {"model": "m"}}


def test_set_values_are_what_load_config_reads(home: Path, tmp_path: Path) -> None:
    set_value("openai.api_key", SECRET, home=home)
    set_value("openai.model", "gpt-4o-mini", home=home)
    set_value("chat_behavior.maximum_iterations_per_request", "7", home=home)
    set_value("local.enabled", "false", home=home)
    loaded = load_config(tmp_path, {"HIVE_HOME": str(home)}, schema=CONFIG_SCHEMA)
    assert loaded.warnings == ()
    assert "openai" in [settings.provider for settings in configured_providers(loaded)]
    assert loaded.chat_behavior.maximum_iterations_per_request == 7
    assert loaded.get("lmsupply.enabled") is False


def test_set_defaults_to_the_home_of_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HIVE_HOME", str(tmp_path / "env-home"))
    set_value("openai.model", "m")
    assert (tmp_path / "env-home" / "config.yaml").exists()
    assert get_value("openai.model") == {"openai.model": "m"}
    assert unset_value("openai.model") is True


def test_signatures_the_commands_rely_on() -> None:
    assert list(inspect.signature(set_value).parameters)[:2] == ["key", "value"]
    get = inspect.signature(get_value).parameters
    assert get["raw"].kind is inspect.Parameter.KEYWORD_ONLY
    assert get["raw"].default is False
    assert next(iter(inspect.signature(unset_value).parameters)) == "key"


def test_setting_a_key_nothing_reads_yet_says_so(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every key of this version is read, so the test keeps one for later as a key would be kept: not used.
    is_used = ConfigSchema.is_used
    monkeypatch.setattr(
        ConfigSchema, "is_used", lambda schema, key: key != "budget.stopOnLimit" and is_used(schema, key)
    )
    assert set_value("budget.stopOnLimit", "false", home=home).used is False
    assert set_value("openai.model", "gpt-4o-mini", home=home).used is True


USER_FILE = """\
# My hive setup: keys come from the password manager.
anthropic:
  model: 'claude-sonnet-4-5'   # the one the team pays for
  apiKey: "sk-ant-old"

# Local models for the train.
ollama:
  enabled: true
  models: [llama3, qwen2]
"""


def test_set_and_unset_edit_the_file_in_place_keeping_comments_order_and_quotes(home: Path) -> None:
    home.mkdir()
    path = home / "config.yaml"
    path.write_text(USER_FILE, encoding="utf-8")
    set_value("anthropic.apiKey", "sk-ant-new", home=home)
    set_value("openai.model", "gpt-5", home=home)  # a new section goes at the end
    assert path.read_text(encoding="utf-8") == USER_FILE.replace("sk-ant-old", "sk-ant-new") + (
        "openai:\n  model: gpt-5\n"
    )
    assert unset_value("ollama.models", home=home)
    text = path.read_text(encoding="utf-8")
    assert "models: [llama3" not in text
    assert "# Local models for the train." in text
    assert "'claude-sonnet-4-5'   # the one the team pays for" in text
