"""The default command: the interactive mode, or one prompt with ``-p``."""

from __future__ import annotations

import sys
from typing import cast

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.conversation import SessionChoice
from hive_cli.driver import ForcedExit, drive_turn
from hive_cli.errors import USER_ERRORS
from hive_cli.local_notice import say_local_model_notice
from hive_cli.opening import OpenSession, open_session, terminal_prompts
from hive_cli.output import OutputFormat, error_record, print_document, print_records, turn_document
from hive_cli.piped_input import PipedInputTooLarge, combine, read_piped
from hive_cli.questioner import TerminalQuestioner
from hive_cli.render import TextRenderer
from hive_cli.summary import TurnSummary
from hive_cli.turn_output import TurnOutput, attached_prompt
from hive_protocol import UserMessageRequest

__all__ = ["chat_main"]


def _questioner(session: OpenSession) -> TerminalQuestioner | None:
    return next((p for p in session.prompters if isinstance(p, TerminalQuestioner)), None)


def chat_main(
    *,
    prompt: str | None,
    model: str | None,
    provider: str | None,
    show_tokens: bool,
    show_thinking: bool,
    no_stream: bool,
    plan: bool,
    dry_run: bool,
    continue_: bool,
    resume: str | None,
    fork: bool,
    output: str,
    plain: bool,
    agent: str | None = None,
    agent_mode: str | None = None,
    model_endpoint: str | None = None,
    allow: tuple[str, ...] = (),
    first: str | None = None,
) -> int:
    """Run the default command; return the exit code (0, 1 on an error, 130 when cancelled, 143 on SIGTERM).

    ``first`` is the prompt given as words (``hive "question"``): the interactive mode's first message at a
    terminal, a one-shot prompt elsewhere (or with ``-o``). Text piped in with a one-shot prompt goes before it.
    """
    if first is not None and not (output == "text" and sys.stdin.isatty() and sys.stdout.isatty()):
        prompt, first = first, None
    if fork and not (continue_ or resume):
        sys.stderr.write("hive: --fork needs -c or -r ID\n")
        return 2
    if prompt is None and output != "text":
        sys.stderr.write(f"hive: -o {output} needs a prompt (-p)\n")
        return 2
    if (agent_mode or model_endpoint) and not (agent or continue_ or resume):
        sys.stderr.write("hive: --agent-mode and --model-endpoint need --agent NAME\n")
        return 2
    options = HostOptions(
        allow=allow,
        model=model,
        provider=provider,
        planning=plan or dry_run,
        agent=agent,
        agent_mode=agent_mode,
        model_endpoint=model_endpoint,
    )
    choice = SessionChoice(continue_latest=continue_, resume=resume, fork=fork)
    if first is None and not sys.stdin.isatty():
        try:
            piped = read_piped()
        except PipedInputTooLarge as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 1
        if prompt is None and piped is None:
            sys.stderr.write("hive: no prompt given (stdin was empty)\n")
            return 1
        prompt = piped if prompt is None else combine(piped, prompt)
    # A one-shot, or the interactive mode's first message: a turn comes as soon as the session is open.
    options.preload_model = prompt is not None or first is not None
    try:
        session = open_session(options, choice, prompts=terminal_prompts())
    except USER_ERRORS as exc:
        return _no_session(cast("OutputFormat", output), str(exc))
    renderer = TextRenderer(
        plain=plain, show_thinking=show_thinking, show_tokens=show_tokens, stream=not no_stream
    )
    agent_session = session.agent_session
    if agent_session is not None:
        renderer.last_request = lambda: agent_session.context.last
    session.share_screen(renderer.screen)
    if prompt is None:
        from .interactive import interactive_main

        return interactive_main(session, renderer, dry_run=dry_run, first=first, options=options)
    return anyio.run(_one_shot, session, prompt, cast("OutputFormat", output), renderer, dry_run)


def _no_session(output: OutputFormat, message: str) -> int:
    """No session could be opened: the failure in the output's form, exit 1."""
    if output == "json":
        print_document(
            turn_document(
                TurnSummary(), session_id=None, duration_ms=0, exit_code=1, error=message, stop_reason="error"
            )
        )
    elif output == "jsonl":  # `start` is the first record, always; no session was opened to name
        print_records([{"type": "start"}, error_record(message, stop_reason="error", exit_code=1)])
    else:
        sys.stderr.write(f"hive: {message}\n")
    return 1


async def _one_shot(
    session: OpenSession, prompt: str, output: OutputFormat, renderer: TextRenderer, dry_run: bool
) -> int:
    if dry_run:
        sys.stderr.write("hive: dry run: planning mode, nothing will be changed\n")
    printer = TurnOutput(output, renderer, show_thinking=renderer.show_thinking)
    if output == "text":
        say_local_model_notice(session, sys.stderr)
    printer.watch_questions(_questioner(session))
    with session:
        attached = await attached_prompt(session, prompt, printer)
        if isinstance(attached, int):
            return attached
        # Caught inside: leaving the plugins' task group, it would come out wrapped in an exception group.
        async with session.plugins():
            printer.begin(session.session_id)
            try:
                summary = await drive_turn(session.runner, UserMessageRequest(content=attached), printer)
            except ForcedExit as stop:
                summary = stop
        if isinstance(summary, ForcedExit):
            session.end()
            return printer.failed(
                "cancelled", stop_reason="cancelled", code=summary.code, summary=summary.summary
            )
        session.end(failed=summary.error is not None)
    if summary.stop_reason == "cancelled":
        return printer.failed("cancelled", stop_reason="cancelled", code=130, summary=summary)
    if summary.error is not None:
        return printer.failed(
            summary.error.message, stop_reason="error", code=1, summary=summary, shown=output == "text"
        )
    return printer.ended(summary, code=0)
