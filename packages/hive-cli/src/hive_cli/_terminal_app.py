"""The prompt_toolkit side of :mod:`hive_cli.terminal_prompt`: the approval's modal choice, a line prompt and the
scrollable diff view. Imported only when a question is drawn at a terminal."""

from __future__ import annotations

from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import create_input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding import KeyPressEvent
from prompt_toolkit.key_binding.bindings.scroll import scroll_page_down
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import ConditionalContainer
from prompt_toolkit.layout import HSplit
from prompt_toolkit.layout import Layout
from prompt_toolkit.layout import Window
from prompt_toolkit.layout.controls import BufferControl
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.layout.processors import BeforeInput
from prompt_toolkit.output import create_output
from prompt_toolkit.widgets import TextArea

from hive_cli.terminal_prompt import KEYS
from hive_cli.terminal_prompt import Choice
from hive_cli.terminal_prompt import Picked

__all__ = ["ask_line", "choice", "page"]


async def ask_line(prompt: str, stdin: TextIO, stderr: TextIO) -> str | None:
    """One line typed at a terminal that can draw, after ``prompt``; ``None`` at Ctrl+C or Ctrl+D."""
    session: PromptSession[str] = PromptSession(input=create_input(stdin), output=create_output(stderr))
    try:
        return await session.prompt_async(prompt, handle_sigint=False)
    except (KeyboardInterrupt, EOFError):
        return None


async def choice(stdin: TextIO, stderr: TextIO, *, pageable: bool) -> Choice | None:
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
