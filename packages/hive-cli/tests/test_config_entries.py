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


def test_every_key_config_show_lists_is_read(home: Path, tmp_path: Path) -> None:
    # A key the schema keeps for a later version is marked ``used=False`` (and warned about when set); today
    # every one is acted on, the last of them (budget, delegation, toolRetrieval...) included.
    loaded = load_config(tmp_path, {"HIVE_HOME": str(home)}, schema=CONFIG_SCHEMA)
    used = {entry.key: entry.used for entry in config_entries(loaded)}
    assert "budget.stopOnLimit" in used
    assert "delegation.maxConcurrent" in used
    assert [key for key, is_used in used.items() if not is_used] == []
