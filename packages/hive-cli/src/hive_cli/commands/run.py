"""``hive run``: one prompt for scripts (``-o json``, ``-o jsonl``, exit codes), or the JSON Lines server (``--server``)."""

from __future__ import annotations

import sys

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.driver import ForcedExit, drive_turn
from hive_cli.errors import USER_ERRORS
from hive_cli.local_notice import say_local_model_notice
from hive_cli.opening import OpenSession, open_session, terminal_prompts
from hive_cli.output import OutputFormat
from hive_cli.render import TextRenderer
from hive_cli.signals import leave_now, stop_signals
from hive_cli.summary import TurnSummary
from hive_cli.turn_output import TurnOutput, attached_prompt
from hive_core import StdioRunner
from hive_protocol import ReasoningEffort, UserMessageRequest

__all__ = ["run_main"]


def run_main(
    *,
    prompt_arg: str | None,
    prompt: str | None,
    model: str | None,
    provider: str | None,
    output: OutputFormat,
    server: bool,
    session_id: str | None,
    max_iterations: int | None,
    max_output_tokens: int | None,
    reasoning_effort: ReasoningEffort | None,
    tool_timeout: float | None,
    timeout: float | None,
    show_tokens: bool,
    show_thinking: bool,
    plan: bool,
    auto_commit: bool,
    commit_message: str | None,
    agent: str | None = None,
    agent_mode: str | None = None,
    model_endpoint: str | None = None,
    allow: tuple[str, ...] = (),
) -> int:
    """Run ``hive run``; return the exit code."""
    if (agent_mode or model_endpoint) and not (agent or (server and session_id)):
        sys.stderr.write("hive: --agent-mode and --model-endpoint need --agent NAME\n")
        return 2
    options = HostOptions(
        allow=allow,
        agent=agent,
        agent_mode=agent_mode,
        model_endpoint=model_endpoint,
        model=model,
        provider=provider,
        planning=plan,
        max_iterations=max_iterations,
        max_output_tokens=max_output_tokens,
        reasoning_effort=reasoning_effort,
        tool_timeout=tool_timeout,
    )
    if server:
        return anyio.run(_serve, options, session_id, timeout)
    printer = TurnOutput(
        output,
        TextRenderer(show_thinking=show_thinking, show_tokens=show_tokens),
        show_thinking=show_thinking or output == "json",  # the document always carries the reasoning
    )
    text = prompt if prompt is not None else prompt_arg
    if text is None and not sys.stdin.isatty():
        text = sys.stdin.read().strip() or None
    if not text:
        return printer.failed(
            "no prompt: give it as an argument, with -p, or on stdin", stop_reason="error", code=1
        )
    options.preload_model = True
    return anyio.run(_run_once, text, options, printer, timeout, auto_commit, commit_message)


async def _run_once(
    prompt: str,
    options: HostOptions,
    printer: TurnOutput,
    timeout: float | None,
    auto_commit: bool,
    commit_message: str | None,
) -> int:
    try:
        session = open_session(options, prompts=terminal_prompts())
    except USER_ERRORS as exc:
        if printer.output == "jsonl":  # `start` is the first record, always
            printer.begin(None)
        return printer.failed(str(exc), stop_reason="error", code=1)
    renderer = printer.renderer
    agent_session = session.agent_session
    if agent_session is not None:
        renderer.last_request = lambda: agent_session.context.last
    session.share_screen(renderer.screen)
    if printer.output == "text":
        say_local_model_notice(session, sys.stderr)

    with session:
        attached = await attached_prompt(session, prompt, printer)
        if isinstance(attached, int):
            return attached
        # Caught inside: leaving the plugins' task group, it would come out wrapped in an exception group.
        async with session.plugins():
            printer.begin(session.session_id)
            request = UserMessageRequest(content=attached)
            try:
                summary = await drive_turn(session.runner, request, printer, timeout=timeout)
            except ForcedExit as stop:
                summary = stop
        if isinstance(summary, ForcedExit):
            session.end()
            return printer.failed(
                "cancelled", stop_reason="cancelled", code=summary.code, summary=summary.summary
            )
        session.end(failed=summary.error is not None)
    if summary.error is not None:
        timed_out = summary.error.code == "timeout" and timeout is not None
        return printer.failed(
            summary.error.message,
            stop_reason="timeout" if timed_out else "error",
            code=2 if timed_out else 1,
            summary=summary,
            shown=True,
        )
    if summary.stop_reason == "cancelled":
        return printer.failed("cancelled", stop_reason="cancelled", code=130, summary=summary)
    code = printer.ended(summary)
    if code == 0 and auto_commit:
        _auto_commit(session, summary, commit_message or _default_message(prompt))
    return code


def _default_message(prompt: str) -> str:
    first = " ".join(prompt.split())
    return "hive: " + (first if len(first) <= 50 else first[:47] + "...")


def _auto_commit(session: OpenSession, summary: TurnSummary, message: str) -> None:
    """Commit what the run changed (:mod:`hive_cli.auto_commit`), judging paths by the session's read rules."""
    from hive_cli.auto_commit import auto_commit, written_paths

    root, rules = session.host.project_root, session.host.policy

    def readable(path: str) -> bool:
        return rules.judge_path("read", str(root / path)).action == "allow"

    calls = [(call.tool, call.arguments, call.success) for call in summary.calls.values()]
    auto_commit(root, message, written_paths(calls), readable)


async def _serve(options: HostOptions, session_id: str | None, timeout: float | None = None) -> int:
    from hive_cli.serving import open_server_session

    # SIGINT and SIGTERM cancel the running turn (its turn_end is written), drop the queued ones and end the
    # server; while it starts, they end the start.
    async with stop_signals() as stop:
        try:
            async with open_server_session(options, session_id) as session:
                session.turn_timeout = timeout  # per turn: a server lives as long as its client
                stop.on_stop = session.stop
                await StdioRunner(session).run()
        except USER_ERRORS as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 1
    if stop.code:
        # The MCP servers are stopped and the store is closed, but the worker thread reading stdin may be
        # blocked in its read, and an ordinary exit would wait for it.
        leave_now(stop.code)
    return 0
