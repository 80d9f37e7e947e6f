"""One prompt, one turn, then exit: what ``hive -p`` and ``hive run`` both are, written once.

The message is the prompt given on the command line, after the text piped on stdin (read by
:func:`~hive_cli.piped_input.read_piped`: at most :data:`~hive_cli.piped_input.MAX_PIPED_BYTES`, never waiting on a
silent pipe). The turn is printed by a :class:`~hive_cli.turn_output.TurnOutput` (text, ``-o json`` or
``-o jsonl``), and the process exits with the README's codes: 0 done, 1 error (no prompt, too much on stdin, no
session, a refused attachment, a failed turn), 2 stopped short (a step or output limit, a stuck tool loop,
``--timeout``), 3 filtered, 130 cancelled, 143 SIGTERM. Every failure is printed in the output's form: a document
with ``error``, a last ``error`` record after ``start``, or one ``hive:`` line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from hive_protocol import UserMessageRequest

from .assemble import HostOptions
from .conversation import SessionChoice
from .driver import ForcedExit
from .driver import drive_turn
from .errors import USER_ERRORS
from .local_notice import say_local_model_notice
from .opening import OpenSession
from .opening import open_session
from .opening import terminal_prompts
from .piped_input import PipedInputTooLarge
from .piped_input import combine
from .piped_input import read_piped
from .questioner import TerminalQuestioner
from .summary import TurnSummary
from .summary import exit_code
from .turn_output import TurnOutput
from .turn_output import attached_prompt

__all__ = ["Completed", "OneShot", "message_with_stdin", "run_one_shot"]

Completed = Callable[[OpenSession, TurnSummary, str], None]
"""Called after a turn that exits 0, with its session, what it came to and the message sent (``--auto-commit``)."""


@dataclass(frozen=True)
class OneShot:
    """How one prompt is run: where its session comes from and what the command adds around the turn."""

    choice: SessionChoice | None = None
    """``-c``, ``-r ID``, ``--fork``; ``None``: a new session."""
    timeout: float | None = None
    """Seconds the turn may take (``hive run --timeout``); past them it exits 2 with ``stop_reason`` ``timeout``."""
    dry_run: bool = False
    """Say on stderr that nothing will be changed (the options already ask for planning mode)."""
    completed: Completed | None = None
    """What to do after a turn that exits 0."""


def message_with_stdin(prompt: str | None) -> str | None:
    """The one-shot's message: the text piped on stdin (when stdin is no terminal), then ``prompt``; ``None`` when
    there is neither. Raises :class:`~hive_cli.piped_input.PipedInputTooLarge` past the limit."""
    if sys.stdin.isatty():
        return prompt or None
    piped = read_piped()
    if prompt:
        return combine(piped, prompt)
    return piped


def run_one_shot(prompt: str | None, options: HostOptions, printer: TurnOutput, shot: OneShot) -> int:
    """Run ``prompt`` (with what is piped on stdin) as one turn of a session opened with ``options``, printed by
    ``printer``; return the exit code."""
    try:
        message = message_with_stdin(prompt)
    except PipedInputTooLarge as exc:
        return _before_session(printer, str(exc))
    if message is None:
        given = "" if sys.stdin.isatty() else " (stdin was empty)"
        return _before_session(printer, f"no prompt: give it as words, with -p, or on stdin{given}")
    options.preload_model = True
    return anyio.run(_one_turn, message, options, printer, shot)


def _before_session(printer: TurnOutput, message: str) -> int:
    """A failure before any session: exit 1, printed in the output's form (``-o jsonl`` still starts with
    ``start``, which then names no session)."""
    if printer.output == "jsonl":
        printer.begin(None)
    return printer.failed(message, stop_reason="error", code=1)


def _questioner(session: OpenSession) -> TerminalQuestioner | None:
    return next((p for p in session.prompters if isinstance(p, TerminalQuestioner)), None)


async def _one_turn(message: str, options: HostOptions, printer: TurnOutput, shot: OneShot) -> int:
    try:
        session = open_session(options, shot.choice, prompts=terminal_prompts())
    except USER_ERRORS as exc:
        return _before_session(printer, str(exc))
    renderer = printer.renderer
    renderer.follow(session.agent_session)
    session.share_screen(renderer.screen)
    if shot.dry_run:
        sys.stderr.write("hive: dry run: planning mode, nothing will be changed\n")
    if printer.output == "text":
        say_local_model_notice(session, sys.stderr)
    printer.watch_questions(_questioner(session))
    with session:
        attached = await attached_prompt(session, message, printer)
        if isinstance(attached, int):
            return attached
        # Caught inside: leaving the plugins' task group, it would come out wrapped in an exception group.
        async with session.plugins():
            printer.begin(session.session_id, session.spending)
            request = UserMessageRequest(content=attached)
            try:
                summary = await drive_turn(session.runner, request, printer, timeout=shot.timeout)
            except ForcedExit as stop:
                summary = stop
        if isinstance(summary, ForcedExit):
            session.end()
            return printer.failed(
                "cancelled", stop_reason="cancelled", code=summary.code, summary=summary.summary
            )
        session.end(failed=summary.error is not None)
    return _ended(summary, printer, shot, session, message)


def _ended(
    summary: TurnSummary, printer: TurnOutput, shot: OneShot, session: OpenSession, message: str
) -> int:
    if summary.stop_reason == "cancelled":
        return printer.failed("cancelled", stop_reason="cancelled", code=130, summary=summary)
    if summary.error is not None:
        timed_out = summary.error.code == "timeout" and shot.timeout is not None
        return printer.failed(
            summary.error.message,
            stop_reason="timeout" if timed_out else "error",
            code=exit_code(summary, timed_out=timed_out),
            summary=summary,
            shown=True,  # the renderer showed it in text mode
        )
    code = printer.ended(summary)
    if code == 0 and shot.completed is not None:
        shot.completed(session, summary, message)
    return code
