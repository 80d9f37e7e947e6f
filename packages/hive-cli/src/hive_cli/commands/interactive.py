"""The interactive mode: a prompt loop over one session, which the slash commands can replace.

The event loop runs in a background thread (an anyio blocking portal) so the main thread can sit in the line
editor (prompt_toolkit at a terminal) and receive Ctrl+C: during a turn the first Ctrl+C cancels the turn and a
second leaves with 130; at the prompt, Ctrl+C clears the line and Ctrl+D or ``exit`` leaves. A line starting with
``/`` is a command answered here (:mod:`hive_cli.slash_commands`), never sent to the model; ``@path`` attaches a
file (:mod:`hive_cli.attachments`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from anyio.from_thread import BlockingPortal
from anyio.from_thread import start_blocking_portal

from hive_cli import __version__
from hive_cli.agent_model import describe_agent_model
from hive_cli.agent_model import switch_agent_model
from hive_cli.approver import TerminalApprover
from hive_cli.assemble import HostOptions
from hive_cli.attachments import AttachmentError
from hive_cli.attachments import attach_for
from hive_cli.attachments import mentions
from hive_cli.backend_host import canonical_agent
from hive_cli.conversation import SessionChoice
from hive_cli.conversation import SessionChoiceError
from hive_cli.driver import drive_turn
from hive_cli.errors import USER_ERRORS
from hive_cli.grants_command import permissions_command
from hive_cli.line_editor import LineEditor
from hive_cli.line_editor import line_editor
from hive_cli.live_session import LiveSession
from hive_cli.opening import OpenSession
from hive_cli.render import TextRenderer
from hive_cli.session_documents import transcript_items
from hive_cli.session_listing import listed_sessions
from hive_cli.session_listing import resolve_session_id
from hive_cli.slash_commands import ask_pick
from hive_cli.slash_commands import command_of
from hive_cli.slash_commands import help_text
from hive_cli.slash_commands import listed_number
from hive_cli.slash_commands import parse_command
from hive_cli.slash_commands import unknown_command_message
from hive_cli.transcript_text import recent_exchanges
from hive_cli.transcript_text import transcript_lines
from hive_cli.undo import rewind
from hive_cli.undo import undo
from hive_core import ChatError
from hive_core.backends import HIVE_BACKEND
from hive_core.permissions import SessionGrants
from hive_core.sessions import cut_title
from hive_core.spending import COST_UNKNOWN
from hive_core.spending import describe_cost
from hive_protocol import Event
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

__all__ = ["interactive_main"]

_PICKER_SIZE = 20
"""Sessions ``/resume`` and ``/sessions`` list at most (newest first)."""


class _Totals:
    """The tokens of this process's turns, whatever session they ran in."""

    def __init__(self) -> None:
        self.turns = 0
        self.input = 0
        self.output = 0

    def add(self, event: TurnEndEvent) -> None:
        self.turns += 1
        self.input += event.input_tokens or 0
        self.output += event.output_tokens or 0

    def describe(self) -> str:
        return (
            f"{self.turns} turn(s) · {self.input} input + {self.output} output tokens = "
            f"{self.input + self.output}"
        )


def _say(text: str) -> None:
    sys.stderr.write(text if text.endswith("\n") else text + "\n")
    sys.stderr.flush()


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


def _banner(session: OpenSession, *, dry_run: bool) -> str:
    agent_session = session.agent_session
    restored = len(agent_session.conversation) if agent_session is not None else 0
    resumed = " (resuming the agent's session)" if session.conversation.backend_session is not None else ""
    return (
        f"hive {__version__} · {session.label} · session {session.session_id}{resumed}"
        + (f" ({restored} messages restored)" if restored else "")
        + (" · planning mode" if agent_session is not None and agent_session.planning else "")
        + (" · dry run" if dry_run else "")
    )


def _recap(session: OpenSession) -> str:
    """The last few exchanges of a resumed session (tool calls a line each), to pick up from; empty when the
    session holds none."""
    items = transcript_items(session.store.restore(session.session_id))
    if not items:
        return ""
    recent = recent_exchanges(items)
    earlier = "the last exchanges" if len(recent) < len(items) else "the conversation so far"
    lines = transcript_lines(recent, cut=True)
    return "\n".join(
        [f"── {earlier} (`hive sessions show {session.session_id}` prints it all) ──", *lines, "──"]
    )


def _model(live: LiveSession, name: str) -> str:
    session = live.session
    if session.agent_session is None:
        return switch_agent_model(live, name) if name else describe_agent_model(live)
    if not name:
        return f"{session.label} (/model NAME switches for the next turns)"
    error = live.reopen(live.with_options(model=name))
    if error is not None:
        return f"model unchanged ({live.session.label}): {error}"
    return f"model: {live.session.label} for the next turns (session {live.session.session_id} goes on)"


def _agent(live: LiveSession, name: str) -> str:
    session = live.session
    if not name:
        return _agents(session) + "\nswitch with /agent NAME (a new session), /agent hive for hive's own loop"
    try:
        wanted = canonical_agent(name)
    except USER_ERRORS as exc:
        return str(exc)
    current = session.conversation.backend or HIVE_BACKEND
    if wanted == current:
        return f"already using {session.label}"
    old = session.session_id
    # A conversation lives in one backend's own session: another backend cannot take it over mid-way.
    error = live.replace(live.with_options(agent=wanted), SessionChoice())
    if error is not None:
        return f"agent unchanged ({session.label}): {error}"
    return (
        f"{live.session.label} runs the next turns, in a new session {live.session.session_id} (a backend keeps "
        f"its own conversation, so {old} cannot move over; continue it with /resume {old})"
    )


def _clear(live: LiveSession) -> str:
    old = live.session.session_id
    error = live.replace(live.options, SessionChoice())
    if error is not None:
        return f"could not start a new session: {error}"
    return f"new session {live.session.session_id} (the conversation so far is in {old}: /resume {old})"


def _sessions_listing(live: LiveSession, *, everything: bool = False) -> tuple[list[str], str]:
    """The ids of this project's sessions, newest first (those that failed at start hidden unless
    ``everything``), and their numbered listing."""
    session = live.session
    listed, hidden = listed_sessions(
        session.store, str(session.host.project_root), limit=_PICKER_SIZE, everything=everything
    )
    ids: list[str] = []
    lines: list[str] = []
    for number, entry in enumerate(listed, 1):
        info = entry.info
        ids.append(info.id)
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.updated))
        title = cut_title((info.first_message or "").replace("\n", " ")) or "(no message yet)"
        here = " ← this one" if info.id == session.session_id else ""
        dead = " (dead)" if entry.status == "dead" else ""
        lines.append(f"  {number:>2}. {info.id}  {when}  {info.message_count:>3} msgs{dead}  {title}{here}")
    if hidden:
        lines.append(f"  ({hidden} empty or failed-at-start session(s) hidden; /resume --all lists them)")
    return ids, "\n".join(lines)


def _resume(live: LiveSession, editor: LineEditor, argument: str) -> str:
    everything = argument == "--all"
    if everything:
        argument = ""
    ids, listing = _sessions_listing(live, everything=everything)
    if argument:
        picked = argument if (number := listed_number(argument, len(ids))) is None else ids[number]
        if picked not in ids:
            try:
                picked = resolve_session_id(live.session.store, picked)
            except SessionChoiceError as exc:
                return f"not resumed: {exc}"
    else:
        if not ids:
            return "no sessions in this project yet"
        _say(listing)
        answer = ask_pick(editor.ask, "resume which", len(ids))
        if not answer:
            return "not resumed"
        if (number := listed_number(answer, len(ids))) is None:
            return f"no session {answer!r} in the list: not resumed"
        picked = ids[number]
    if picked == live.session.session_id:
        return f"already in session {picked}"
    if picked not in ids and live.session.store.get(picked) is None:
        return f"no session {picked!r} (/sessions lists this project's)"
    # The backend the session was recorded with serves it again (agent None: whichever it was).
    error = live.replace(live.with_options(agent=None), SessionChoice(resume=picked))
    if error is not None:
        return f"not resumed: {error}"
    recap = _recap(live.session)
    return _banner(live.session, dry_run=False) + (f"\n{recap}" if recap else "")


def _grants(session: OpenSession) -> SessionGrants | None:
    approver = next((p for p in session.prompters if isinstance(p, TerminalApprover)), None)
    return approver.grants if approver is not None else None


def _plan(live: LiveSession) -> str:
    session = live.session
    agent_session = session.agent_session
    if agent_session is None:
        return (
            f"planning mode is a mode of hive's own loop; {session.label} has its own "
            "(/agent hive switches to hive's loop)"
        )
    planning = not agent_session.planning
    session.set_planning(planning)
    live.options = live.with_options(planning=planning)
    if planning:
        return "planning mode on: only read-only tools run (/plan again to leave it)"
    return "planning mode off: every tool runs, under the rules"


def _tokens(live: LiveSession, totals: _Totals) -> str:
    session = live.session
    spending = session.spending
    if spending is None:
        return f"{totals.describe()} · {COST_UNKNOWN} ({session.label} reports no prices)"
    cost = spending.cost()
    said = f"{totals.describe()} · this session: {spending.spent.tokens} tokens, {describe_cost(cost)}"
    return said if cost is not None else f"{said} (no price for {session.label})"


def _attach(portal: BlockingPortal, session: OpenSession, text: str) -> str | None:
    """``text`` with the files it mentions attached (those declined left out, said); ``None`` when one cannot
    be (said why)."""
    if not mentions(text):
        return text
    future = portal.start_task_soon(attach_for, session, text)
    try:
        attached = future.result()
        for line in attached.left_out:
            _say(line)
        return attached.text
    except AttachmentError as exc:
        _say(f"{exc} (nothing sent)")
    except KeyboardInterrupt:
        future.cancel()
        _say("\n(nothing sent)")
    return None


def _command(
    name: str,
    argument: str,
    live: LiveSession,
    portal: BlockingPortal,
    editor: LineEditor,
    totals: _Totals,
    renderer: TextRenderer,
) -> bool:
    """Run the slash command ``name``; ``False`` when it is the one that leaves."""
    command = command_of(name)
    if command is None:
        _say(unknown_command_message(name))
        return True
    session = live.session
    match command.name:
        case "/exit":
            return False
        case "/help":
            _say(help_text())
        case "/clear":
            _say(_clear(live))
        case "/compact":
            _say(_compact(portal, session))
        case "/model":
            _say(_model(live, argument))
        case "/agent":
            _say(_agent(live, argument))
        case "/agents":
            _say(_agents(session))
        case "/resume":
            _say(_resume(live, editor, argument))
        case "/sessions":
            listing = _sessions_listing(live)[1]
            _say(listing or "no sessions in this project yet")
        case "/session":
            _say(session.session_id)
        case "/tokens":
            _say(_tokens(live, totals))
        case "/plan":
            _say(_plan(live))
        case "/diff":
            _say(renderer.diffs())
        case "/undo":
            _say(undo(session, editor.ask, _say))
        case "/rewind":
            _say(rewind(session, argument, editor.ask, _say))
        case "/permissions":
            _say(permissions_command(_grants(session), argument))
        case _:  # pragma: no cover - every command of the table has its case
            _say(f"{name} is not available here")
    return True


def interactive_main(
    session: OpenSession,
    renderer: TextRenderer,
    *,
    dry_run: bool,
    first: str | None = None,
    options: HostOptions | None = None,
) -> int:
    """Run the prompt loop over ``session``, showing each turn with ``renderer``; return the exit code.

    ``first`` is sent as if typed at the first prompt (``hive "question"``). ``options`` are what ``session`` was
    opened with, for the commands that open another (``/clear``, ``/model``, ``/agent``, ``/resume``).
    """
    from hive_core.config import hive_home

    totals = _Totals()

    def sink(event: Event) -> None:
        renderer(event)
        if isinstance(event, TurnEndEvent):
            totals.add(event)

    editor = line_editor(session.host.project_root, hive_home() / "history")
    renderer.diff_hint = "/diff shows it"
    _say(_banner(session, dry_run=dry_run) + "\nType /help for help, exit to leave.")
    recap = _recap(session)  # a resumed session's last exchanges; nothing for a new one
    if recap:
        _say(recap)
    code = 0
    agent_session = session.agent_session
    chosen = options or HostOptions(
        cwd=Path.cwd(), planning=agent_session is not None and agent_session.planning
    )
    with start_blocking_portal() as portal:
        live = LiveSession(session, chosen, renderer, portal)
        live.start()
        try:
            code = _loop(live, portal, editor, renderer, sink, totals, first)
        finally:
            live.stop()
    _say(totals.describe())
    return code


def _turn(
    live: LiveSession,
    portal: BlockingPortal,
    renderer: TextRenderer,
    sink: Callable[[Event], None],
    message: str,
) -> bool:
    """Run one turn of ``message``; ``False`` when a second Ctrl+C asked to leave."""
    runner = live.session.runner
    renderer.begin_turn()
    future = portal.start_task_soon(drive_turn, runner, UserMessageRequest(content=message), sink)
    try:
        future.result()
    except KeyboardInterrupt:
        portal.call(runner.cancel)
        try:
            future.result()
        except KeyboardInterrupt:
            return False
    return True


def _loop(
    live: LiveSession,
    portal: BlockingPortal,
    editor: LineEditor,
    renderer: TextRenderer,
    sink: Callable[[Event], None],
    totals: _Totals,
    first: str | None,
) -> int:
    while True:
        try:
            if first is not None:
                line, first = first, None
                sys.stderr.write(f"> {line}\n")
            else:
                line = editor.read("> ")
        except EOFError:
            sys.stderr.write("\n")
            return 0
        except KeyboardInterrupt:
            sys.stderr.write("\n(Ctrl+D or exit to leave)\n")
            continue
        text = line.strip()
        if not text:
            continue
        if text in ("exit", "quit"):
            return 0
        parsed = parse_command(text) if line.startswith("/") else None
        if parsed is not None:
            if not _command(*parsed, live, portal, editor, totals, renderer):
                return 0
            continue
        message = _attach(portal, live.session, text)
        if message is None:
            continue
        with editor.hold_keys():  # typed-ahead keys wait for the next prompt, not inside the streamed reply
            if not _turn(live, portal, renderer, sink, message):
                return 130
