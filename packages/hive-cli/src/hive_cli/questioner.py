"""Questions answered at the terminal: the ``question_request`` of a coding-agent CLI in an interactive or ``-p`` run."""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

import anyio

from hive_cli.terminal_prompt import TerminalAsker
from hive_cli.terminal_prompt import ask_line
from hive_cli.terminal_prompt import can_draw
from hive_cli.terminal_prompt import discard_typeahead
from hive_cli.terminal_prompt import read_line
from hive_core.config import LoadedConfig
from hive_core.questions import DEFAULT_QUESTION_TIMEOUT
from hive_core.questions import Answers
from hive_core.questions import question_deadline
from hive_protocol import Question
from hive_protocol import QuestionRequestEvent

__all__ = [
    "DECLINED_AT_TERMINAL",
    "NO_TERMINAL",
    "QUESTION_TIMEOUT_KEY",
    "TerminalQuestioner",
    "question_timeout",
]

QUESTION_TIMEOUT_KEY = "chatBehavior.questionTimeoutSeconds"
"""The configuration key of the seconds an agent's question waits for its answer (``0``: no limit)."""

NO_TERMINAL = "no terminal to ask"
"""Why a question is declined when hive has no terminal to ask it at (``-p`` piped, ``-o json``, a script)."""
DECLINED_AT_TERMINAL = "declined at the terminal"
"""Why a question is declined when the person answered it with an empty line (or closed the input)."""

Settled = Callable[[QuestionRequestEvent, Answers | None, str | None], None]
"""Told how a request ended: its answers, or ``None`` and why it was declined."""


def question_timeout(config: LoadedConfig) -> float | None:
    """Seconds an agent's question waits for its answer, from :data:`QUESTION_TIMEOUT_KEY`: 30 minutes when
    unset, ``None`` (no limit) for ``0``. For the terminal's questioner and a served session's bridge alike."""
    value = config.get(QUESTION_TIMEOUT_KEY)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return DEFAULT_QUESTION_TIMEOUT
    return float(value) if value > 0 else None


class TerminalQuestioner(TerminalAsker):
    """Asks the person at the terminal each question in turn: its options numbered, a choice (or several, for a
    multiple-choice question) read by number, or free text where the question allows it.

    An empty answer declines the whole request, and so does no answer within :attr:`timeout`. Without a terminal
    on both stdin and stdout nothing is asked and every request is declined (:data:`NO_TERMINAL`), so a prompt
    never lands in a piped output stream and a script never hangs.
    """

    def __init__(
        self,
        *,
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
        interactive: bool | None = None,
        timeout: float | None = DEFAULT_QUESTION_TIMEOUT,
    ) -> None:
        super().__init__(stdin=stdin, stderr=stderr, interactive=interactive)
        self.timeout = timeout
        """Seconds a request waits for its answers (``chatBehavior.questionTimeoutSeconds``); ``None`` or ``0``
        waits as long as the turn runs."""
        self.on_request: Callable[[QuestionRequestEvent], None] | None = None
        """Told of each request before it is asked or declined (the ``-o jsonl`` record)."""
        self.on_settled: Settled | None = None
        """Told how each request ended (the ``-o`` records of its answers or its decline)."""

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        """Ask the questions of ``request`` (one request at a time); ``None`` when declined or not asked."""
        if self.on_request is not None:
            self.on_request(request)
        if not self.interactive:
            return self._settle(request, None, NO_TERMINAL)
        if not request.questions:
            return self._settle(request, None, "the request held no question")
        async with self._lock:
            with self.screen():
                limit = question_deadline(self.timeout)
                answers: Answers | None = None
                with anyio.move_on_after(limit) as waited:
                    answers = await self._ask(request)
                if waited.cancelled_caught:
                    self._write(f"\n  (no answer within {limit:g} s: declined)\n")
                    return self._settle(request, None, f"no answer within {limit:g} s")
        return self._settle(request, answers, None if answers is not None else DECLINED_AT_TERMINAL)

    def _settle(
        self, request: QuestionRequestEvent, answers: Answers | None, reason: str | None
    ) -> Answers | None:
        if self.on_settled is not None:
            self.on_settled(request, answers, reason)
        return answers

    async def _ask(self, request: QuestionRequestEvent) -> Answers | None:
        answers: Answers = {}
        discard_typeahead(self._stdin)  # keys typed before the question was drawn answer nothing
        for question in request.questions:
            self._write(self._panel(question))
            prompt = f"╰─ {self._hint(question)}: "
            while True:
                line = await self._read(prompt)
                if line is None or not line.strip():
                    self._write("  (declined)\n")
                    return None
                chosen = self.interpret(question, line)
                if chosen is not None:
                    answers[question.question] = chosen
                    break
                prompt = f"  {self._hint(question)}: "
        return answers

    @staticmethod
    def interpret(question: Question, line: str) -> list[str] | None:
        """The labels (or the free text) ``line`` answers ``question`` with; ``None`` when it answers nothing."""
        text = line.strip()
        picks = [part.strip() for part in text.replace(",", " ").split()]
        count = len(question.options)
        if picks and all(pick.isdigit() and 1 <= int(pick) <= count for pick in picks):
            if len(picks) > 1 and not question.multi_select:
                return None
            labels: list[str] = []
            for pick in picks:
                label = question.options[int(pick) - 1].label
                if label not in labels:
                    labels.append(label)
            return labels
        for option in question.options:  # the label itself, typed out
            if option.label.casefold() == text.casefold():
                return [option.label]
        if question.allow_free_text or not question.options:
            return [text]
        return None

    def _hint(self, question: Question) -> str:
        count = len(question.options)
        if not count:
            return "type your answer (empty to decline)"
        choice = f"a number 1-{count}" if count > 1 else "1"
        if question.multi_select:
            choice += " (several: 1,3)"
        if question.allow_free_text:
            choice += ", or your own answer"
        return f"answer {choice}; empty to decline"

    def _panel(self, question: Question) -> str:
        lines = [
            "",
            f"╭─ question{f': {question.header}' if question.header else ''}",
            f"│ {question.question}",
        ]
        for number, option in enumerate(question.options, 1):
            description = f" - {option.description}" if option.description else ""
            lines.append(f"│   {number}. {option.label}{description}")
        return "\n".join(lines) + "\n"

    def _write(self, text: str) -> None:
        self._stderr.write(text)
        self._stderr.flush()

    async def _read(self, prompt: str) -> str | None:
        """One answer after ``prompt``: prompt_toolkit at a terminal that can draw, the event loop's read of
        stdin elsewhere (no thread is left reading when the question is cancelled)."""
        if can_draw(self._stdin, self._stderr):
            return await ask_line(prompt, self._stdin, self._stderr)
        self._write(prompt)
        return await read_line(self._stdin)
