"""Showing a turn to a person: streamed text, compact tool lines, thinking and token usage.

On a terminal (and without ``--plain`` or ``NO_COLOR``) the reply is rendered as Markdown while it streams, a
progress line shows while hive waits for the model (loading a local model included) or a tool, a file tool's
result says how many lines it changed and a command's shows its first lines of output. Redirected or ``--plain``
output is the reply's plain text, written as it arrives, with no escape code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import TextIO
from typing import cast

import msgspec

from hive_cli.cells import clip
from hive_cli.diffs import FILE_TOOLS
from hive_cli.diffs import Change
from hive_cli.diffs import change_counts
from hive_cli.diffs import counts
from hive_cli.diffs import diff_preview
from hive_cli.diffs import read_text
from hive_cli.spinner import Spinner
from hive_core.context import PreparedRequest
from hive_core.tool_names import EXECUTE_COMMAND
from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import FallbackEvent
from hive_protocol import HitlRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

if TYPE_CHECKING:
    from hive_cli.markdown_stream import MarkdownStream
    from hive_core.loop import AgentSession

__all__ = ["Held", "TextRenderer", "no_color", "window_use"]

_DIM, _RED, _GREEN, _YELLOW, _RESET = "\x1b[2m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[0m"

COMMAND_TOOLS: Final = frozenset({EXECUTE_COMMAND, "bash", "shell"})
"""Tools whose result shows the first lines of the command's output."""

OUTPUT_LINES: Final = 5
"""Lines of a command's output shown under its result line."""

_ARGUMENT_CELLS: Final = 100


def no_color() -> bool:
    """Whether ``NO_COLOR`` asks for output without escape codes (set and not empty, as no-color.org says)."""
    return bool(os.environ.get("NO_COLOR"))


def _dumb_terminal() -> bool:
    return os.environ.get("TERM", "").strip().lower() in ("dumb", "unknown")


@dataclass(frozen=True, slots=True)
class Held:
    """What a question holding the terminal may use: whether to colour what it prints."""

    color: bool


def window_use(prepared: PreparedRequest) -> str:
    """How full the window was for a request: ``context: 12,345 / 131,072 tokens (9%)``."""
    window = prepared.window.tokens
    share = round(100 * prepared.estimated_tokens / window) if window else 0
    return f"context: {prepared.estimated_tokens:,} / {window:,} tokens ({share}%)"


def _command_output(output: str) -> tuple[str, list[str]]:
    """A command result's status line (``Exit code: 0``) and the lines it printed (section headers dropped)."""
    lines = output.rstrip("\n").splitlines()
    if not lines:
        return "", []
    status, rest = lines[0], lines[1:]
    if rest and rest[0] == "Output:":
        rest = rest[1:]
    return status, rest


class TextRenderer:
    """Writes the reply to stdout as it streams; tool calls, thinking and notes go to stderr.

    stdout holds the reply alone, so ``hive -p ... > answer.txt`` captures just the answer. Colour, Markdown and
    the progress line are used only on a terminal and never with ``plain`` or ``NO_COLOR``.
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
        root: Path | None = None,
    ) -> None:
        self.out = stdout or sys.stdout
        self.err = stderr or sys.stderr
        plain = plain or no_color()
        self.color = not plain and self.err.isatty()
        self.show_thinking = show_thinking
        self.show_tokens = show_tokens
        self.stream = stream
        self.root = root or Path.cwd()
        """Where relative paths of file tools start (the working directory)."""
        self._buffer: list[str] = []
        self._line_open = False
        self._thinking_open = False
        self.markdown = not plain and self.out.isatty() and not _dumb_terminal()
        """Render replies as Markdown while they stream (a terminal that can redraw, not ``--plain``); on a dumb
        terminal the reply is written as it arrives, since a block could not be redrawn once rendered."""
        # A dumb terminal cannot erase a line: a spinner there would leave its frames in the transcript.
        self._spinner = spinner or (
            Spinner(self.err) if not plain and self.err.isatty() and not _dumb_terminal() else None
        )
        self._showing: str | None = None
        self._held = 0
        self._reply: MarkdownStream | None = None
        self._before: dict[str, tuple[str, str | None]] = {}
        """A file tool's path and the file's text when the call started, by call id."""
        self._answered = False
        """Whether this turn showed anything (text, a tool, an error, a note)."""
        self._changes: list[Change] = []
        """What the file tools of the running turn changed, in order."""
        self.last_changes: list[Change] = []
        """What the file tools of the last finished turn changed, in order (``/diff`` shows it)."""
        self.diff_hint = ""
        """Said after a file tool's counts when set: how to see its diff (the interactive mode's ``/diff``)."""
        self._conversation: AgentSession | None = None
        """The built-in loop's conversation being shown, whose last request's window use ``show_tokens`` shows."""

    def follow(self, conversation: AgentSession | None) -> None:
        """Show the turns of ``conversation`` (``None``: a coding-agent CLI's, which has no window to show)."""
        self._conversation = conversation

    def last_request(self) -> PreparedRequest | None:
        """The followed conversation's last request as its context manager prepared it (``None`` before any, or
        when no built-in conversation is followed); with ``show_tokens`` its window use is shown at a turn's end."""
        return self._conversation.context.last if self._conversation is not None else None

    def begin_turn(self) -> None:
        """A turn starts: show progress until the model answers."""
        self._progress("thinking…")

    def _progress(self, label: str) -> None:
        self._showing = label
        if self._spinner is not None and not self._held:
            self._spinner.show(label)

    @contextmanager
    def screen(self) -> Generator[Held]:
        """Hold the terminal for a question (an approval, an agent's question): the reply so far is printed, the
        progress line is cleared and not drawn while it is held, then the latest progress comes back."""
        self._held += 1
        self._end_line()
        if self._spinner is not None:
            self._spinner.hide()
        try:
            yield Held(color=self.color)
        finally:
            self._held -= 1
            if not self._held and self._showing is not None and self._spinner is not None:
                self._spinner.show(self._showing)

    def _markdown(self) -> MarkdownStream:
        if self._reply is None:
            # Imported on first use: Markdown pulls in markdown-it and pygments, which -p into a pipe never needs.
            from rich.console import Console

            from hive_cli.markdown_stream import MarkdownStream

            self._reply = MarkdownStream(Console(file=self.out, highlight=False))
        return self._reply

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
        if self._reply is not None:
            self._reply.close()
        if self._line_open:
            self.out.write("\n")
            self.out.flush()
            self._line_open = False

    def _text(self, content: str) -> None:
        if not content:
            return
        if self._thinking_open:
            self.err.write("\n")
            self._thinking_open = False
        if not self.stream:
            self._buffer.append(content)
        elif self.markdown:
            self._markdown().feed(content)
        else:
            self.out.write(content)
            self.out.flush()
            self._line_open = not content.endswith("\n")

    def _tool_start(self, event: ToolStartEvent) -> None:
        arguments = event.input if isinstance(event.input, str) else msgspec.json.encode(event.input).decode()
        self._note(self._paint(_DIM, f"→ {event.tool} {clip(arguments, _ARGUMENT_CELLS)}"))
        if event.tool in FILE_TOOLS and isinstance(event.input, dict):
            path: Any = cast("dict[str, Any]", event.input).get("path")
            if isinstance(path, str) and path:
                self._before[event.call_id] = (path, read_text(self._resolve(path)))
        self._progress(f"running {event.tool}…")

    def _resolve(self, path: str) -> Path:
        target = Path(path).expanduser()
        return target if target.is_absolute() else self.root / target

    def _tool_end(self, event: ToolEndEvent) -> None:
        output = event.output or ""
        before = self._before.pop(event.call_id, None)
        if not event.success:
            first = output.strip().splitlines()[:1]
            mark = f"✗ {event.tool}" + (f" ({event.refusal})" if event.refusal else "")
            self._note(self._paint(_RED, mark) + f" {clip(first[0], _ARGUMENT_CELLS) if first else ''}")
            return
        done = self._paint(_GREEN, f"✓ {event.tool}")
        if before is not None:
            path, text = before
            after = read_text(self._resolve(path))
            added, removed = counts(text, after)
            if after is not None:
                self._changes.append(Change(path, text, after))
            hint = self._paint(_DIM, f"  ({self.diff_hint})") if self.diff_hint and after is not None else ""
            self._note(f"{done} {path}  {change_counts(added, removed, color=self.color)}{hint}")
            return
        if event.tool in COMMAND_TOOLS:
            status, lines = _command_output(output)
            shown = [self._paint(_DIM, f"  │ {clip(line, _ARGUMENT_CELLS)}") for line in lines[:OUTPUT_LINES]]
            if len(lines) > OUTPUT_LINES:
                shown.append(self._paint(_DIM, f"  … {len(lines) - OUTPUT_LINES} more lines"))
            self._note("\n".join([done + self._paint(_DIM, f" {status}"), *shown]))
            return
        first = output.strip().splitlines()[:1]
        self._note(done + self._paint(_DIM, f" {clip(first[0], _ARGUMENT_CELLS) if first else ''}"))

    def __call__(self, event: Event) -> None:
        self._showing = None
        if self._spinner is not None:
            self._spinner.hide()
        if isinstance(event, TextDeltaEvent | ToolStartEvent | ErrorEvent | AddendumEvent | FallbackEvent):
            self._answered = self._answered or not isinstance(event, TextDeltaEvent) or bool(event.content)
        if isinstance(event, TextDeltaEvent):
            self._text(event.content)
        elif isinstance(event, ThinkingDeltaEvent):
            if not self.show_thinking:
                if self._reply is not None:
                    self._reply.close()  # the progress line is not drawn under a live display
                self._progress("thinking…")
            else:
                if not self._thinking_open:
                    self.err.write(self._paint(_DIM, "thinking: "))
                self.err.write(self._paint(_DIM, event.content))
                self.err.flush()
                self._thinking_open = True
        elif isinstance(event, ToolStartEvent):
            self._tool_start(event)
        elif isinstance(event, ToolEndEvent):
            self._tool_end(event)
            self._progress("thinking…")
        elif isinstance(event, HitlRequestEvent):
            pass  # the terminal approver draws its own prompt
        elif isinstance(event, FallbackEvent):
            self._note(self._paint(_YELLOW, f"! provider {event.kind}: {event.message}"))
        elif isinstance(event, AddendumEvent):
            self._note(self._paint(_DIM, event.content))
        elif isinstance(event, ErrorEvent):
            # The one-line form of every hive failure (``hive: file:line: …`` for a config error).
            self._note(
                self._paint(_RED, f"hive: {event.message}") + (f" ({event.code})" if event.code else "")
            )
        elif isinstance(event, TurnEndEvent):
            self._turn_end(event)

    def diffs(self) -> str:
        """The diffs of what the last turn's file tools changed (coloured on a colour terminal), or a line
        saying it changed nothing."""
        if not self.last_changes:
            return "the last turn changed no file through hive's tools"
        lines: list[str] = []
        for change in self.last_changes:
            lines.extend(diff_preview(change, color=self.color, limit=None))
        return "\n".join(lines)

    def _turn_end(self, event: TurnEndEvent) -> None:
        if self._buffer:
            text = "".join(self._buffer)
            self._buffer.clear()
            if self.markdown:
                self._markdown().feed(text)
            else:
                self.out.write(text)
                self._line_open = not text.endswith("\n")
        self._end_line()
        self._before.clear()
        self.last_changes, self._changes = self._changes, []
        if not self._answered and event.stop_reason == "completed":
            # An empty turn would otherwise look like a hang that ended: say so (a CLI may have failed inside).
            self._note(self._paint(_DIM, "(no reply)"))
        self._answered = False
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
