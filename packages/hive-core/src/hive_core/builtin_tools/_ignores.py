"""Which entries a walk skips because the project ignores them: ``.gitignore``, ``.ignore``, ``.git/info/exclude``
and, inside a repository, the user's global excludes file (git's ``core.excludesFile``, by default
``$XDG_CONFIG_HOME/git/ignore``).

Patterns are git's (``pathspec``'s gitwildmatch): each directory's ``.gitignore`` applies below it, relative to it;
in one directory ``.ignore`` (ripgrep's file) comes after ``.gitignore``, ``.git/info/exclude`` before both and the
global excludes before that, and the last pattern that matches decides, so ``!keep.log`` brings back what
``*.log`` excluded. A deeper directory's files decide before a shallower one's. The files are read from the
repository root (the nearest directory holding ``.git``, above the project too when the project is a folder of a
larger repository; else the top of the walk's boundary) down to each directory walked.

The files are read directly, not asked of git (``git ls-files -o --exclude-standard``): git walks the whole tree
itself, entering directories the rules deny, knows nothing of ``.ignore`` and is absent outside a repository. Here
the check runs inside the judged walk, on entries it already meets: about 1.5 us an entry with no ignore file, 4.5 us
with two levels of them (10,000 files: 13 ms and 45 ms, against 7-45 ms for git on the same tree, load permitting).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

__all__ = ["Ignores", "global_excludes_file"]

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
        self._top = _repository_above(top) or top
        """No ignore file above this directory is read: the walk's top (the project, or the walk's start outside
        it), or the root of the repository it lies in when that is higher (git applies those files too)."""
        self._levels: dict[str, tuple[_Level, ...]] = {}
        self._global_lines: list[str] | None = None

    def _global(self) -> list[str]:
        """The lines of the user's global excludes file, read once per walk."""
        if self._global_lines is None:
            self._global_lines = _lines(global_excludes_file())
        return self._global_lines

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
        if repository:
            lines = self._global() + lines
        levels = (*inherited, _Level.of(directory, lines)) if lines else inherited
        self._levels[directory] = levels
        return levels


def global_excludes_file(env: Mapping[str, str] = os.environ) -> str:
    """The user's global excludes file as git finds it: ``core.excludesFile`` of the global configuration
    (``$GIT_CONFIG_GLOBAL``, else ``$XDG_CONFIG_HOME/git/config`` then ``~/.gitconfig``, the later winning), else
    ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    home = env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configured = env.get("GIT_CONFIG_GLOBAL")
    configs = (
        [configured]
        if configured
        else [os.path.join(config_dir, "git", "config"), os.path.join(home, ".gitconfig")]
    )
    found: str | None = None
    for config in configs:
        found = _excludes_file_in(config) or found
    path = found or os.path.join(config_dir, "git", "ignore")
    return os.path.join(home, path[2:]) if path.startswith("~/") else path


def _excludes_file_in(config: str) -> str | None:
    """``core.excludesFile`` of one git configuration file (its last setting), read as git's INI dialect."""
    section, found = "", None
    for raw in _lines(config):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            words = line[1:].split("]", 1)[0].split()
            section = words[0].lower() if words else ""
            continue
        key, equals, value = line.partition("=")
        if section == "core" and equals and key.strip().lower() == "excludesfile":
            found = _config_value(value) or None
    return found


def _repository_above(top: str) -> str | None:
    """The nearest directory above ``top`` holding ``.git``, when ``top`` itself holds none."""
    if os.path.exists(os.path.join(top, ".git")):
        return None
    directory = os.path.dirname(top)
    while directory != os.path.dirname(directory):
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        directory = os.path.dirname(directory)
    return None


def _config_value(text: str) -> str:
    """A git configuration value: the text of its quotes, else up to a ``#`` or ``;`` comment."""
    text = text.strip()
    if text.startswith('"'):
        end = text.find('"', 1)
        return text[1:end] if end > 0 else text[1:]
    return re.split(r"[#;]", text, maxsplit=1)[0].strip()


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
