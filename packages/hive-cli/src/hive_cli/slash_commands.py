"""The interactive mode's slash commands: one table that ``/help`` prints and completion offers.

A line starting with ``/name`` is always a command, answered at the terminal and never sent to the model; an
unknown one is answered too. ``/usr/bin is…`` is no command (a name followed by ``/`` is a path).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "COMMANDS",
    "SlashCommand",
    "ask_pick",
    "command_of",
    "help_text",
    "listed_number",
    "parse_command",
    "unknown_command_message",
]


@dataclass(frozen=True)
class SlashCommand:
    """One command of the interactive mode."""

    name: str
    """The command with its slash: ``/model``."""
    arguments: str
    """What it takes, for people: ``NAME``, ``[ID]``; empty when nothing."""
    help: str
    """One line of what it does."""
    aliases: tuple[str, ...] = ()
    """Other spellings that run it (``/quit``)."""


COMMANDS: Final[tuple[SlashCommand, ...]] = (
    SlashCommand("/help", "", "this help"),
    SlashCommand("/clear", "", "start a fresh conversation: a new hive session (the old one can be resumed)"),
    SlashCommand("/compact", "", "compact the conversation now (what is sent; the session keeps everything)"),
    SlashCommand("/model", "[NAME]", "the model in use; with NAME, switch to it for the next turns"),
    SlashCommand(
        "/agent", "[NAME]", "the agent backend in use; with NAME (or hive), switch to it in a new session"
    ),
    SlashCommand("/agents", "", "the coding-agent CLI in use and the warm-session pool's counters"),
    SlashCommand("/resume", "[ID]", "pick one of this project's sessions and continue it"),
    SlashCommand("/sessions", "", "list this project's sessions"),
    SlashCommand("/session", "", "this session's id (continue it later with hive -r ID)"),
    SlashCommand(
        "/tokens", "", "the tokens this process's turns have used so far, and their cost where known"
    ),
    SlashCommand("/plan", "", "toggle planning mode (only read-only tools run)"),
    SlashCommand("/diff", "", "the whole diff of every file hive's tools changed in the last turn"),
    SlashCommand(
        "/undo",
        "",
        "restore the files the last turn changed with hive's file tools (again: one further back)",
    ),
    SlashCommand(
        "/rewind",
        "[N]",
        "pick a turn and restore the files to how they were before it (shows the change first)",
    ),
    SlashCommand(
        "/permissions",
        "[revoke N]",
        'list what "always" answers allowed in this session; revoke one by number',
    ),
    SlashCommand("/exit", "", "leave (also exit, quit, Ctrl+D)", aliases=("/quit",)),
)
"""Every command, in the order ``/help`` lists them."""

_BY_NAME: Final = {name: command for command in COMMANDS for name in (command.name, *command.aliases)}

_COMMAND: Final = re.compile(r"(/[A-Za-z][\w-]*)(?:\s+(.*))?$", re.DOTALL)
"""What a slash command looks like: ``/name`` alone or followed by arguments (``/usr/bin`` is not one)."""


def parse_command(text: str) -> tuple[str, str] | None:
    """``(name, argument text)`` when ``text`` (stripped) is a slash command, known or not; else ``None``."""
    match = _COMMAND.match(text)
    if match is None:
        return None
    return match.group(1), (match.group(2) or "").strip()


def command_of(name: str) -> SlashCommand | None:
    """The command ``name`` (with its slash) runs, aliases included; ``None`` for an unknown one."""
    return _BY_NAME.get(name)


def unknown_command_message(name: str) -> str:
    """What an unknown ``name`` is answered with: the closest command when one is close (``/mdoel``: ``/model``)."""
    close = difflib.get_close_matches(name.lower(), list(_BY_NAME), n=1, cutoff=0.6)
    if close:
        return f"unknown command {name} — did you mean {close[0]}? (not sent to the model)"
    return f"unknown command {name} (not sent to the model); /help lists the commands"


def help_text() -> str:
    """What ``/help`` prints: the table, then the keys and the rules of a message."""
    width = max(len(f"{c.name} {c.arguments}".strip()) for c in COMMANDS) + 2
    lines = [f"  {f'{c.name} {c.arguments}'.strip():<{width}} {c.help}" for c in COMMANDS]
    lines += [
        "",
        "  @path            attach a project file to the message (the read rules apply)",
        "  Enter            send · Alt+Enter (Esc Enter) new line · a paste is one message",
        "  Tab              complete /commands and @paths · Up/Down: history",
        "  Ctrl+C           cancel the running turn (again before it ends: leave) · at the prompt: clear the line",
        "  Ctrl+D, /exit    leave (Ctrl+C at the prompt never leaves)",
        "A line starting with / is always a command: an unknown one is answered here, never sent to the model",
        "(start the line with a space to send it as it is).",
    ]
    return "\n".join(lines) + "\n"


def ask_pick(ask: Callable[[str], str], question: str, count: int) -> str:
    """Ask which of ``count`` listed entries a command is for (``question``: ``resume which``); the answer,
    stripped, or ``""`` when the person cancels (an empty line, the end of input or Ctrl+C)."""
    try:
        return ask(f"{question} (1-{count}, empty to cancel)? ").strip()
    except (EOFError, KeyboardInterrupt):
        return ""


def listed_number(answer: str, count: int) -> int | None:
    """The index (from 0) of the entry ``answer`` names by its number in a list of ``count``; ``None`` when it is
    no such number."""
    return int(answer) - 1 if answer.isdigit() and 1 <= int(answer) <= count else None
