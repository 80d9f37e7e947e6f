"""The lines of ``hive config show``: every value with where it came from, secrets masked unless raw."""

from __future__ import annotations

from pathlib import Path

from hive_cli.config_entries import config_entries
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA


def test_entries_for_config_show(home: Path, tmp_path: Path) -> None:
    home.mkdir()
    (home / "config.yaml").write_text("openai:\n  apiKey: sk-abcdefghijklmnopqrstuvwxyz\n")
    loaded = load_config(tmp_path, {"HIVE_HOME": str(home)}, schema=CONFIG_SCHEMA)
    shown = {entry.key: entry for entry in config_entries(loaded, include_defaults=False)}
    assert list(shown) == ["openai.apiKey"]
    assert shown["openai.apiKey"].value == "sk-a...wxyz"
    assert shown["openai.apiKey"].origin.layer == "global"
    raw = {entry.key: entry.value for entry in config_entries(loaded, raw=True)}
    assert raw["openai.apiKey"] == "sk-abcdefghijklmnopqrstuvwxyz"
    assert raw["chatBehavior.maximumIterationsPerRequest"] == "10"
    assert raw["budget.stopOnLimit"] == "true"


def test_keys_nothing_reads_yet_are_marked_not_used(home: Path, tmp_path: Path) -> None:
    loaded = load_config(tmp_path, {"HIVE_HOME": str(home)}, schema=CONFIG_SCHEMA)
    used = {entry.key: entry.used for entry in config_entries(loaded)}
    assert used["chatBehavior.maximumIterationsPerRequest"] is True
    assert used["openai.endpoint"] is True
    assert used["compaction.targetRatio"] is True
    assert used["compaction.useAnchoredCompaction"] is True
    assert used["toolRetrieval.maxTools"] is True
    assert used["budget.stopOnLimit"] is True
    assert used["chatBehavior.maximumConsecutiveErrorsPerRequest"] is True
    assert used["ollama.carryToolImages"] is True
