"""``hive get`` shows the effective value and where it comes from: a file and line, an environment variable, or
the default; a bare ``hive get`` lists every key set anywhere, secrets masked as ``hive config show`` masks them."""

from __future__ import annotations

from cli_harness import Workspace

KEY = "sk-abcdefghijklmnop"


def test_a_value_from_the_environment_is_shown_with_its_variable(ws: Workspace) -> None:
    result = ws.run("get", "openai.model", env={"OPENAI_MODEL": "gpt-env"})
    assert result.code == 0, result
    assert result.stdout == "openai.model = gpt-env  # environment OPENAI_MODEL\n"


def test_a_value_from_a_file_names_the_file_and_line(ws: Workspace) -> None:
    project = ws.project / ".hive" / "config.yaml"
    project.write_text("# the project's\nopenai:\n  model: gpt-project\n", encoding="utf-8")
    result = ws.run("get", "openai.model")
    assert result.code == 0, result
    assert result.stdout == f"openai.model = gpt-project  # {project}:3\n"


def test_a_default_is_shown_as_the_default(ws: Workspace) -> None:
    result = ws.run("get", "compaction.goalReminder")
    assert result.code == 0, result
    assert result.stdout == "compaction.goalReminder = true  # default\n"


def test_bare_get_lists_every_key_set_anywhere_with_secrets_masked(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    assert ws.run("set", "chatBehavior.maxOutputTokens", "4096").code == 0
    result = ws.run("get", env={"OPENAI_API_KEY": KEY, "OPENAI_MODEL": "gpt-env"})
    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert "openai.apiKey = sk-a...mnop  # environment OPENAI_API_KEY" in lines, result
    assert "openai.model = gpt-env  # environment OPENAI_MODEL" in lines
    assert f"chatBehavior.maxOutputTokens = 4096  # {config}:2" in lines
    assert KEY not in result.stdout + result.stderr
    assert not any(line.endswith("# default") for line in lines)
    raw = ws.run("get", "openai.apiKey", "--raw", env={"OPENAI_API_KEY": KEY})
    assert raw.stdout == f"openai.apiKey = {KEY}  # environment OPENAI_API_KEY\n"


def test_a_key_nothing_sets_says_so(ws: Workspace) -> None:
    result = ws.run("get", "openai.apiKey")
    assert result.code == 1, result
    assert result.stdout == ""
    assert "openai.apiKey is not set" in result.stderr
