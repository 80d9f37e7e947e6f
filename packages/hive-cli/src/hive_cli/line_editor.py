"""Reading the interactive mode's messages: prompt_toolkit line editing at a terminal, ``input()`` elsewhere.

At a terminal Enter sends, Alt+Enter (Esc Enter) inserts a new line, and a bracketed paste of several lines is one
message; Up and Down walk the history kept in the hive home; Tab completes ``/`` commands and ``@`` paths
(relative to the project). The editor owns the terminal only while it reads. During a turn (:meth:`hold_keys`)
what is typed is not echoed: it would land inside the streamed reply and break its redraw; it waits in the
terminal's input and shows at the next prompt, on a line of its own. An approval or a question asked during the
turn drops it (keys typed before a question was drawn answer nothing).
"""

from __future__ import annotations

import os
import sys
import termios
from collections.abc import Generator
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from contextlib import suppress
from pathlib import Path
from typing import Final
from typing import Protocol

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.completion import Completer
from prompt_toolkit.completion import Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding import KeyPressEvent
from prompt_toolkit.utils import is_dumb_terminal

from .attachments import MENTION_START
from .slash_commands import COMMANDS
from .slash_menu import TYPING_A_COMMAND

__all__ = ["HiveCompleter", "LineEditor", "PlainLineEditor", "PromptLineEditor", "line_editor"]

_PATHS_SHOWN: Final = 200
"""Completions of one ``@`` path at most (a huge directory is not listed whole)."""


class LineEditor(Protocol):
    """Reads one message (raising ``EOFError`` at Ctrl+D, ``KeyboardInterrupt`` at Ctrl+C) or one answer."""

    def read(self, prompt: str) -> str:
        """The next message, several lines when the person made it so."""
        ...

    def ask(self, prompt: str) -> str:
        """One answer to a question (no history, no completion)."""
        ...

    def hold_keys(self) -> AbstractContextManager[None]:
        """Held while a turn runs: keys typed meanwhile wait for the next prompt instead of being drawn."""
        ...


class PlainLineEditor:
    """``input()``: for a stdin or stdout that is no terminal, or a dumb one."""

    def read(self, prompt: str) -> str:
        """The next line of stdin."""
        return input(prompt)

    def ask(self, prompt: str) -> str:
        """The next line of stdin."""
        return input(prompt)

    @contextmanager
    def hold_keys(self) -> Generator[None]:
        """Nothing to hold: without a line editor the terminal echoes as it always does."""
        yield


class _History(FileHistory):
    """The history file, where a file that cannot be read or written is no history rather than a traceback."""

    def load_history_strings(self) -> Iterable[str]:
        try:
            return list(super().load_history_strings())
        except (OSError, UnicodeDecodeError):
            return []

    def store_string(self, string: str) -> None:
        with suppress(OSError):
            super().store_string(string)


class HiveCompleter(Completer):
    """Completes a ``/`` command at the start of the line and an ``@`` path anywhere, relative to ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        """The commands or paths the word before the cursor can become."""
        before = document.text_before_cursor
        if before.startswith("/") and not any(ch.isspace() for ch in before):
            for command in COMMANDS:
                for name in (command.name, *command.aliases):
                    if name.startswith(before):
                        yield Completion(name, start_position=-len(before), display_meta=command.help)
            return
        word = before.split()[-1] if before and not before[-1].isspace() else ""
        if word.startswith(MENTION_START):
            yield from self._paths(word[len(MENTION_START) :])

    def _paths(self, partial: str) -> Iterator[Completion]:
        folder, _, prefix = partial.rpartition("/")
        base = self.root / folder if folder else self.root
        try:
            entries = sorted(os.scandir(base), key=lambda entry: entry.name)
        except OSError:
            return
        shown = 0
        for entry in entries:
            name = entry.name
            if not name.startswith(prefix) or (name.startswith(".") and not prefix.startswith(".")):
                continue
            with suppress(OSError):
                is_dir = entry.is_dir()
                completed = f"{folder}/{name}" if folder else name
                yield Completion(
                    completed + ("/" if is_dir else ""),
                    start_position=-len(partial),
                    display=name + ("/" if is_dir else ""),
                )
                shown += 1
            if shown >= _PATHS_SHOWN:
                return


def _bindings() -> KeyBindings:
    bindings = KeyBindings()

    @bindings.add("enter")
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            return
        buffer.validate_and_handle()

    @bindings.add("escape", "enter")
    def _new_line(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return bindings


class PromptLineEditor:
    """prompt_toolkit at a terminal: multi-line messages, history in ``history``, completion under ``root``."""

    def __init__(self, root: Path, history: Path) -> None:
        with suppress(OSError):
            history.parent.mkdir(parents=True, exist_ok=True)
        self._session: PromptSession[str] = PromptSession(
            history=_History(str(history)),
            completer=HiveCompleter(root),
            complete_while_typing=TYPING_A_COMMAND,
            multiline=True,
            key_bindings=_bindings(),
            prompt_continuation=lambda width, line, wrapped: "… ".rjust(width),
            enable_open_in_editor=False,
        )

    def read(self, prompt: str) -> str:
        """The next message."""
        return self._session.prompt(prompt)

    def ask(self, prompt: str) -> str:
        """One answer, read without the message history."""
        answer: PromptSession[str] = PromptSession()
        return answer.prompt(prompt)

    @contextmanager
    def hold_keys(self) -> Generator[None]:
        """Turn the terminal's echo off while held (the typed keys stay in its input, in order, for the next
        prompt), and back to what it was after."""
        fd = sys.stdin.fileno()
        try:
            saved = termios.tcgetattr(fd)
        except termios.error:
            yield
            return
        quiet = list(saved)
        quiet[3] = saved[3] & ~(termios.ECHO | termios.ECHONL)
        with suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
        try:
            yield
        finally:
            with suppress(termios.error):
                termios.tcsetattr(fd, termios.TCSANOW, saved)


def line_editor(root: Path, history: Path) -> LineEditor:
    """prompt_toolkit when stdin and stdout are both a terminal that can draw it, else ``input()``.

    A dumb terminal (``TERM=dumb``, an editor's shell buffer) gets ``input()``: prompt_toolkit's dumb mode writes
    the prompt before it takes the terminal, so a Ctrl+D typed at once could be lost.
    """
    if sys.stdin.isatty() and sys.stdout.isatty() and not is_dumb_terminal():
        return PromptLineEditor(root, history)
    return PlainLineEditor()
