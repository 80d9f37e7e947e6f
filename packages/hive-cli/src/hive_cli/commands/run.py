"""``hive run``: one prompt for scripts (``-o json``, ``-o jsonl``, exit codes), or the JSON Lines server (``--server``,
or to a host over HTTP with ``--http``)."""

from __future__ import annotations

import os
import sys
from typing import Unpack

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.errors import USER_ERRORS
from hive_cli.one_shot import Completed
from hive_cli.one_shot import OneShot
from hive_cli.one_shot import run_one_shot
from hive_cli.opening import OpenSession
from hive_cli.output import OutputFormat
from hive_cli.render import TextRenderer
from hive_cli.signals import leave_now
from hive_cli.signals import stop_signals
from hive_cli.summary import TurnSummary
from hive_cli.turn_output import TurnOutput
from hive_core import HttpRunner
from hive_core import StdioRunner
from hive_protocol import ReasoningEffort

from .session_flags import SessionFlags
from .session_flags import host_options

__all__ = ["run_main"]


def run_main(
    *,
    prompt_arg: str | None,
    prompt: str | None,
    output: OutputFormat,
    server: bool,
    http_url: str | None,
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
    **flags: Unpack[SessionFlags],
) -> int:
    """Run ``hive run``; return the exit code."""
    if http_url is not None and (server or not session_id):
        sys.stderr.write(
            "hive: --http needs --session-id (the host names its agents) and cannot go with --server\n"
        )
        return 2
    serving = server or http_url is not None
    options = host_options(flags, agent_named=bool(serving and session_id))
    if options is None:
        return 2
    options.planning = plan
    options.max_iterations, options.max_output_tokens = max_iterations, max_output_tokens
    options.reasoning_effort, options.tool_timeout = reasoning_effort, tool_timeout
    if serving:
        return anyio.run(_serve, options, session_id, timeout, http_url)
    printer = TurnOutput(
        output,
        TextRenderer(show_thinking=show_thinking, show_tokens=show_tokens),
        show_thinking=show_thinking or output == "json",  # the document always carries the reasoning
    )
    shot = OneShot(timeout=timeout, completed=_committer(commit_message) if auto_commit else None)
    return run_one_shot(prompt if prompt is not None else prompt_arg, options, printer, shot)


def _committer(message: str | None) -> Completed:
    """``--auto-commit``: after a run that exits 0, commit what it changed, with ``message`` or one made of the
    prompt."""

    def commit(session: OpenSession, summary: TurnSummary, prompt: str) -> None:
        _auto_commit(session, summary, message or _default_message(prompt))

    return commit


def _default_message(prompt: str) -> str:
    first = " ".join(prompt.split())
    return "hive: " + (first if len(first) <= 50 else first[:47] + "...")


def _auto_commit(session: OpenSession, summary: TurnSummary, message: str) -> None:
    """Commit what the run changed (:mod:`hive_cli.auto_commit`), judging paths by the session's read rules."""
    from hive_cli.auto_commit import auto_commit
    from hive_cli.auto_commit import written_paths

    root, rules = session.host.project_root, session.host.policy

    def readable(path: str) -> bool:
        return rules.judge_path("read", str(root / path)).action == "allow"

    calls = [(call.tool, call.arguments, call.success) for call in summary.calls.values()]
    auto_commit(root, message, written_paths(calls), readable)


async def _serve(
    options: HostOptions, session_id: str | None, timeout: float | None = None, http_url: str | None = None
) -> int:
    from hive_cli.serving import open_server_session

    # SIGINT and SIGTERM cancel the running turn (its turn_end is written), drop the queued ones and end the
    # server; while it starts, they end the start.
    async with stop_signals() as stop:
        try:
            async with open_server_session(options, session_id) as session:
                session.turn_timeout = timeout  # per turn: a server lives as long as its client
                stop.on_stop = session.stop
                if http_url is None:
                    await StdioRunner(session).run()
                else:
                    token = os.environ.get("HIVE_SERVE_TOKEN") or None
                    if await HttpRunner(session, http_url, token=token).run():
                        return 1
        except USER_ERRORS as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 1
    if stop.code:
        # The MCP servers are stopped and the store is closed, but the worker thread reading stdin may be
        # blocked in its read, and an ordinary exit would wait for it.
        leave_now(stop.code)
    return 0
