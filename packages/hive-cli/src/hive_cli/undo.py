"""``/undo`` and ``/rewind``: bringing back the files a session's turns changed through hive's file tools.

The states come from the session's checkpoints (:mod:`hive_core.sessions.checkpoints`). Before anything is
overwritten the person sees what will change (lines added and removed per file), and is asked when a file changed
since hive's tool left it; ``/rewind`` always asks. Commands the turns ran are named: what they changed is not
kept.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hive_cli.diffs import change_counts
from hive_cli.diffs import counts
from hive_cli.opening import OpenSession
from hive_cli.slash_commands import ask_pick
from hive_cli.slash_commands import listed_number
from hive_core.sessions.checkpoints import ABSENT
from hive_core.sessions.checkpoints import FileState
from hive_core.sessions.checkpoints import Restore
from hive_core.sessions.checkpoints import TurnChanges
from hive_core.sessions.checkpoints import UndoPlan
from hive_core.sessions.checkpoints import apply_undo
from hive_core.sessions.checkpoints import plan_rewind
from hive_core.sessions.checkpoints import plan_undo
from hive_core.sessions.checkpoints import session_turns

__all__ = ["rewind", "undo"]

Ask = Callable[[str], str]
"""Asks the person one question and returns the answer (raises ``EOFError``/``KeyboardInterrupt`` to cancel)."""

Say = Callable[[str], None]
"""Prints lines for the person."""

_LISTED = 30
"""Turns ``/rewind`` lists at most (the latest)."""

_NOT_HIVE = "{label} changes files itself: /undo and /rewind restore only what hive's own file tools changed"


def undo(session: OpenSession, ask: Ask, say: Say) -> str:
    """Restore the files of the session's last turn that changed files and is not undone yet."""
    if session.agent_session is None:
        return _NOT_HIVE.format(label=session.label)
    plan = plan_undo(session.store, session.session_id)
    if plan is None:
        return _nothing(session)
    for turn in plan.turns:
        if turn.paths:
            say(f"undo turn {turn.number} ({turn.title}):")
    say("\n".join(_preview(session, plan)))
    if plan.conflicts and not _confirm(ask, "overwrite them? [y/N] "):
        return "nothing undone"
    return _apply(session, plan)


def rewind(session: OpenSession, argument: str, ask: Ask, say: Say) -> str:
    """List the session's turns, take one (``argument`` or asked), and restore the files to before it."""
    if session.agent_session is None:
        return _NOT_HIVE.format(label=session.label)
    turns = session_turns(session.store, session.session_id)
    if not any(t.paths for t in turns):
        return _nothing(session)
    if not argument:
        say("\n".join(_listing(session, turns)))
        argument = ask_pick(ask, "rewind to before which turn", len(turns))
        if not argument:
            return "not rewound"
    if (number := listed_number(argument, len(turns))) is None:
        return f"no turn {argument!r}: give a number from 1 to {len(turns)} (/rewind lists them)"
    picked = turns[number]
    plan = plan_rewind(session.store, session.session_id, picked.turn)
    if plan is None:
        return f"nothing to restore: no turn from {picked.number} on changed a file that is not restored yet"
    say(f"rewind to before turn {picked.number} ({picked.title}), restoring:")
    say("\n".join(_preview(session, plan)))
    if not _confirm(ask, "restore these files? [y/N] "):
        return "not rewound: no file changed"
    return _apply(session, plan)


def _nothing(session: OpenSession) -> str:
    if any(t.undone for t in session_turns(session.store, session.session_id)):
        return "nothing left to undo: every file change of this session's turns is undone"
    return "nothing to undo: no turn of this session changed a file through hive's tools"


def _confirm(ask: Ask, question: str) -> bool:
    try:
        return ask(question).strip().lower() in ("y", "yes")
    except (EOFError, KeyboardInterrupt):
        return False


def _apply(session: OpenSession, plan: UndoPlan) -> str:
    problems = apply_undo(session.store, session.session_id, plan)
    failed = {path for path, _ in problems}
    restored = [r for r in plan.files if r.path not in failed]
    numbers = ", ".join(str(t.number) for t in plan.turns if t.paths)
    lines = [
        f"undone turn{'s' if ',' in numbers else ''} {numbers}: {len(restored)} file(s) restored"
        + (f", {len(problems)} not" if problems else "")
    ]
    lines += [f"  {_shown(session, path)}: {why}" for path, why in problems]
    lines.append("(the conversation is unchanged: tell the model what you undid if it should know)")
    return "\n".join(lines)


def _commands_note(plan: UndoPlan) -> list[str]:
    if not plan.commands:
        return []
    named = "; ".join(_one_line(c) for c in plan.commands)
    return [f"commands run in these turns may have changed files hive cannot restore: {named}"]


def _one_line(command: str) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= 80 else flat[:79] + "…"


def _listing(session: OpenSession, turns: list[TurnChanges]) -> list[str]:
    lines: list[str] = []
    if len(turns) > _LISTED:
        lines.append(f"  ({len(turns) - _LISTED} earlier turns not shown: /rewind N takes any of them)")
    for t in turns[-_LISTED:]:
        if t.paths:
            files = ", ".join(_shown(session, p) for p in t.paths)
        elif t.undone:
            files = "(undone)"
        else:
            files = "(no file changed)"
        ran = f" · ran {len(t.commands)} command(s)" if t.commands else ""
        lines.append(f"  {t.number:>2}. {t.title or '(empty message)'} · {files}{ran}")
    return lines


def _preview(session: OpenSession, plan: UndoPlan) -> list[str]:
    lines = [f"  {_shown(session, r.path)}  {_stat(r)}" for r in plan.files]
    if plan.conflicts:
        names = ", ".join(_shown(session, r.path) for r in plan.conflicts)
        lines.append(f"changed since hive's tools left them (by you or another program): {names}")
    lines += _commands_note(plan)
    return lines


def _stat(restore: Restore) -> str:
    """What restoring does to the file, counted from its content now to the content brought back."""
    before = restore.before
    if not restore.restorable:
        return f"cannot be restored: it was {before.size:,} bytes, over what hive keeps"
    if restore.noop:
        return "already as it was"
    now = _read(Path(restore.path))
    if not before.existed:
        return "removed (the turn created it)" if restore.current != ABSENT else "already gone"
    if restore.current == ABSENT:
        return f"brought back ({_size_or_lines(before)})"
    old, new = _text(now), _text(before.content)
    if old is None or new is None:
        return f"binary, {len(now or b''):,} → {before.size:,} bytes"
    added, removed = counts(old, new)
    return change_counts(added, removed, color=False)


def _size_or_lines(state: FileState) -> str:
    text = _text(state.content)
    if text is None:
        return f"{state.size:,} bytes"
    return change_counts(len(text.splitlines()), 0, color=False)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _text(data: bytes | None) -> str | None:
    if data is None or b"\0" in data:
        return None
    try:
        return data.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError:
        return None


def _shown(session: OpenSession, path: str) -> str:
    root = session.host.project_root.resolve()
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path
