"""A legacy ``settings.json`` in the hive home is migrated into ``config.yaml`` by the first command that runs,
saying so in one line on stderr: once (the old file becomes ``settings.json.migrated``), ``config.yaml``'s own
values winning, what cannot be copied named and the old file kept, a broken file a warning that stops nothing."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer

KEY = "sk-legacy-0123456789abcdef"


def legacy(ws: Workspace, document: object) -> Path:
    path = ws.home / "settings.json"
    path.write_text(json.dumps(document) if not isinstance(document, str) else document, encoding="utf-8")
    path.chmod(0o600)
    return path


def stored(ws: Workspace) -> object:
    return yaml.safe_load((ws.home / "config.yaml").read_text(encoding="utf-8"))


def test_the_first_command_migrates_once_and_says_so_on_stderr(ws: Workspace) -> None:
    old = legacy(
        ws, {"openai": {"apiKey": KEY, "model": "gpt-old"}, "chatBehavior": {"maxOutputTokens": 2048}}
    )
    config = ws.home / "config.yaml"
    first = ws.run("config", "show")
    assert first.code == 0, first
    assert first.stderr == (
        f"hive: migrated 3 value(s) of {old} into {config}; the old file is now settings.json.migrated\n"
    )
    assert str(old) not in first.stdout  # stdout is the command's own
    # The values read by this very run are the migrated ones.
    assert f"openai.model = gpt-old  # {config}:" in first.stdout
    assert f"chatBehavior.maxOutputTokens = 2048  # {config}:" in first.stdout
    assert stored(ws) == {
        "openai": {"apiKey": KEY, "model": "gpt-old"},
        "chatBehavior": {"maxOutputTokens": 2048},
    }
    assert not old.exists()
    assert (ws.home / "settings.json.migrated").is_file()
    assert config.stat().st_mode & 0o077 == 0  # it holds a key

    second = ws.run("config", "show")
    assert (second.code, second.stderr) == (0, "")
    assert second.stdout == first.stdout


def test_a_prompt_run_migrates_before_it_reads_the_configuration(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("hello"))
    # The legacy file names the provider: the run can only reach the scripted model through it.
    old = legacy(
        ws, {"openai": {"apiKey": "test", "model": MODEL, "endpoint": server.url + "/v1", "api": "responses"}}
    )
    result = ws.run("-p", "hi", "-o", "json")
    assert result.code == 0, result
    assert result.document()["content"] == "hello"
    assert result.stderr.startswith(f"hive: migrated 4 value(s) of {old} into ")
    assert result.stderr.count("\n") == 1
    assert len(model_requests(server)) == 1


def test_values_config_yaml_sets_win(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    config.write_text("# mine\nopenai:\n  model: gpt-kept  # chosen\n", encoding="utf-8")
    config.chmod(0o600)
    legacy(ws, {"openai": {"model": "gpt-old", "apiKey": KEY}})
    result = ws.run("get", "openai.model")
    assert result.code == 0, result
    assert result.stdout == f"openai.model = gpt-kept  # {config}:3\n"
    assert "kept config.yaml's openai.model" in result.stderr
    text_now = config.read_text(encoding="utf-8")
    assert text_now.startswith("# mine\nopenai:\n  model: gpt-kept  # chosen\n")
    assert stored(ws) == {"openai": {"model": "gpt-kept", "apiKey": KEY}}


def test_what_cannot_be_copied_is_named_the_file_kept_and_later_runs_only_remind(ws: Workspace) -> None:
    old = legacy(
        ws,
        {"openai": {"model": "m"}, "permissions": {"edit": [{"pattern": "*", "action": "allow"}]}},
    )
    first = ws.run("get", "openai.model")
    assert first.code == 0, first
    assert first.stdout.startswith("openai.model = m  # ")
    assert first.stderr.count("\n") == 1, first.stderr
    assert first.stderr.startswith(f"hive: migrated 1 value(s) of {old} into ")
    assert first.stderr.endswith("not migrated (copy by hand, then delete settings.json): permissions.edit\n")
    assert old.exists()

    second = ws.run("get", "openai.model")
    assert second.code == 0, second
    assert second.stderr == (
        f"hive: {old} still holds what could not be migrated to config.yaml (copy by hand, then delete it): "
        "permissions.edit\n"
    )
    assert stored(ws) == {"openai": {"model": "m"}}
    # doctor keeps reporting it, and changes nothing without --fix.
    doctor = ws.run("doctor")
    assert f"  ! a legacy {old} is not migrated to config.yaml" in doctor.stdout
    assert "migrated" not in doctor.stderr


def test_a_broken_settings_json_is_a_warning_and_hive_runs(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    old = legacy(ws, "{not json")
    server.add(text("still here"))
    ws.use(server)
    result = ws.run("-p", "hi", "-o", "json")
    assert result.code == 0, result
    assert result.document()["content"] == "still here"
    assert result.stderr.startswith(
        f"hive: warning: settings.json not migrated to config.yaml: {old} is not JSON"
    )
    assert result.stderr.count("\n") == 1, result.stderr
    assert old.read_text(encoding="utf-8") == "{not json"
    assert not (ws.home / "config.yaml").exists()
    shown = ws.run("config", "path")
    assert shown.code == 0, shown
    assert "is not JSON" in shown.stderr
