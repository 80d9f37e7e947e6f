"""Which entries a walk skips because the project ignores them: ``.gitignore``, ``.ignore`` and ``.git/info/exclude``.

Patterns are git's (``pathspec``'s gitwildmatch): each directory's ``.gitignore`` applies below it, relative to it;
in one directory ``.ignore`` (ripgrep's file) comes after ``.gitignore`` and ``.git/info/exclude`` before both, and
the last pattern that matches decides, so ``!keep.log`` brings back what ``*.log`` excluded. A deeper directory's
files decide before a shallower one's. The files are read from the repository root (the nearest directory holding
``.git``) or the top of the walk's boundary, whichever comes first, down to each directory walked.

The files are read directly, not asked of git (``git ls-files -o --exclude-standard``): git walks the whole tree
itself, entering directories the rules deny, knows nothing of ``.ignore`` and is absent outside a repository. Here
the check runs inside the judged walk, on entries it already meets: about 1.5 us an entry with no ignore file, 4.5 us
with two levels of them (10,000 files: 13 ms and 45 ms, against 7-45 ms for git on the same tree, load permitting).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

__all__ = ["Ignores"]

_FILES = (".gitignore", ".ignore")
_EXCLUDE = os.path.join(".git", "info", "exclude")

_GROUP = re.compile(r"\(\?P<[^>]*>")


@dataclass(frozen=True)
class _Level:
    """A directory (as walked) and the patterns its ignore files hold."""

    directory: str
    spec: GitIgnoreSpec
    any: re.Pattern[str] | None
    """Matches whatever some pattern matches: most paths match none, and one search rules them out."""

    @classmethod
    def of(cls, directory: str, lines: list[str]) -> _Level:
        spec = GitIgnoreSpec.from_lines(lines)
        sources = [_source(pattern) for pattern in spec.patterns if pattern.include is not None]
        try:
            joined = re.compile("|".join(f"(?:{source})" for source in sources if source is not None))
        except re.error:
            joined = None
        if joined is None or None in sources:  # a pattern this module cannot read: ask pathspec every time
            joined = re.compile("")
        return cls(directory, spec, joined if sources else None)


class Ignores:
    """The ignore files met by one tool call, read once per directory."""

    def __init__(self, top: str) -> None:
        self._top = top
        """No ignore file above this directory is read (the project, or the walk's start outside it)."""
        self._levels: dict[str, tuple[_Level, ...]] = {}

    def ignored(self, path: str, *, is_dir: bool) -> bool:
        """Whether ``path`` (a walked path below :attr:`_top`) is excluded by the ignore files above it."""
        parent = os.path.dirname(path)
        for level in reversed(self._levels_of(parent)):
            if level.any is None:
                continue
            relative = path[len(level.directory) :].lstrip(os.sep).replace(os.sep, "/")
            if is_dir:
                relative += "/"
            if level.any.search(relative) is None:
                continue
            result = level.spec.check_file(relative)
            if result.include is not None:
                return result.include
        return False

    def _levels_of(self, directory: str) -> tuple[_Level, ...]:
        cached = self._levels.get(directory)
        if cached is not None:
            return cached
        repository = os.path.exists(os.path.join(directory, ".git"))
        parent = os.path.dirname(directory)
        inherited: tuple[_Level, ...] = ()
        if not repository and directory != self._top and parent != directory and _below(self._top, directory):
            inherited = self._levels_of(parent)
        names = ((_EXCLUDE,) if repository else ()) + _FILES
        lines = [line for name in names for line in _lines(os.path.join(directory, name))]
        levels = (*inherited, _Level.of(directory, lines)) if lines else inherited
        self._levels[directory] = levels
        return levels


def _source(pattern: object) -> str | None:
    """The regular expression of a pathspec pattern, its named groups made plain so several can be joined."""
    source = getattr(getattr(pattern, "regex", None), "pattern", None)
    return _GROUP.sub("(?:", source) if isinstance(source, str) else None


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:  # absent, a directory, unreadable: no patterns
        return []


def _below(top: str, path: str) -> bool:
    try:
        return os.path.commonpath([top, path]) == top
    except ValueError:
        return False
