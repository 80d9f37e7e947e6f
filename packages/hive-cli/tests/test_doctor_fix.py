"""``hive doctor`` reports what is wrong with hive's own files; ``hive doctor --fix`` repairs it and says what it
did: a missing home (created 0700), files holding keys readable by others (0600), a legacy settings.json (migrated
into config.yaml)."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

import yaml
from cli_harness import Workspace

KEY = "sk-legacy-0123456789abcdef"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def files_section(stdout: str) -> list[str]:
    """The lines of the report's Files section."""
    lines = stdout.split("\nFiles\n", 1)[1].split("\n\n", 1)[0]
    return lines.splitlines()


def test_a_missing_home_is_reported_then_created_0700(ws: Workspace) -> None:
    shutil.rmtree(ws.home)
    reported = ws.run("doctor")
    assert f"  ! the hive home {ws.home} does not exist" in files_section(reported.stdout)
    assert "`hive doctor --fix` repairs what is marked ! under Files" in reported.stdout
    assert not ws.home.exists()
    fixed = ws.run("doctor", "--fix")
    assert f"  ✓ fixed: created {ws.home} (mode 0700)" in files_section(fixed.stdout)
    assert mode(ws.home) == 0o700
    again = ws.run("doctor", "--fix")
    assert files_section(again.stdout) == [
        "  ✓ the hive home and the files holding keys are in order: nothing to fix"
    ]


def test_files_holding_keys_are_made_0600(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    config.write_text("openai:\n  apiKey: sk-x\n", encoding="utf-8")
    config.chmod(0o644)
    env = ws.project / ".env"
    env.write_text("# a comment\nANTHROPIC_API_KEY=sk-y\n", encoding="utf-8")
    env.chmod(0o664)
    harmless = ws.project / ".hive" / "config.yaml"
    harmless.write_text("chatBehavior:\n  maxOutputTokens: 100\n", encoding="utf-8")
    harmless.chmod(0o644)
    reported = files_section(ws.run("doctor").stdout)
    assert len(reported) == 2, reported
    assert f"  ! {config} holds keys but its mode is 0644: other users can read it" in reported
    assert mode(config) == 0o644  # reporting changes nothing
    fixed = files_section(ws.run("doctor", "--fix").stdout)
    assert fixed == [
        f"  ✓ fixed: {config}: mode 0644 → 0600",
        f"  ✓ fixed: {env}: mode 0664 → 0600",
    ]
    assert (mode(config), mode(env), mode(harmless)) == (0o600, 0o600, 0o644)


def test_a_legacy_settings_json_is_migrated_into_config_yaml(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    config.write_text("# mine\nopenai:\n  model: gpt-kept\n", encoding="utf-8")
    config.chmod(0o600)
    legacy = ws.home / "settings.json"
    legacy.write_text(
        json.dumps(
            {
                "openai": {"apiKey": KEY, "model": "gpt-old"},
                "chatBehavior": {"maxOutputTokens": 2048},
                "lmsupply": {"enabled": False},
            }
        ),
        encoding="utf-8",
    )
    legacy.chmod(0o600)
    reported = ws.run("doctor")
    assert f"  ! a legacy {legacy} is not migrated to config.yaml" in files_section(reported.stdout)
    assert legacy.exists()
    fixed = files_section(ws.run("doctor", "--fix").stdout)
    assert fixed == [
        f"  ✓ fixed: migrated 3 value(s) of {legacy} into {config}; kept config.yaml's openai.model; "
        "the old file is now settings.json.migrated"
    ]
    text = config.read_text(encoding="utf-8")
    assert text.startswith("# mine\n")
    assert yaml.safe_load(text) == {
        "openai": {"model": "gpt-kept", "apiKey": KEY},
        "chatBehavior": {"maxOutputTokens": 2048},
        "lmsupply": {"enabled": False},
    }
    assert not legacy.exists()
    assert (ws.home / "settings.json.migrated").exists()
    assert mode(config) == 0o600
    assert ws.run("get", "openai.apiKey", "--raw").stdout.startswith(f"openai.apiKey = {KEY}  # ")


def test_a_legacy_value_that_cannot_be_migrated_is_named_and_the_file_kept(ws: Workspace) -> None:
    legacy = ws.home / "settings.json"
    legacy.write_text(
        json.dumps(
            {"openai": {"model": "m"}, "permissions": {"edit": [{"pattern": "*", "action": "allow"}]}}
        ),
        encoding="utf-8",
    )
    legacy.chmod(0o600)
    fixed = files_section(ws.run("doctor", "--fix").stdout)
    assert len(fixed) == 1
    assert fixed[0].endswith("not migrated (copy by hand, then delete settings.json): permissions.edit")
    assert legacy.exists()
    assert yaml.safe_load((ws.home / "config.yaml").read_text(encoding="utf-8")) == {"openai": {"model": "m"}}


def test_a_legacy_file_that_is_not_json_is_an_error_left_alone(ws: Workspace) -> None:
    legacy = ws.home / "settings.json"
    legacy.write_text("{not json", encoding="utf-8")
    legacy.chmod(0o600)
    result = ws.run("doctor", "--fix")
    assert result.code == 1, result
    (line,) = files_section(result.stdout)
    assert line.startswith(
        f"  ✗ a legacy {legacy} is not migrated to config.yaml: cannot fix ({legacy} is not JSON"
    )
    assert legacy.read_text(encoding="utf-8") == "{not json"
