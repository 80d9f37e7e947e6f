"""Typing ``/`` at the interactive prompt opens the commands' menu by itself; an unknown command is answered with
the closest one; ``/help`` says what Ctrl+C really does. Driven on a real pseudo-terminal, against the scripted
model, which must never see a command."""

from __future__ import annotations

import pytest
from cli_harness import Terminal
from cli_harness import Workspace
from cli_harness import model_requests

from hive_cli.slash_commands import ask_pick
from hive_cli.slash_commands import help_text
from hive_cli.slash_commands import listed_number
from hive_cli.slash_commands import unknown_command_message
from hive_cli.slash_menu import typing_a_command
from hive_conformance.model_server import ScriptedModelServer

PROMPT_MARK = "\x1b[?2004h"
"""prompt_toolkit turns bracketed paste on when it is ready for a message."""


def _ready(term: Terminal) -> str:
    return term.expect(PROMPT_MARK)


def test_a_slash_opens_the_menu_and_a_typo_gets_a_suggestion(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with ws.use(server).terminal(term="xterm-256color") as term:
        _ready(term)
        term.type("/")
        # No Tab typed: the menu shows the commands with their help.
        term.expect("list this project's sessions")
        term.expect("toggle planning mode")
        term.type("mdoel\r")
        term.expect("unknown command /mdoel — did you mean /model?")
        _ready(term)
        term.type("\x04")
        assert term.wait() == 0
    assert model_requests(server) == []


def test_the_menu_opens_only_while_a_command_name_is_typed() -> None:
    assert typing_a_command("/")
    assert typing_a_command("/mo")
    assert not typing_a_command("/model gpt")
    assert not typing_a_command("fix /usr")
    assert not typing_a_command("")


def test_suggestions_are_for_close_names_only() -> None:
    assert "did you mean /sessions?" in unknown_command_message("/sesions")
    assert "did you mean /exit?" in unknown_command_message("/exti")
    assert "did you mean" not in unknown_command_message("/xyzzy")


def test_help_says_what_ctrl_c_does() -> None:
    shown = help_text()
    assert "twice: leave" not in shown
    assert "at the prompt: clear the line" in shown
    assert "Ctrl+D, /exit" in shown


@pytest.mark.parametrize(
    ("answer", "index"), [("1", 0), ("3", 2), ("0", None), ("4", None), ("-1", None), ("x", None), ("", None)]
)
def test_a_listed_number_names_an_entry_only_within_the_list(answer: str, index: int | None) -> None:
    assert listed_number(answer, 3) == index


def test_a_pick_is_asked_with_its_range_and_a_cancel_is_an_empty_answer() -> None:
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return " 2 \n"

    assert ask_pick(ask, "resume which", 5) == "2"
    assert asked == ["resume which (1-5, empty to cancel)? "]

    def cancel(question: str) -> str:
        raise KeyboardInterrupt

    def end(question: str) -> str:
        raise EOFError

    assert ask_pick(cancel, "resume which", 5) == ""
    assert ask_pick(end, "resume which", 5) == ""
