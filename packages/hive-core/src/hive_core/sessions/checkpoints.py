"""Checkpoints: each file's content before a turn changed it through hive's file tools, and undoing turns.

:class:`~hive_core.sessions.checkpoint_keeper.CheckpointKeeper` keeps a file's previous state (its bytes, or its
absence) the first time a turn's ``write_file``, ``edit_file``, ``delete_file`` or ``move_file`` reaches it, and
the digest of what the tool left. They are kept in the session store beside the session's log (never in the
user's repository), so they survive a restart and ``hive -c``/``-r`` finds them, and go when the session is
deleted.

:func:`plan_undo` and :func:`plan_rewind` say what undoing the last turn that changed files, or every turn from one
on, would do: each file's state to restore, whether it changed since hive's tool left it (someone else edited it),
whether it can be restored at all (a file over :data:`MAX_KEPT_BYTES` is not kept), and the commands those turns
ran (``execute_command`` can change files hive never sees). :func:`apply_undo` restores the files and records the
undo, so the next undo goes one turn further back.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Final
from typing import Protocol

import msgspec

from hive_core.messages import Message
from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import WRITE_FILE
from hive_core.turn_request import TurnRequest

from .records import Entry

__all__ = [
    "ABSENT",
    "COMMAND_TOOL",
    "FILE_CHANGING_TOOLS",
    "MAX_KEPT_BYTES",
    "CheckpointStore",
    "FileChange",
    "FileState",
    "Restore",
    "TurnChanges",
    "UndoPlan",
    "apply_undo",
    "current_digest",
    "plan_rewind",
    "plan_undo",
    "read_state",
    "session_turns",
]

FILE_CHANGING_TOOLS: Final[dict[str, tuple[str, ...]]] = {
    WRITE_FILE: ("path",),
    EDIT_FILE: ("path",),
    DELETE_FILE: ("path",),
    MOVE_FILE: ("source", "destination"),
}
"""hive's tools that change files, by name, with the arguments that name the files they change."""

COMMAND_TOOL: Final = EXECUTE_COMMAND
"""The tool whose changes to files hive cannot see, hence cannot undo."""

MAX_KEPT_BYTES: Final = 4 * 1024 * 1024
"""A file larger than this is not kept (only its size and modification time): undo says it cannot restore it."""

ABSENT: Final = ""
"""The digest recorded for a file that does not exist."""


class FileState(msgspec.Struct, frozen=True, kw_only=True):
    """A file as it was before a turn changed it."""

    existed: bool
    """Whether there was a file at the path."""
    content: bytes | None = None
    """Its bytes (text or binary alike); ``None`` when it did not exist or was over the size cap."""
    size: int = 0
    """Its size in bytes."""
    mode: int | None = None
    """Its permission bits, given back to a file undo brings back."""
    made: str | None = None
    """For a file that did not exist: the outermost of its directories that did not exist either (a tool makes
    missing parents), removed again by undo when it is left empty."""
    digest: str = ABSENT
    """The SHA-256 of its bytes (hex); :data:`ABSENT` when it did not exist; for a file over the size cap, its
    size and modification time (``large:SIZE:MTIME_NS``), so that it is never read whole."""

    @property
    def kept(self) -> bool:
        """Whether undo can bring this state back: an absent file, or one whose bytes were kept."""
        return not self.existed or self.content is not None


class FileChange(msgspec.Struct, frozen=True, kw_only=True):
    """One file one turn changed: its state before, and the digest of what hive's tools left."""

    turn: int
    """The turn: the sequence number of its ``turn_start`` entry in the session's log."""
    path: str
    """The file's absolute path (symbolic links resolved, as the tools open it)."""
    before: FileState
    """The file before the turn's first change to it."""
    after: str | None
    """The SHA-256 of what the turn's last change left (:data:`ABSENT`: no file); ``None`` when not known (the
    process died while the tool ran)."""
    undone: bool = False
    """Whether an undo or rewind already restored it."""

    @property
    def changed(self) -> bool:
        """Whether the turn left the file otherwise than it found it (a failed call leaves it as it was)."""
        return self.after != self.before.digest


class CheckpointStore(Protocol):
    """Where checkpoints are kept: :class:`~hive_core.sessions.SqliteSessionStore` is one."""

    def keep_file(self, session_id: str, path: str, read: Callable[[], FileState]) -> int:
        """Keep ``read()`` as the file's state before the session's current turn, unless that turn already kept
        one for ``path`` (``read`` is then not called); return the turn."""
        ...

    def file_left(self, session_id: str, turn: int, path: str, digest: str | None) -> None:
        """Record the digest of what the turn's latest change left at ``path``."""
        ...

    def file_changes(self, session_id: str) -> list[FileChange]:
        """The session's kept file states, by turn then path."""
        ...

    def mark_undone(self, session_id: str, changes: Iterable[FileChange]) -> None:
        """Record that ``changes`` were undone."""
        ...

    def entries(self, session_id: str, *, after: int = 0) -> Sequence[Entry]:
        """The session's log in order (only the entries past sequence number ``after``, when given)."""
        ...


def _missing_parent(path: Path) -> str | None:
    made: Path | None = None
    for parent in path.parents:
        if parent.exists():
            break
        made = parent
    return None if made is None else str(made)


def _large(info: os.stat_result) -> str:
    return f"large:{info.st_size}:{info.st_mtime_ns}"


def read_state(path: Path, *, max_bytes: int = MAX_KEPT_BYTES) -> FileState:
    """``path`` as it is now, its bytes kept up to ``max_bytes``.

    A path that is not a regular file (missing, a directory, a device) counts as absent: the file tools change
    regular files only.
    """
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return FileState(existed=False, made=_missing_parent(path))
    if not stat.S_ISREG(info.st_mode):
        return FileState(existed=False)
    mode = stat.S_IMODE(info.st_mode)
    if info.st_size > max_bytes:
        return FileState(existed=True, size=info.st_size, mode=mode, digest=_large(info))
    data = path.read_bytes()
    return FileState(
        existed=True, content=data, size=len(data), mode=mode, digest=hashlib.sha256(data).hexdigest()
    )


def current_digest(path: Path, *, max_bytes: int = MAX_KEPT_BYTES) -> str:
    """The digest of ``path`` now, as :attr:`FileState.digest` spells it; :data:`ABSENT` when there is no regular
    file there."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            return ABSENT
        if info.st_size > max_bytes:
            return _large(info)
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except (FileNotFoundError, NotADirectoryError):
        return ABSENT


@dataclass(frozen=True)
class TurnChanges:
    """One turn of a session, with the files it changed that are not undone yet."""

    turn: int
    """The sequence number of its ``turn_start`` entry."""
    number: int
    """Its place among the session's turns, from 1."""
    title: str
    """The first line of its message."""
    paths: tuple[str, ...] = ()
    """The files it changed that an undo would restore."""
    undone: tuple[str, ...] = ()
    """The files it changed that were already restored."""
    commands: tuple[str, ...] = ()
    """The commands it ran (whatever files they changed are not kept)."""


@dataclass(frozen=True)
class Restore:
    """One file an undo would restore."""

    path: str
    """The file."""
    before: FileState
    """The state it goes back to."""
    expected: str | None
    """The digest hive's tools left it with (``None``: not known)."""
    current: str
    """Its digest now."""
    changes: tuple[FileChange, ...]
    """The kept states this restores (one per turn that changed it)."""

    @property
    def changed_since(self) -> bool:
        """Whether it differs from what hive's tools left (someone else changed it since, or it is not known)."""
        return self.current != self.expected

    @property
    def restorable(self) -> bool:
        """Whether the state to go back to was kept (a file over the size cap was not)."""
        return self.before.kept

    @property
    def noop(self) -> bool:
        """Whether the file is already as it would be restored."""
        return self.current == self.before.digest


@dataclass(frozen=True)
class UndoPlan:
    """What undoing some turns would do."""

    turns: tuple[TurnChanges, ...]
    """The turns undone, oldest first."""
    files: tuple[Restore, ...]
    """The files restored, in path order."""
    commands: tuple[str, ...] = field(default=())
    """The commands those turns ran: what they changed is not restored."""

    @property
    def conflicts(self) -> tuple[Restore, ...]:
        """The files changed since hive's tools left them: restoring overwrites someone else's change."""
        return tuple(r for r in self.files if r.changed_since and r.restorable and not r.noop)

    @property
    def unrestorable(self) -> tuple[Restore, ...]:
        """The files whose earlier state was too large to keep."""
        return tuple(r for r in self.files if not r.restorable)


def _title(text: str) -> str:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first if len(first) <= 60 else first[:59] + "…"


def session_turns(store: CheckpointStore, session_id: str) -> list[TurnChanges]:
    """Every turn of the session in order, with the files it changed and the commands it ran."""
    starts: list[tuple[int, str]] = []
    commands: dict[int, list[str]] = {}
    calls: dict[str, tuple[int, str]] = {}
    for entry in store.entries(session_id):
        payload = entry.payload
        if isinstance(payload, TurnRequest):
            starts.append((entry.seq, _title(payload.content)))
        elif isinstance(payload, Message) and starts:
            turn = starts[-1][0]
            for call in payload.tool_calls:
                command = (call.arguments or {}).get("command")
                if call.name == COMMAND_TOOL and isinstance(command, str):
                    calls[call.id] = (turn, command)
            for result in payload.tool_results:
                # A refused call never ran: only the commands that ran are named.
                ran = calls.pop(result.call_id, None)
                if ran is not None and result.refusal is None:
                    commands.setdefault(ran[0], []).append(ran[1])
    for turn, command in calls.values():  # a turn cut short: whether it ran is not known, so it is named
        commands.setdefault(turn, []).append(command)
    paths: dict[int, list[str]] = {}
    undone: dict[int, list[str]] = {}
    for change in store.file_changes(session_id):
        if change.changed:
            (undone if change.undone else paths).setdefault(change.turn, []).append(change.path)
    return [
        TurnChanges(
            turn=turn,
            number=number,
            title=title,
            paths=tuple(paths.get(turn, ())),
            undone=tuple(undone.get(turn, ())),
            commands=tuple(commands.get(turn, ())),
        )
        for number, (turn, title) in enumerate(starts, 1)
    ]


def plan_undo(store: CheckpointStore, session_id: str, *, max_bytes: int = MAX_KEPT_BYTES) -> UndoPlan | None:
    """Undoing the last turn whose file changes are not undone yet; ``None`` when there is none.

    The commands of the turns after it are named too: they ran on the files it left. ``max_bytes`` is the size
    cap the states were kept with (it decides how a file is compared)."""
    turns = session_turns(store, session_id)
    last = next((t for t in reversed(turns) if t.paths), None)
    if last is None:
        return None
    return _plan(store, session_id, [t for t in turns if t.turn >= last.turn], last.turn, max_bytes)


def plan_rewind(
    store: CheckpointStore, session_id: str, turn: int, *, max_bytes: int = MAX_KEPT_BYTES
) -> UndoPlan | None:
    """Bringing the files back to how they were before ``turn`` (a ``turn_start`` sequence number); ``None`` when
    no turn from it on changed a file that is not restored yet. ``max_bytes`` as for :func:`plan_undo`."""
    turns = [t for t in session_turns(store, session_id) if t.turn >= turn]
    if not any(t.paths for t in turns):
        return None
    return _plan(store, session_id, turns, turn, max_bytes)


def _plan(
    store: CheckpointStore,
    session_id: str,
    turns: list[TurnChanges],
    first: int,
    max_bytes: int,
) -> UndoPlan:
    by_path: dict[str, list[FileChange]] = {}
    for change in store.file_changes(session_id):
        if change.undone or not change.changed or change.turn < first:
            continue
        by_path.setdefault(change.path, []).append(change)
    files: list[Restore] = []
    for path in sorted(by_path):
        changes = sorted(by_path[path], key=lambda c: c.turn)
        files.append(
            Restore(
                path=path,
                before=changes[0].before,
                expected=changes[-1].after,
                current=current_digest(Path(path), max_bytes=max_bytes),
                changes=tuple(changes),
            )
        )
    commands = tuple(command for t in turns for command in t.commands)
    return UndoPlan(
        turns=tuple(t for t in turns if t.paths or t.commands), files=tuple(files), commands=commands
    )


def apply_undo(store: CheckpointStore, session_id: str, plan: UndoPlan) -> list[tuple[str, str]]:
    """Restore the plan's files and record the undo; return ``(path, why)`` for each file not restored.

    Every file that was kept is restored (written back, or removed when the turn created it); a file over the
    size cap is left as it is and named. The undo is recorded for every file of the plan, restorable or not, so
    the next undo goes one turn further back.
    """
    problems: list[tuple[str, str]] = []
    for restore in plan.files:
        if not restore.restorable:
            problems.append(
                (
                    restore.path,
                    f"not restored: it was {restore.before.size:,} bytes, more than hive keeps "
                    f"(up to {MAX_KEPT_BYTES // (1024 * 1024)} MB a file)",
                )
            )
            continue
        try:
            _write_back(Path(restore.path), restore.before)
        except OSError as exc:
            problems.append((restore.path, f"not restored ({exc.strerror or exc})"))
    store.mark_undone(session_id, [change for restore in plan.files for change in restore.changes])
    return problems


def _write_back(path: Path, state: FileState) -> None:
    if not state.existed:
        if path.is_file() or path.is_symlink():
            path.unlink()
        if state.made is not None:
            _remove_empty(path.parent, Path(state.made))
        return
    assert state.content is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside it and renamed over it: a crash leaves the old or the restored file, never half of one.
    temporary = path.with_name(f".{path.name}.hive-undo-{os.getpid()}")
    try:
        temporary.write_bytes(state.content)
        if state.mode is not None:
            temporary.chmod(state.mode)
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _remove_empty(directory: Path, outermost: Path) -> None:
    """Remove ``directory`` and its parents up to ``outermost`` while they are empty (what a tool made for a file)."""
    if directory != outermost and outermost not in directory.parents:
        return
    while True:
        try:
            directory.rmdir()
        except OSError:  # not empty (something else is in it now), or gone
            return
        if directory == outermost:
            return
        directory = directory.parent
