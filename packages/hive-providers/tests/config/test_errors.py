"""Malformed files and wrong types are errors naming file, line and key; unknown keys are warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import ConfigError
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA


def _global(env: dict[str, str], text: str | bytes) -> Path:
    path = Path(env["HIVE_HOME"]) / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _refused(project: Path, env: dict[str, str], text: str) -> tuple[Path, ConfigError]:
    """Write ``text`` as the global file; that file, and the error loading the configuration raises."""
    path = _global(env, text)
    with pytest.raises(ConfigError) as caught:
        load_config(project, env, schema=CONFIG_SCHEMA)
    return path, caught.value


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("openai:\n  model: gpt\n  apiKey: [unclosed\n", 4, 1),
        ("openai:\n  model: gpt\n bad: indentation\n", 3, 2),
        ("chatBehavior:\n\tmaxOutputTokens: 5\n", 2, 1),
        ("openai:\n  model: 'never closed\n", 3, 1),
        ("openai: {}\n---\nopenai: {}\n", 2, 1),
        ("a: *undefined\n", 1, 4),
        ("openai:\n  model: a\n  model: b\n", 3, 3),
    ],
)
def test_malformed_yaml_names_the_file_line_and_column(
    project: Path, env: dict[str, str], text: str, line: int, column: int
) -> None:
    path, error = _refused(project, env, text)
    assert (error.source, error.line, error.column) == (str(path), line, column)
    assert str(error).startswith(f"{path}:{line}:{column}: ")


def test_the_project_file_is_named_in_its_errors(project: Path, env: dict[str, str]) -> None:
    path = project / ".hive" / "config.yaml"
    path.write_text("# project\nopenai: [\n")
    with pytest.raises(ConfigError) as caught:
        load_config(project, env, schema=CONFIG_SCHEMA)
    assert caught.value.source == str(path)
    assert caught.value.line == 3


@pytest.mark.parametrize(
    ("text", "key", "line", "words"),
    [
        ("openai: 5\n", "openai", 1, "mapping"),
        ("# c\nanthropic:\n  - a\n", "anthropic", 3, "mapping"),
        ("chatBehavior:\n  maxOutputTokens: many\n", "chatBehavior.maxOutputTokens", 2, "whole number"),
        ("chatBehavior:\n  maxOutputTokens: 10.5\n", "chatBehavior.maxOutputTokens", 2, "whole number"),
        ("chatBehavior:\n  maxOutputTokens: 0\n", "chatBehavior.maxOutputTokens", 2, "greater than zero"),
        ("approval:\n  timeoutSeconds: -1\n", "approval.timeoutSeconds", 2, "negative"),
        ("approval:\n  timeoutSeconds: true\n", "approval.timeoutSeconds", 2, "number"),
        ("ollama:\n  enabled: maybe\n", "ollama.enabled", 2, "true or false"),
        ("openai:\n  model: {a: 1}\n", "openai.model", 2, "text"),
        ("chatBehavior:\n  reasoningEffort: extreme\n", "chatBehavior.reasoningEffort", 2, "extra_high"),
        ("skills:\n  roots:\n    - a\n    - {b: 1}\n", "skills.roots.1", 4, "text"),
        ("delegation:\n  agents: [a]\n", "delegation.agents.0", 2, "mapping"),
        ("defaultProvider: [openai]\n", "defaultProvider", 1, "text"),
        ("permissions: deny\n", "permissions", 1, "mapping"),
        ("lmsupply: {}\nlocal: {}\n", "local", 2, "same section"),
    ],
)
def test_a_value_of_the_wrong_type_names_the_file_line_and_key(
    project: Path, env: dict[str, str], text: str, key: str, line: int, words: str
) -> None:
    path, error = _refused(project, env, text)
    assert (error.source, error.line, error.key) == (str(path), line, key)
    assert words in str(error)
    assert str(path) in str(error)


def test_the_top_level_must_be_a_mapping(project: Path, env: dict[str, str]) -> None:
    _global(env, "- openai\n- anthropic\n")
    with pytest.raises(ConfigError, match="top level must be a mapping") as caught:
        load_config(project, env, schema=CONFIG_SCHEMA)
    assert caught.value.line == 1


def test_a_file_that_is_not_utf8_is_an_error(project: Path, env: dict[str, str]) -> None:
    path = _global(env, b"openai:\n  model: \xff\xfe\n")
    with pytest.raises(ConfigError, match="UTF-8") as caught:
        load_config(project, env, schema=CONFIG_SCHEMA)
    assert caught.value.source == str(path)


def test_recursive_aliases_are_an_error_not_a_hang(project: Path, env: dict[str, str]) -> None:
    _global(env, "permissions: &a\n  read: *a\n")
    with pytest.raises(ConfigError, match="contains it"):
        load_config(project, env, schema=CONFIG_SCHEMA)


def test_unknown_keys_warn_with_file_and_line(project: Path, env: dict[str, str]) -> None:
    path = _global(
        env,
        "openai:\n  model: m\n  temperature: 0.2\ngpustack:\n  model: x\nmystery: 1\n",
    )
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert [(w.key, w.source, w.line, w.column) for w in loaded.warnings] == [
        ("openai.temperature", str(path), 3, 3),
        ("gpustack", str(path), 4, 1),
        ("mystery", str(path), 6, 1),
    ]
    assert "did you mean 'gpuStack'" in loaded.warnings[1].message
    assert str(loaded.warnings[0]).startswith(f"{path}:3:3: ")
    # Unknown keys are ignored, known ones next to them are kept.
    assert loaded.get("openai.model") == "m"
    assert loaded.get("openai.temperature") is None
    assert loaded.get("gpuStack.model") is None


def test_an_empty_file_and_null_sections_are_fine(project: Path, env: dict[str, str]) -> None:
    _global(env, "# only a comment\n")
    (project / ".hive" / "config.yaml").write_text("openai:\nbudget: ~\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.warnings == ()
    assert loaded.get("budget.stopOnLimit") is True


def test_text_fields_keep_what_was_written(project: Path, env: dict[str, str]) -> None:
    # YAML would read these as numbers or booleans; a text field keeps the characters as written.
    _global(env, "openai:\n  apiKey: 0x1F\n  model: 4.10\nollama:\n  model: no\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("openai.apiKey") == "0x1F"
    assert loaded.get("openai.model") == "4.10"
    assert loaded.get("ollama.model") == "no"


def test_merge_keys_and_anchors_are_understood(project: Path, env: dict[str, str]) -> None:
    _global(
        env,
        "base: &base\n  model: shared\n  endpoint: http://h\nxai:\n  <<: *base\n  model: own\n",
    )
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("xai.model") == "own"
    assert loaded.get("xai.endpoint") == "http://h"
    assert [w.key for w in loaded.warnings] == ["base"]
