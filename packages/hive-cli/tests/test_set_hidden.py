"""``hive set`` of a secret without a value: asked for hidden at a terminal, a one-line error without one."""

from __future__ import annotations

import yaml
from cli_harness import Workspace

KEY = "sk-typed-0123456789abcdef"


def test_a_secret_without_a_value_is_asked_for_hidden_at_a_terminal(ws: Workspace) -> None:
    with ws.terminal("set", "openai.apiKey") as terminal:
        terminal.expect("openai.apiKey (hidden): ")
        terminal.type(KEY + "\r")
        assert terminal.wait() == 0, terminal.output
        shown = terminal.output
    assert KEY not in shown  # neither echoed while typed nor in the confirmation
    assert "openai.apiKey = sk-t" in shown
    written = yaml.safe_load((ws.home / "config.yaml").read_text(encoding="utf-8"))
    assert written == {"openai": {"apiKey": KEY}}
    assert (ws.home / "config.yaml").stat().st_mode & 0o777 == 0o600


def test_nothing_typed_changes_nothing(ws: Workspace) -> None:
    with ws.terminal("set", "anthropic.api_key") as terminal:
        terminal.expect("anthropic.apiKey (hidden): ")
        terminal.type("\r")
        assert terminal.wait() == 1, terminal.output
        assert "nothing entered; anthropic.apiKey not changed" in terminal.output
    assert not (ws.home / "config.yaml").exists()


def test_without_a_terminal_it_is_a_one_line_error(ws: Workspace) -> None:
    result = ws.run("set", "openai.apiKey")
    assert result.code == 1, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("hive: openai.apiKey is asked for at a terminal, and there is none")
    assert not (ws.home / "config.yaml").exists()


def test_a_key_that_is_not_secret_needs_its_value(ws: Workspace) -> None:
    result = ws.run("set", "openai.model")
    assert result.code == 2, result
    assert result.stderr == "hive: openai.model needs a value: hive set openai.model VALUE\n"
