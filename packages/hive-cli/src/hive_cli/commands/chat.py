"""The default command: the interactive mode, or one prompt with ``-p``."""

from __future__ import annotations

import sys
from typing import Unpack
from typing import cast

from hive_cli.conversation import SessionChoice
from hive_cli.errors import USER_ERRORS
from hive_cli.one_shot import OneShot
from hive_cli.one_shot import run_one_shot
from hive_cli.opening import open_session
from hive_cli.opening import terminal_prompts
from hive_cli.output import OutputFormat
from hive_cli.render import TextRenderer
from hive_cli.turn_output import TurnOutput

from .session_flags import SessionFlags
from .session_flags import host_options

__all__ = ["chat_main"]


def chat_main(
    *,
    prompt: str | None,
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
    first: str | None = None,
    **flags: Unpack[SessionFlags],
) -> int:
    """Run the default command; return the exit code (a one-shot's are :mod:`hive_cli.one_shot`'s).

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
    options = host_options(flags, agent_named=bool(continue_ or resume))
    if options is None:
        return 2
    options.planning = plan or dry_run
    choice = SessionChoice(continue_latest=continue_, resume=resume, fork=fork)
    renderer = TextRenderer(
        plain=plain, show_thinking=show_thinking, show_tokens=show_tokens, stream=not no_stream
    )
    if prompt is not None or not sys.stdin.isatty():
        printer = TurnOutput(cast("OutputFormat", output), renderer, show_thinking=show_thinking)
        return run_one_shot(prompt, options, printer, OneShot(choice=choice, dry_run=dry_run))
    # The interactive mode; its first message, when given, is a turn as soon as the session is open.
    options.preload_model = first is not None
    try:
        session = open_session(options, choice, prompts=terminal_prompts())
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    renderer.follow(session.agent_session)
    session.share_screen(renderer.screen)
    from .interactive import interactive_main

    return interactive_main(session, renderer, dry_run=dry_run, first=first, options=options)
