"""The interactive mode: a prompt loop over one session.

The event loop runs in a background thread (an anyio blocking portal) so the main thread can sit in ``input()``
with line editing and history, and receive Ctrl+C: during a turn the first Ctrl+C cancels the turn and a second
leaves with 130; at the prompt, Ctrl+C clears the line and Ctrl+D or ``exit`` leaves.
"""

from __future__ import annotations

import atexit
import re
import sys
from contextlib import suppress
from pathlib import Path

from anyio.from_thread import BlockingPortal, start_blocking_portal

from hive_cli import __version__
from hive_cli.driver import drive_turn
from hive_cli.opening import OpenSession
from hive_cli.render import TextRenderer
from hive_core import ChatError
from hive_protocol import Event, TurnEndEvent, UserMessageRequest

__all__ = ["interactive_main"]

_HELP = """\
  exit, quit, Ctrl+D   leave
  /help                this help
  /model               the provider and model in use
  /session             the session id (continue it later with hive -r ID)
  /compact             compact the conversation now (what is sent; the session keeps everything)
  /agents              the coding-agent CLI in use and the warm-session pool's counters
  /tokens              the tokens this session's turns have used so far
  /exit, /quit         leave
  Ctrl+C               cancel the running turn (twice: leave)
A line starting with / is always a command: an unknown one is answered here, never sent to the model
(start the line with a space to send it as it is).
"""

_COMMAND = re.compile(r"/[A-Za-z][\w-]*(?:\s|$)")
"""What a slash command looks like: ``/name`` alone or followed by arguments (``/usr/bin`` is not one)."""


def _setup_line_editing() -> None:
    with suppress(ImportError):
        import readline

        from hive_core.config import hive_home

        history = hive_home() / "history"
        with suppress(OSError):
            history.parent.mkdir(parents=True, exist_ok=True)
            readline.read_history_file(history)
        readline.set_history_length(1000)
        atexit.register(_save_history, history)


def _save_history(history: Path) -> None:
    import readline

    with suppress(OSError):  # a history that cannot be written is not worth a traceback at exit
        readline.write_history_file(history)


def _compact(portal: BlockingPortal, session: OpenSession) -> str:
    """Compact on demand and say what it did."""
    agent_session = session.agent_session
    if agent_session is None:
        return "the agent CLI keeps its own context: /compact is for hive's own loop"
    try:
        report = portal.call(agent_session.compact)
    except KeyboardInterrupt:
        return "compaction cancelled"
    except ChatError as exc:
        return f"could not compact: {exc}"
    if report is None:
        return "nothing to compact"
    return report.describe()


def _agents(session: OpenSession) -> str:
    """The backend in use and the live counters of the process's warm-session pool."""
    from hive_providers.backends.pool import default_pool

    pool = default_pool()
    stats, settings = pool.stats, pool.settings
    using = session.conversation.backend or "hive (the built-in loop)"
    return (
        f"agent: {using} (`hive agents` lists every backend)\n"
        f"pool: {stats.active} active, {stats.leased} leased, {stats.indexed} indexed · {stats.hits} hits, "
        f"{stats.misses} misses, {stats.evictions} evictions, {stats.faults} faults, {stats.reaped} reaped · "
        f"max {settings.max_active}, idle timeout {settings.idle_timeout:g} s"
        + ("" if settings.enabled else " · disabled")
    )


def interactive_main(
    session: OpenSession, renderer: TextRenderer, *, dry_run: bool, first: str | None = None
) -> int:
    """Run the prompt loop over ``session``, showing each turn with ``renderer``; return the exit code.

    ``first`` is sent as if typed at the first prompt (``hive "question"``).
    """
    host, runner = session.host, session.runner
    totals = {"turns": 0, "input": 0, "output": 0}

    def sink(event: Event) -> None:
        renderer(event)
        if isinstance(event, TurnEndEvent):
            totals["turns"] += 1
            totals["input"] += event.input_tokens or 0
            totals["output"] += event.output_tokens or 0

    _setup_line_editing()
    recorder = session.conversation.recorder
    restored = len(recorder.session.conversation) if recorder is not None else 0
    resumed = " (resuming the agent's session)" if session.conversation.backend_session is not None else ""
    sys.stderr.write(
        f"hive {__version__} · {session.label} · session {session.session_id}{resumed}"
        + (f" ({restored} messages restored)" if restored else "")
        + (" · planning mode" if host.agent.planning else "")
        + (" · dry run" if dry_run else "")
        + "\nType /help for help, exit to leave.\n"
    )
    code = 0
    with session, start_blocking_portal() as portal, portal.wrap_async_context_manager(session.plugins()):
        while True:
            try:
                if first is not None:
                    line, first = first, None
                    sys.stderr.write(f"> {line}\n")
                else:
                    line = input("> ")
            except EOFError:
                sys.stderr.write("\n")
                break
            except KeyboardInterrupt:
                sys.stderr.write("\n(Ctrl+D or exit to leave)\n")
                continue
            text = line.strip()
            if not text:
                continue
            command = line.startswith("/") and _COMMAND.match(text) is not None
            if text in ("exit", "quit", "/exit", "/quit"):
                break
            if text == "/help":
                sys.stderr.write(_HELP)
                continue
            if text == "/model":
                change = "--agent or -m" if session.backend is not None else "-m or --provider"
                sys.stderr.write(f"{session.label} (start hive with {change} to change it)\n")
                continue
            if text == "/agents":
                sys.stderr.write(_agents(session) + "\n")
                continue
            if text == "/session":
                sys.stderr.write(f"{session.session_id}\n")
                continue
            if text == "/compact":
                sys.stderr.write(_compact(portal, session) + "\n")
                continue
            if text == "/tokens":
                used = totals["input"] + totals["output"]
                sys.stderr.write(
                    f"{totals['turns']} turn(s) · {totals['input']} input + {totals['output']} output tokens = "
                    f"{used}\n"
                )
                continue
            if command:
                name = text.split()[0]
                sys.stderr.write(
                    f"unknown command {name} (not sent to the model); /help lists the commands\n"
                )
                continue
            renderer.begin_turn()
            future = portal.start_task_soon(drive_turn, runner, UserMessageRequest(content=text), sink)
            try:
                future.result()
            except KeyboardInterrupt:
                portal.call(runner.cancel)
                try:
                    future.result()
                except KeyboardInterrupt:
                    code = 130
                    break
        session.end()
    sys.stderr.write(
        f"{totals['turns']} turn(s) · {totals['input']} input + {totals['output']} output tokens "
        f"= {totals['input'] + totals['output']}\n"
    )
    return code
