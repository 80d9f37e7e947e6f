"""Asking the person at the terminal during a turn, with no thread reading stdin behind anyone's back.

A terminal that can draw gets prompt_toolkit: :func:`choose` is the approval's modal choice (single keys, no
default, Esc or Ctrl+C cancels, a refusal takes a reason) and :func:`ask_line` a line of text. A dumb terminal, a
pipe or a test's stream gets :func:`read_line`: the event loop waits until the descriptor is readable and reads it
there, so a cancelled question leaves nothing behind that would go on eating keys.

:func:`discard_typeahead` drops what was typed before a question was drawn (an Enter pressed while the reply
streamed is no answer).
"""

from __future__ import annotations

import io
import os
import termios
from contextlib import suppress
from dataclasses import dataclass
from typing import Final, Literal, TextIO

import anyio
from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import create_input
from prompt_toolkit.input.typeahead import clear_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.key_binding.bindings.scroll import scroll_page_down
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer, HSplit, Layout, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import create_output
from prompt_toolkit.utils import is_dumb_terminal
from prompt_toolkit.widgets import TextArea

__all__ = ["Choice", "Picked", "ask_line", "can_draw", "choose", "discard_typeahead", "page", "read_line"]

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
        and not is_dumb_terminal()
    )


def discard_typeahead(stdin: TextIO) -> None:
    """Drop every key typed on ``stdin``'s terminal that nobody read yet: the kernel's pending input and what
    prompt_toolkit kept from its last read."""
    fd = _fileno(stdin)
    if fd is None or not os.isatty(fd):
        return
    with suppress(termios.error, OSError):
        termios.tcflush(fd, termios.TCIFLUSH)
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
    session: PromptSession[str] = PromptSession(input=create_input(stdin), output=create_output(stderr))
    try:
        return await session.prompt_async(prompt, handle_sigint=False)
    except (KeyboardInterrupt, EOFError):
        return None


async def choose(stdin: TextIO, stderr: TextIO, *, diff: str | None = None, title: str = "diff") -> Choice:
    """Ask for one of the :data:`KEYS` on the line below what was printed: a single key answers, nothing is
    chosen by default (Enter alone answers nothing), ``n`` asks for a reason on a line of its own (``n because
    …`` typed in one go lands there too), Esc or Ctrl+C cancels. With ``diff``, ``d`` shows it in
    :func:`page` and asks again."""
    while True:
        choice = await _choice(stdin, stderr, pageable=diff is not None)
        if choice is not None:
            return choice
        await page(diff or "", title, stdin, stderr)


async def _choice(stdin: TextIO, stderr: TextIO, *, pageable: bool) -> Choice | None:
    """One run of the choice; ``None`` when ``d`` asked for the diff."""
    reasoning = False
    hint = ""
    reason = Buffer(multiline=False)
    reason_window = Window(
        BufferControl(
            reason, input_processors=[BeforeInput("  reason for the model (Enter sends; may be empty): ")]
        ),
        height=1,
    )

    def line() -> StyleAndTextTuples:
        if reasoning:
            return [("", "  rejected")]
        shown: StyleAndTextTuples = [("bold", "  y/a/n/s? ")]
        if not hint:
            shown.append(
                ("", "Esc rejects and stops" + (" · d shows the whole diff, scrollable" if pageable else ""))
            )
        if hint:
            shown.append(("", hint))
        return shown

    choosing = Condition(lambda: not reasoning)
    bindings = KeyBindings()

    def answer(key: str, picked: Picked) -> None:
        def pick(event: KeyPressEvent) -> None:
            nonlocal reasoning
            if picked == "reject":
                reasoning = True
                event.app.layout.focus(reason_window)
                return
            event.app.exit(result=Choice(picked))

        for typed in (key, key.upper()):
            bindings.add(typed, filter=choosing)(pick)

    for key, picked in KEYS.items():
        answer(key, picked)

    @bindings.add("enter", filter=~choosing)
    def _send_reason(event: KeyPressEvent) -> None:
        event.app.exit(result=Choice("reject", reason.text.strip()))

    @bindings.add(Keys.Any, filter=choosing)
    @bindings.add("enter", filter=choosing)
    def _no_answer(event: KeyPressEvent) -> None:
        nonlocal hint
        hint = "press y, a, n or s" + (", d for the diff" if pageable else "") + " (Esc rejects and stops)"

    @bindings.add("d", filter=choosing & Condition(lambda: pageable))
    def _view(event: KeyPressEvent) -> None:
        event.app.exit(result=None)

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d", filter=choosing)
    def _cancel(event: KeyPressEvent) -> None:
        event.app.exit(result=Choice("stop", cancelled=True))

    layout = Layout(
        HSplit(
            [
                Window(FormattedTextControl(line, show_cursor=True), height=1),
                ConditionalContainer(reason_window, filter=~choosing),
            ]
        )
    )
    app: Application[Choice | None] = Application(
        layout=layout,
        key_bindings=bindings,
        input=create_input(stdin),
        output=create_output(stderr),
        erase_when_done=True,
    )
    return await app.run_async(handle_sigint=False)


async def page(text: str, title: str, stdin: TextIO, stderr: TextIO) -> None:
    """Show ``text`` whole in a scrollable full-screen view (arrows, PgUp, PgDn, Home, End) until q, Esc or
    Enter; the terminal's screen comes back as it was."""
    area = TextArea(text=text, read_only=True, scrollbar=True, line_numbers=False)
    status = f" {title} · ↑ ↓ PgUp PgDn Home End scroll · q returns to the question "
    bindings = KeyBindings()

    @bindings.add("q")
    @bindings.add("Q")
    @bindings.add("escape", eager=True)
    @bindings.add("enter")
    @bindings.add("c-c")
    def _close(event: KeyPressEvent) -> None:
        event.app.exit()

    @bindings.add("home")
    @bindings.add("g")
    def _top(event: KeyPressEvent) -> None:
        area.buffer.cursor_position = 0

    @bindings.add("end")
    @bindings.add("G")
    def _bottom(event: KeyPressEvent) -> None:
        area.buffer.cursor_position = len(area.buffer.text)

    @bindings.add("space")
    def _next_page(event: KeyPressEvent) -> None:
        scroll_page_down(event)

    layout = Layout(
        HSplit([area, Window(FormattedTextControl(status), height=1, style="reverse")]), focused_element=area
    )
    app: Application[None] = Application(
        layout=layout,
        key_bindings=bindings,
        input=create_input(stdin),
        output=create_output(stderr),
        full_screen=True,
    )
    await app.run_async(handle_sigint=False)
