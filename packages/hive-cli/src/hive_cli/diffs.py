"""What a file tool would change, as a unified diff for the person to see: before ``write_file`` / ``edit_file``
is approved, and counted (``+12 -3``, with a minus sign) when it has run.

Everything here reads the file on disk and never writes; a file too large, unreadable or not text gives no diff.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hive_cli.cells import clip
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import WRITE_FILE

__all__ = ["FILE_TOOLS", "Change", "change_counts", "counts", "diff_preview", "proposed_change", "read_text"]

FILE_TOOLS: Final = frozenset({WRITE_FILE, EDIT_FILE})
"""The tools whose approvals show a diff and whose results show what changed."""

MAX_BYTES: Final = 1_000_000
"""Files larger than this are not diffed (the diff would be slow and unreadable)."""

PREVIEW_LINES: Final = 40
"""Lines of diff an approval shows before ``… N more lines``."""

_RED, _GREEN, _CYAN, _DIM, _RESET = "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


@dataclass(frozen=True, slots=True)
class Change:
    """A file's text before and after a tool call; ``before`` is ``None`` for a file that does not exist yet."""

    path: str
    before: str | None
    after: str


def read_text(path: Path) -> str | None:
    """The text of ``path`` (newlines normalised), or ``None`` when it is missing, too large or not text."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n")


def _target(arguments: Mapping[str, object], root: Path) -> tuple[str, Path] | None:
    path = arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    target = Path(path).expanduser()
    return path, target if target.is_absolute() else root / target


def proposed_change(tool: str, arguments: Mapping[str, object], root: Path) -> Change | None:
    """What ``tool`` called with ``arguments`` would do to its file (relative paths from ``root``); ``None`` for
    another tool, arguments that are not a file edit, or an edit that would not apply."""
    if tool not in FILE_TOOLS or (found := _target(arguments, root)) is None:
        return None
    name, target = found
    before = read_text(target)
    if tool == WRITE_FILE:
        content = arguments.get("content")
        if not isinstance(content, str):
            return None
        content = content.replace("\r\n", "\n")
        if arguments.get("append") is True:
            return Change(name, before, (before or "") + content)
        return Change(name, before, content)
    old, new = arguments.get("old_text"), arguments.get("new_text")
    if not isinstance(old, str) or not isinstance(new, str) or not old:
        return None
    old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if before is None or old not in before:
        return Change(name, old, new)  # the file cannot tell: show the replacement itself
    count = -1 if arguments.get("replace_all") is True else 1
    return Change(name, before, before.replace(old, new, count))


def _diff(change: Change) -> list[str]:
    before = (change.before or "").splitlines()
    after = change.after.splitlines()
    label = change.path
    return list(
        difflib.unified_diff(
            before,
            after,
            f"a/{label}" if change.before is not None else "/dev/null",
            f"b/{label}",
            lineterm="",
        )
    )


def counts(before: str | None, after: str | None) -> tuple[int, int]:
    """Lines added and removed going from ``before`` to ``after`` (``None`` is an empty file), as the unified
    diff counts them."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, (before or "").splitlines(), (after or "").splitlines())
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def change_counts(added: int, removed: int, *, color: bool) -> str:
    """``+12 -3`` (the minus a minus sign, U+2212), green and red on a terminal."""
    plus, minus = f"+{added}", f"\N{MINUS SIGN}{removed}"
    if color:
        plus, minus = f"{_GREEN}{plus}{_RESET}", f"{_RED}{minus}{_RESET}"
    return f"{plus} {minus}"


def diff_preview(
    change: Change, *, color: bool, limit: int | None = PREVIEW_LINES, width: int | None = None
) -> list[str]:
    """The diff of ``change`` as lines to print (coloured when ``color``), at most ``limit`` of them and then
    ``… N more lines`` (``None``: all of them). A new file shows its first lines, each marked ``+``. With ``width`` each line is cut to
    that many terminal cells (tabs expanded), so a long line cannot wrap and push the question off the screen."""
    lines = _diff(change)
    if not lines:
        return ["(no change)"]
    if limit is None:
        limit = len(lines)
    head = lines[:limit]
    if width is not None:
        head = [clip(line.expandtabs(), max(width, 8)) for line in head]
    shown = [_paint(line, color) for line in head]
    if len(lines) > limit:
        more = f"… {len(lines) - limit} more lines"
        shown.append(f"{_DIM}{more}{_RESET}" if color else more)
    return shown


def _paint(line: str, color: bool) -> str:
    if not color:
        return line
    if line.startswith(("+++", "---")):
        return f"{_DIM}{line}{_RESET}"
    if line.startswith("+"):
        return f"{_GREEN}{line}{_RESET}"
    if line.startswith("-"):
        return f"{_RED}{line}{_RESET}"
    if line.startswith("@@"):
        return f"{_CYAN}{line}{_RESET}"
    return line
