"""Showing a turn to a person: streamed text, compact tool lines, thinking and token usage.

On a terminal (and without ``--plain``) the reply is rendered as Markdown while it streams, and a progress line
shows while hive waits for the model (loading a local model included) or a tool. Redirected or ``--plain``
output is the reply's plain text, written as it arrives.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import TextIO

import msgspec

from hive_cli.spinner import Spinner
from hive_core.context import PreparedRequest
from hive_protocol import (
    AddendumEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    HitlRequestEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
    TurnEndEvent,
)

__all__ = ["TextRenderer", "window_use"]

_MARKDOWN = re.compile(r"(?m)^\s*(#{1,6} |[-*+] |\d+\. |```|> |\|)|\*\*[^*\n]+\*\*|`[^`\n]+`")
"""Signs that a reply is Markdown worth rendering (headings, lists, code, quotes, tables, bold)."""

_DIM, _RED, _GREEN, _YELLOW, _RESET = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"


def window_use(prepared: PreparedRequest) -> str:
    """How full the window was for a request: ``context: 12,345 / 131,072 tokens (9%)``."""
    window = prepared.window.tokens
    share = round(100 * prepared.estimated_tokens / window) if window else 0
    return f"context: {prepared.estimated_tokens:,} / {window:,} tokens ({share}%)"


class TextRenderer:
    """Writes the reply to stdout as it streams; tool calls, thinking and notes go to stderr.

    stdout holds the reply alone, so ``hive -p ... > answer.txt`` captures just the answer. Colour is used only
    on a terminal and never with ``plain``.
    """

    def __init__(
        self,
        *,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        plain: bool = False,
        show_thinking: bool = False,
        show_tokens: bool = False,
        stream: bool = True,
        spinner: Spinner | None = None,
    ) -> None:
        self.out = stdout or sys.stdout
        self.err = stderr or sys.stderr
        self.color = not plain and self.err.isatty()
        self.show_thinking = show_thinking
        self.show_tokens = show_tokens
        self.stream = stream
        self._buffer: list[str] = []
        self._line_open = False
        self._thinking_open = False
        self.markdown = not plain and self.out.isatty()
        """Render replies as Markdown (a terminal, not ``--plain``)."""
        self._spinner = spinner or (Spinner(self.err) if not plain and self.err.isatty() else None)
        self._showing: str | None = None
        self._held = 0
        self._reply: list[str] = []
        self.last_request: Callable[[], PreparedRequest | None] = lambda: None
        """The turn's last request as the context manager prepared it; with ``show_tokens`` its window use is
        shown at the turn's end."""

    def begin_turn(self) -> None:
        """A turn starts: show progress until the model answers."""
        self._progress("thinking…")

    def _progress(self, label: str) -> None:
        self._showing = label
        if self._spinner is not None and not self._held:
            self._spinner.show(label)

    @contextmanager
    def screen(self) -> Generator[None]:
        """Hold the terminal for a question (an approval, an agent's question): the progress line is cleared and
        not drawn while it is held, then the latest progress comes back."""
        self._held += 1
        if self._spinner is not None:
            self._spinner.hide()
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._showing is not None and self._spinner is not None:
                self._spinner.show(self._showing)

    def _end_markdown(self) -> None:
        """A stretch of reply ended: redraw it as Markdown where that helps and the terminal still shows it."""
        text = "".join(self._reply)
        self._reply.clear()
        if not text.strip() or not _MARKDOWN.search(text):
            return
        size = shutil.get_terminal_size()
        rows = sum(max(1, -(-len(line) // max(size.columns, 1))) for line in text.split("\n"))
        if self.stream:
            if rows >= size.lines:
                return  # part of it has scrolled away: leave the plain text as it is
            self.out.write(f"\r\x1b[{rows - 1}A\x1b[J" if rows > 1 else "\r\x1b[J")
        from rich.console import Console
        from rich.markdown import Markdown

        Console(file=self.out, width=size.columns).print(Markdown(text), end="")
        self.out.flush()

    def _paint(self, code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if self.color else text

    def _note(self, text: str) -> None:
        self._end_line()
        self.err.write(text + "\n")
        self.err.flush()

    def _end_line(self) -> None:
        if self._thinking_open:
            self.err.write("\n")
            self._thinking_open = False
        if self._reply:
            self._end_markdown()
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def __call__(self, event: Event) -> None:
        self._showing = None
        if self._spinner is not None:
            self._spinner.hide()
        if isinstance(event, TextDeltaEvent):
            if self._thinking_open:
                self.err.write("\n")
                self._thinking_open = False
            if self.markdown:
                self._reply.append(event.content)
            if self.stream:
                self.out.write(event.content)
                self.out.flush()
                self._line_open = not event.content.endswith("\n")
            else:
                self._buffer.append(event.content)
        elif isinstance(event, ThinkingDeltaEvent):
            if not self.show_thinking:
                self._progress("thinking…")
            else:
                if not self._thinking_open:
                    self.err.write(self._paint(_DIM, "thinking: "))
                self.err.write(self._paint(_DIM, event.content))
                self.err.flush()
                self._thinking_open = True
        elif isinstance(event, ToolStartEvent):
            arguments = (
                event.input if isinstance(event.input, str) else msgspec.json.encode(event.input).decode()
            )
            if len(arguments) > 100:
                arguments = arguments[:97] + "..."
            self._note(self._paint(_DIM, f"→ {event.tool} {arguments}"))
            self._progress(f"running {event.tool}…")
        elif isinstance(event, ToolEndEvent):
            first = (event.output or "").strip().splitlines()[:1]
            summary = first[0][:100] if first else ""
            if event.success:
                self._note(self._paint(_GREEN, f"✓ {event.tool}") + self._paint(_DIM, f" {summary}"))
            else:
                mark = f"✗ {event.tool}" + (f" ({event.refusal})" if event.refusal else "")
                self._note(self._paint(_RED, mark) + f" {summary}")
            self._progress("thinking…")
        elif isinstance(event, HitlRequestEvent):
            pass  # the terminal approver draws its own prompt
        elif isinstance(event, FallbackEvent):
            self._note(self._paint(_YELLOW, f"! provider {event.kind}: {event.message}"))
        elif isinstance(event, AddendumEvent):
            self._note(self._paint(_DIM, event.content))
        elif isinstance(event, ErrorEvent):
            self._note(
                self._paint(_RED, f"error: {event.message}") + (f" [{event.code}]" if event.code else "")
            )
        elif isinstance(event, TurnEndEvent):
            if self._buffer:
                if self.markdown and _MARKDOWN.search("".join(self._reply)):
                    self._line_open = True  # the Markdown is printed by _end_line, without a final newline
                else:
                    self.out.write("".join(self._buffer))
                    self._line_open = not self._buffer[-1].endswith("\n")
                self._buffer.clear()
            self._end_line()
            if event.stop_reason not in (None, "completed"):
                self._note(self._paint(_YELLOW, f"(stopped: {event.stop_reason})"))
            if self.show_tokens and event.input_tokens is not None:
                self._note(
                    self._paint(
                        _DIM,
                        f"tokens: {event.input_tokens} in, {event.output_tokens} out, {event.total_tokens} total",
                    )
                )
            if self.show_tokens and (prepared := self.last_request()) is not None:
                self._note(self._paint(_DIM, window_use(prepared)))
