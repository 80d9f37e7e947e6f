"""``hive run --auto-commit``: commit what the run changed, and nothing it should not.

What is committed: the changes to files git already tracks, and the new files hive's own file tools wrote in the
run (``write_file``, ``edit_file``, ``move_file``). Never a file that may hold secrets (``.env``, ``*.env``,
``.env.*``, anything under a ``secrets`` directory) or that the session's read rules deny or ask about, tracked or
not; never an untracked file a command made (a test run's output, a planted file). What was left out is said in
one line on stderr. git runs disarmed (:mod:`hive_cli.git_commands`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterable
from pathlib import Path
from pathlib import PurePosixPath
from typing import Any
from typing import Final

from hive_cli.git_commands import HiveGit
from hive_cli.git_commands import UnsafeRepository
from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import WRITE_FILE

__all__ = ["auto_commit", "is_secret_path", "written_paths"]

_WRITING_TOOLS: Final = {
    WRITE_FILE: ("path",),
    EDIT_FILE: ("path",),
    MOVE_FILE: ("source", "destination"),
    DELETE_FILE: ("path",),
}
"""hive's file tools that change files, and the arguments naming the files they change."""

_SHOWN: Final = 5
"""How many left-out paths the message names."""


def written_paths(calls: Iterable[tuple[str, Any, bool | None]]) -> list[str]:
    """The files hive's own tools changed: the paths named by the successful ``(tool, arguments, success)`` calls
    of :data:`_WRITING_TOOLS` (arguments as a mapping or as JSON text), as the calls gave them."""
    found: list[str] = []
    for tool, arguments, success in calls:
        names = _WRITING_TOOLS.get(tool)
        if names is None or success is not True:
            continue
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except ValueError:
                continue
        if not isinstance(arguments, dict):
            continue
        for name in names:
            value = arguments.get(name)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(value, str) and value:
                found.append(value)
    return found


def is_secret_path(path: str) -> bool:
    """Whether the project-relative ``path`` is one that may hold secrets, whatever the rules say."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return "secrets" in parts[:-1] or name == "secrets" or name.startswith(".env") or name.endswith(".env")


def auto_commit(
    root: Path,
    message: str,
    written: Iterable[str],
    readable: Callable[[str], bool] | None = None,
) -> None:
    """Commit in ``root`` the tracked changes and the new files among ``written``, leaving out secrets and what
    ``readable`` (a project-relative path → whether the read rules allow it unasked) refuses; say what happened
    on stderr when it is not a plain commit."""
    git = HiveGit(root)
    try:
        _commit(git, root, message, written, readable)
    except UnsafeRepository as problem:
        _say(f"{problem}; nothing committed")
    except OSError as problem:
        _say(f"git could not run ({problem}); nothing committed")


def _commit(
    git: HiveGit,
    root: Path,
    message: str,
    written: Iterable[str],
    readable: Callable[[str], bool] | None,
) -> None:
    if git.run("rev-parse", "--is-inside-work-tree").returncode != 0:
        _say("not a git repository, nothing committed")
        return
    tracked = _listing(git.run("ls-files", "-z", "--modified", "--deleted", "--", "."))
    untracked = _listing(git.run("ls-files", "-z", "--others", "--exclude-standard", "--", "."))
    ours = {path for path in (_inside(root, given) for given in written) if path is not None}
    new = [path for path in untracked if path in ours]
    candidates = list(dict.fromkeys([*tracked, *new]))

    def kept(path: str) -> bool:
        return not is_secret_path(path) and (readable is None or readable(path))

    chosen = [path for path in candidates if kept(path)]
    left_out = [path for path in candidates if not kept(path)]
    left_out += [path for path in untracked if path not in ours]
    if chosen:
        added = git.run("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", input="\0".join(chosen))
        if added.returncode != 0:
            _say(f"git add failed: {_first_line(added.stderr)}; nothing committed")
            return
    if left_out:
        shown = ", ".join(left_out[:_SHOWN]) + (
            f" and {len(left_out) - _SHOWN} more" if len(left_out) > _SHOWN else ""
        )
        _say(
            f"left out {len(left_out)} path(s) hive did not write or that may hold secrets ({shown}); "
            "commit them yourself if they belong"
        )
    if git.run("diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv").returncode == 0:
        _say("no changes to commit")
        return
    result = git.run("commit", "-q", "--no-verify", "-m", message)
    if result.returncode != 0:
        _say(f"git commit failed: {_first_line(result.stderr)}", prefix="hive: --auto-commit failed")


def _inside(root: Path, given: str) -> str | None:
    """``given`` (as a tool call named it) relative to ``root``, in git's spelling; ``None`` outside it."""
    full = os.path.normpath(os.path.join(root, given))
    for base in (os.path.normpath(root), os.path.realpath(root)):
        relative = os.path.relpath(full, base)
        if relative != "." and relative != ".." and not relative.startswith(".." + os.sep):
            return PurePosixPath(*Path(relative).parts).as_posix()
    return None


def _listing(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [path for path in result.stdout.split("\0") if path] if result.returncode == 0 else []


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no message")


def _say(text: str, *, prefix: str = "hive: --auto-commit") -> None:
    sys.stderr.write(f"{prefix}: {text}\n")
