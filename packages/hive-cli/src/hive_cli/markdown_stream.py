"""A reply rendered as Markdown while it streams: each finished block (a paragraph, a list, a heading, a code
fence) is printed once, rendered; the block still arriving is shown in rich's live display below them.

Feeding a delta only splits lines; rendering happens when a block ends and in the live display's own refresh
(a few times a second), so the cost per delta stays flat however fast the model streams. On a dumb terminal
there is no live display: blocks appear as they end.
"""

from __future__ import annotations

import re
from typing import Final

from rich.console import Console
from rich.console import ConsoleOptions
from rich.console import RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.segment import Segment
from rich.text import Text

__all__ = ["MARKDOWN_SIGNS", "MarkdownStream"]

MARKDOWN_SIGNS: Final = re.compile(r"(?m)^\s*(#{1,6} |[-*+] |\d+\. |```|~~~|> |\|)|\*\*[^*\n]+\*\*|`[^`\n]+`")
"""Signs that a block is Markdown worth rendering (headings, lists, code, quotes, tables, bold); a block without
them is printed as written, its line breaks kept."""

_FENCE: Final = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING: Final = re.compile(r"^\s{0,3}#{1,6}\s")
_REFRESH: Final = 8.0


class MarkdownStream:
    """Renders one stretch of reply onto ``console``: :meth:`feed` each delta, :meth:`close` at its end."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._lines: list[str] = []
        """The complete lines of the block still arriving."""
        self._partial = ""
        """The line being written (no newline yet)."""
        self._fence: str | None = None
        """The opening marker of the code fence the block is in."""
        self._blank = False
        """A blank line ended the last block: printed before the next one."""
        self._printed = False
        self._live: Live | None = None

    @property
    def pending(self) -> str:
        """The text of the block still arriving."""
        return "".join(self._lines) + self._partial

    def feed(self, delta: str) -> None:
        """Add ``delta`` to the reply; print any block it finishes."""
        if "\n" not in delta:
            self._partial += delta
        else:
            *complete, self._partial = (self._partial + delta).split("\n")
            for line in complete:
                self._line(line + "\n")
        if self._live is None and (self._lines or self._partial) and self._can_live():
            self._live = Live(
                console=self.console,
                get_renderable=lambda: _Tail(self.pending, self._fence),
                auto_refresh=True,
                refresh_per_second=_REFRESH,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
            # rich hides the cursor while live; a process ended by a signal would leave the person's terminal
            # without one, so it stays shown (as it was while raw text streamed).
            self.console.show_cursor(True)

    def close(self) -> None:
        """The stretch ended: print what is left of it and stop the live display."""
        if self._live is not None:  # cleared first, so the last block is printed once, not drawn and printed
            self._live.stop()
            self._live = None
        if self._partial:
            self._lines.append(self._partial)
            self._partial = ""
        self._commit()
        self._fence, self._blank, self._printed = None, False, False

    def _can_live(self) -> bool:
        return self.console.is_terminal and not self.console.is_dumb_terminal

    def _line(self, line: str) -> None:
        fence = _FENCE.match(line)
        if self._fence is not None:
            self._lines.append(line)
            if fence and fence.group(1)[0] == self._fence[0] and len(fence.group(1)) >= len(self._fence):
                self._fence = None
                self._commit()
            return
        if fence:
            self._commit()
            self._fence = fence.group(1)
            self._lines.append(line)
            return
        if not line.strip():
            self._commit()
            self._blank = self._printed
            return
        if _HEADING.match(line):
            self._commit()
            self._lines.append(line)
            self._commit()
            return
        self._lines.append(line)

    def _commit(self) -> None:
        block = "".join(self._lines)
        self._lines.clear()
        if not block.strip():
            return
        if self._blank:
            self.console.print()
            self._blank = False
        self.console.print(_Rendered(block))
        self._printed = True


def _rows(text: str, console: Console, options: ConsoleOptions, room: int | None = None) -> RenderResult:
    """``text`` rendered (as Markdown when it shows signs of it, else as written), without the blank rows the
    renderer puts around a block (the stream puts one blank line between blocks itself); the last ``room`` rows
    when given."""
    renderable = Markdown(text) if MARKDOWN_SIGNS.search(text) else Text(text.rstrip("\n"))
    rows = console.render_lines(renderable, options, pad=False)
    filled = [number for number, row in enumerate(rows) if "".join(part.text for part in row).strip()]
    if not filled:
        return
    rows = rows[filled[0] : filled[-1] + 1]
    if room is not None:
        rows = rows[-room:]
    for row in rows:
        yield from row
        yield Segment.line()


class _Rendered:
    """A finished block, rendered."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        return _rows(self.text, console, options)


class _Tail:
    """The block still arriving, rendered, its last screenful only (so the live display never overflows)."""

    def __init__(self, text: str, fence: str | None) -> None:
        self.text = text
        self.fence = fence

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.text.strip():
            return
        room = max(1, console.size.height - 2)
        text = self.text
        lines = text.split("\n")
        if len(lines) > room:  # render no more than can be seen: a long code fence stays cheap
            head = lines[0] + "\n" if self.fence is not None else ""
            text = head + "\n".join(lines[-room:])
        yield from _rows(text, console, options, room)
