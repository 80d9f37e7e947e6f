"""Asking the person at the terminal during a turn, with no thread reading stdin behind anyone's back.

A terminal that can draw gets prompt_toolkit (imported only then, from :mod:`hive_cli._terminal_app`, so a one-shot
run that asks nothing never loads it): :func:`choose` is the approval's modal choice (single keys, no
default, Esc or Ctrl+C cancels, a refusal takes a reason) and :func:`ask_line` a line of text. A dumb terminal, a
pipe or a test's stream gets :func:`read_line`: the event loop waits until the descriptor is readable and reads it
there, so a cancelled question leaves nothing behind that would go on eating keys.

:func:`discard_typeahead` drops what was typed before a question was drawn (an Enter pressed while the reply
streamed is no answer).
"""

from __future__ import annotations

import io
import os
import sys
import termios
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextlib import nullcontext
from contextlib import suppress
from dataclasses import dataclass
from typing import Final
from typing import Literal
from typing import TextIO

import anyio

__all__ = [
    "Choice",
    "Picked",
    "TerminalAsker",
    "ask_line",
    "can_draw",
    "choose",
    "discard_typeahead",
    "page",
    "read_line",
]

Picked = Literal["once", "always", "reject", "stop"]
"""An approval's answer: approve once, always, reject, reject and stop the turn."""

KEYS: Final[dict[str, Picked]] = {"y": "once", "a": "always", "n": "reject", "s": "stop"}
"""The key of each answer."""


@dataclass(frozen=True, slots=True)
class Choice:
    """What the person answered an approval with."""

    picked: Picked
    """The answer."""
    reason: str = ""
    """The reason given with a refusal (empty when none was typed)."""
    cancelled: bool = False
    """Esc or Ctrl+C (or the input closed) rather than a key of the choice: rejected, and the turn stops."""


class TerminalAsker:
    """What asks the person at the terminal during a turn (the approver, the questioner) holds: the streams it
    asks on, whether a person is there to ask, the screen it holds while asking, and a lock so that one question
    is on the terminal at a time."""

    def __init__(self, *, stdin: TextIO | None, stderr: TextIO | None, interactive: bool | None) -> None:
        self._stdin = stdin or sys.stdin
        self._stderr = stderr or sys.stderr
        self.interactive = (
            interactive if interactive is not None else (sys.stdin.isatty() and sys.stdout.isatty())
        )
        """Whether a person can be asked (by default: when stdin and stdout are both terminals)."""
        self.screen: Callable[[], AbstractContextManager[object]] = nullcontext
        """Held while a question is on the terminal, so whatever draws progress there stops drawing."""
        self._lock = anyio.Lock()


def _fileno(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (OSError, ValueError, io.UnsupportedOperation):
        return None


def can_draw(stdin: TextIO, stderr: TextIO) -> bool:
    """Whether prompt_toolkit can ask here: ``stdin`` and ``stderr`` real terminals that are not dumb."""
    fd_in, fd_err = _fileno(stdin), _fileno(stderr)
    return (
        fd_in is not None
        and fd_err is not None
        and os.isatty(fd_in)
        and os.isatty(fd_err)
        and os.environ.get("TERM", "").lower() not in ("dumb", "unknown")  # prompt_toolkit's own test
    )


def discard_typeahead(stdin: TextIO) -> None:
    """Drop every key typed on ``stdin``'s terminal that nobody read yet: the kernel's pending input and what
    prompt_toolkit kept from its last read."""
    fd = _fileno(stdin)
    if fd is None or not os.isatty(fd):
        return
    with suppress(termios.error, OSError):
        termios.tcflush(fd, termios.TCIFLUSH)
    if "prompt_toolkit" not in sys.modules:
        return  # nothing read ahead by a prompt_toolkit that was never imported
    from prompt_toolkit.input import create_input
    from prompt_toolkit.input.typeahead import clear_typeahead

    with suppress(OSError, ValueError):
        clear_typeahead(create_input(stdin))


async def read_line(stdin: TextIO) -> str | None:
    """The next line of ``stdin``, ``None`` at its end. A descriptor is read in the event loop once readable, so
    a cancelled read takes nothing more from it; a stream without one (a test's) is read directly."""
    fd = _fileno(stdin)
    if fd is None:
        return stdin.readline() or None
    data = bytearray()
    while b"\n" not in data:
        await anyio.wait_readable(fd)
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace") or None


async def ask_line(prompt: str, stdin: TextIO, stderr: TextIO) -> str | None:
    """One line typed at a terminal that can draw, after ``prompt``; ``None`` at Ctrl+C or Ctrl+D."""
    from hive_cli import _terminal_app

    return await _terminal_app.ask_line(prompt, stdin, stderr)


async def choose(stdin: TextIO, stderr: TextIO, *, diff: str | None = None, title: str = "diff") -> Choice:
    """Ask for one of the :data:`KEYS` on the line below what was printed: a single key answers, nothing is
    chosen by default (Enter alone answers nothing), ``n`` asks for a reason on a line of its own (``n because
    …`` typed in one go lands there too), Esc or Ctrl+C cancels. With ``diff``, ``d`` shows it in
    :func:`page` and asks again."""
    while True:
        from hive_cli import _terminal_app

        choice = await _terminal_app.choice(stdin, stderr, pageable=diff is not None)
        if choice is not None:
            return choice
        await page(diff or "", title, stdin, stderr)


async def page(text: str, title: str, stdin: TextIO, stderr: TextIO) -> None:
    """Show ``text`` whole in a scrollable view until ``q``, Esc or Enter."""
    from hive_cli import _terminal_app

    await _terminal_app.page(text, title, stdin, stderr)
