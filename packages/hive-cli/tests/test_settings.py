"""``hive set``, ``get``, ``unset`` and ``config``: the global file under ``HIVE_HOME``, masking, and the
merged view with each value's origin."""

from __future__ import annotations

import yaml
from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer

KEY = "sk-abcdefghijklmnop"


def test_set_get_and_unset_edit_the_global_file_and_mask_keys(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    result = ws.run("set", "openai.apiKey", KEY)
    assert result.code == 0, result
    assert result.stdout == f"openai.apiKey = sk-a...mnop  ({config})\n"
    assert KEY not in result.stdout + result.stderr
    assert yaml.safe_load(config.read_text(encoding="utf-8")) == {"openai": {"apiKey": KEY}}

    # snake_case keys become camelCase; numbers are stored as numbers.
    assert ws.run("set", "chat_behavior.max_output_tokens", "8192").code == 0
    assert ws.run("set", "lmstudio.enabled", "true").code == 0
    stored = yaml.safe_load(config.read_text(encoding="utf-8"))
    assert stored["chatBehavior"] == {"maxOutputTokens": 8192}
    assert stored["lmstudio"] == {"enabled": True}

    assert ws.run("get", "openai.apiKey").stdout == f"openai.apiKey = sk-a...mnop  # {config}:2\n"
    assert ws.run("get", "openai.apiKey", "--raw").stdout == f"openai.apiKey = {KEY}  # {config}:2\n"
    everything = ws.run("get")
    assert everything.code == 0
    assert {line.split("  # ")[0] for line in everything.stdout.splitlines()} == {
        "openai.apiKey = sk-a...mnop",
        "chatBehavior.maxOutputTokens = 8192",
        "lmstudio.enabled = true",
        "lmsupply.enabled = false",  # the test environment's LMSUPPLY_ENABLED
    }

    removed = ws.run("unset", "openai.apiKey")
    assert (removed.code, removed.stdout) == (0, "removed openai.apiKey\n")
    assert "openai" not in yaml.safe_load(config.read_text(encoding="utf-8"))
    again = ws.run("unset", "openai.apiKey")
    assert again.code == 1
    assert "was not set" in again.stderr
    missing = ws.run("get", "openai.apiKey")
    assert missing.code == 1
    assert missing.stdout == ""
    assert "not set" in missing.stderr


def test_an_unknown_key_is_written_with_a_warning(ws: Workspace) -> None:
    result = ws.run("set", "foo.bar", "1")
    assert result.code == 0, result
    assert "warning" in result.stderr
    assert "foo.bar" in result.stderr


def test_config_path_and_show_name_each_value_and_where_it_came_from(ws: Workspace) -> None:
    paths = ws.run("config", "path")
    assert paths.code == 0, paths
    assert paths.stdout.splitlines() == [
        f"global:  {ws.home / 'config.yaml'}",
        f"project: {ws.project / '.hive' / 'config.yaml'}",
        f".env:    {ws.project / '.env'}",
    ]
    assert ws.run("set", "openai.apiKey", KEY).code == 0
    (ws.project / ".hive" / "config.yaml").write_text(
        "openai:\n  endpoint: http://proj/v1\n", encoding="utf-8"
    )
    (ws.project / ".env").write_text("OPENAI_MODEL=from-dotenv\n", encoding="utf-8")
    shown = ws.run("config", "show", env={"OPENAI_MODEL": "from-env"})
    assert shown.code == 0, shown
    lines = shown.stdout.splitlines()
    assert f"openai.apiKey = sk-a...mnop  # {ws.home / 'config.yaml'}:2" in lines
    assert f"openai.endpoint = http://proj/v1  # {ws.project / '.hive' / 'config.yaml'}:2" in lines
    # The user's environment wins over the project's .env.
    [model] = [line for line in lines if line.startswith("openai.model = ")]
    assert model == "openai.model = from-env  # environment OPENAI_MODEL"
    assert "lmsupply.enabled = false  # environment LMSUPPLY_ENABLED" in lines
    assert "compaction.targetRatio = 0.7  # default" in lines
    assert "budget.stopOnLimit = true  # default" in lines  # every key is read: none says "not used"
    assert "not used by this version" not in shown.stdout
    assert KEY not in shown.stdout
    raw = ws.run("config", "show", "--raw")
    assert f"openai.apiKey = {KEY}" in raw.stdout


def test_a_malformed_config_file_is_exit_1_naming_the_file(ws: Workspace) -> None:
    (ws.home / "config.yaml").write_text("openai: [unclosed\n", encoding="utf-8")
    result = ws.run("config", "show")
    assert result.code == 1, result
    assert str(ws.home / "config.yaml") in result.stderr
    prompt = ws.run("-p", "hi", "-o", "json")
    assert prompt.code == 1
    assert str(ws.home / "config.yaml") in prompt.line_document()["error"]


def test_values_set_with_hive_set_configure_the_provider(ws: Workspace, server: ScriptedModelServer) -> None:
    for key, value in (
        ("openai.apiKey", "test"),
        ("openai.model", MODEL),
        ("openai.endpoint", server.url + "/v1"),
    ):
        assert ws.run("set", key, value).code == 0
    server.add(text("Configured."))
    result = ws.run("-p", "hi", "-o", "json")
    assert result.code == 0, result
    assert result.line_document()["content"] == "Configured."
    assert model_requests(server)[0].headers["authorization"] == "Bearer test"
