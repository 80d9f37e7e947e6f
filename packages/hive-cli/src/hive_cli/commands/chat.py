"""The default command: the interactive mode, or one prompt with ``-p``."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.conversation import SessionChoice
from hive_cli.driver import ForcedExit, drive_turn
from hive_cli.errors import USER_ERRORS
from hive_cli.opening import OpenSession, open_session
from hive_cli.output import done_record, json_document, jsonl_record, question_outcome, question_record
from hive_cli.piped_input import PipedInputTooLarge, combine, read_piped
from hive_cli.questioner import TerminalQuestioner
from hive_cli.render import TextRenderer
from hive_core.questions import Answers
from hive_protocol import Event, QuestionRequestEvent, UserMessageRequest

__all__ = ["chat_main"]


def _questioner(session: OpenSession) -> TerminalQuestioner | None:
    return next((p for p in session.prompters if isinstance(p, TerminalQuestioner)), None)


def _print_json(document: object) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
    sys.stdout.flush()


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
        session = open_session(options, choice)
    except USER_ERRORS as exc:
        if output == "jsonl":  # `start` is the first record, always; no session was opened to name
            _print_json({"type": "start"})
        return _fail(output, str(exc))
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
    return anyio.run(_one_shot, session, prompt, output, renderer, dry_run)


async def _one_shot(
    session: OpenSession, prompt: str, output: str, renderer: TextRenderer, dry_run: bool
) -> int:
    session_id = session.session_id
    if dry_run:
        sys.stderr.write("hive: dry run: planning mode, nothing will be changed\n")
    show_thinking = renderer.show_thinking
    if output == "jsonl":
        _print_json({"type": "start", "sessionId": session_id})
    asked: dict[str, dict[str, Any]] = {}
    questioner = _questioner(session)
    if questioner is not None and output != "text":

        def on_request(request: QuestionRequestEvent) -> None:
            record = question_record(request)
            if output == "jsonl":
                _print_json(record)
            asked[request.id] = {key: value for key, value in record.items() if key != "type"}

        def on_settled(request: QuestionRequestEvent, answers: Answers | None, reason: str | None) -> None:
            outcome = question_outcome(request, answers, reason)
            if output == "jsonl":
                _print_json(outcome)
            asked.setdefault(request.id, {"id": request.id}).update(
                (key, value) for key, value in outcome.items() if key not in ("type", "id")
            )

        questioner.on_request = on_request
        questioner.on_settled = on_settled

    def sink(event: Event) -> None:
        if output == "jsonl":
            record = jsonl_record(event, show_thinking=show_thinking)
            if record is not None:
                _print_json(record)
        elif output == "text":
            renderer(event)

    with session:
        # Caught inside: leaving the plugins' task group, it would come out wrapped in an exception group.
        async with session.plugins():
            if output == "text":
                renderer.begin_turn()
            try:
                summary = await drive_turn(session.runner, UserMessageRequest(content=prompt), sink)
            except ForcedExit as stop:
                summary = stop
        if isinstance(summary, ForcedExit):
            session.end()
            return _cancelled(output, summary.code)
        session.end(failed=summary.error is not None)
    if summary.stop_reason == "cancelled":
        return _cancelled(output)
    if summary.error is not None:
        return _fail(output, summary.error.message, shown=output == "text")
    if output == "json":
        _print_json(
            json_document(
                summary, session_id=session_id, show_thinking=show_thinking, questions=list(asked.values())
            )
        )
    elif output == "jsonl":
        _print_json(done_record(summary, session_id=session_id))
    return 0


def _cancelled(output: str, code: int = 130) -> int:
    if output == "json":
        _print_json({"error": "cancelled", "code": code})
    elif output == "jsonl":
        _print_json({"type": "error", "error": "cancelled"})
    else:
        sys.stderr.write("hive: cancelled\n")
    return code


def _fail(output: str, message: str, *, shown: bool = False) -> int:
    if output == "json":
        _print_json({"error": message, "code": 1})
    elif output == "jsonl":
        _print_json({"type": "error", "error": message})
    elif not shown:
        sys.stderr.write(f"hive: {message}\n")
    return 1
