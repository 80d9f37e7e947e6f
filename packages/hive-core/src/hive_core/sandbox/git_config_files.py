"""What git's configuration sends git to inside the project, so the sandbox keeps it read-only too: the hooks
directory ``core.hooksPath`` names (husky's ``.husky/``, a ``.githooks/`` the project tracks) and the files
``include.path`` and ``includeIf.*.path`` pull configuration from (a shared ``.gitconfig`` the project tracks).

Without this, a command could rewrite a tracked hook or an included configuration file, and the user's next
``git commit`` or ``git status`` would run what it planted, outside the sandbox. The answer comes from the host's
own ``git config --list --show-origin`` (which reads configuration and runs nothing), and is kept per project for as
long as none of the configuration files it came from changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path
from typing import Final
from typing import NamedTuple

__all__ = ["GitConfigPaths", "git_config_paths"]

_TIMEOUT: Final = 5.0
_KEPT: Final = frozenset({"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM"})
"""The ``GIT_*`` variables kept: which configuration files the user's git reads (``GIT_DIR`` and the like would
send it to another repository)."""


class GitConfigPaths(NamedTuple):
    """Where a repository's configuration points git."""

    hooks: Path | None
    """The hooks directory ``core.hooksPath`` names, made absolute; ``None`` when it is not set."""
    includes: tuple[Path, ...]
    """The configuration files included, made absolute (whether they exist or not)."""


class _Cached(NamedTuple):
    stamps: tuple[tuple[str, int], ...]
    answer: GitConfigPaths


_lock = threading.Lock()
_cache: dict[Path, _Cached] = {}


def git_config_paths(project: Path, environ: Mapping[str, str] = os.environ) -> GitConfigPaths:
    """Where git's configuration for the repository at ``project`` (its top, with its own ``.git``) sends git;
    nothing when there is no such repository or no ``git``."""
    nothing = GitConfigPaths(None, ())
    if not os.path.lexists(project / ".git"):
        return nothing
    program = shutil.which("git", path=environ.get("PATH"))
    if program is None:
        return nothing
    with _lock:
        cached = _cache.get(project)
    if cached is not None and _stamps(path for path, _ in cached.stamps) == cached.stamps:
        return cached.answer
    env = {name: value for name, value in environ.items() if not name.startswith("GIT_") or name in _KEPT}
    try:
        listing = subprocess.run(
            [program, "--no-pager", "config", "--list", "--show-origin", "-z"],
            cwd=project,
            env=env,
            capture_output=True,
            timeout=_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return nothing
    answer, files = _parse(listing.stdout.decode("utf-8", "surrogateescape"), project, environ)
    # Files that do not exist yet count too: creating one changes the answer.
    files |= {str(project / ".git" / "config"), *map(str, answer.includes), *_global_files(environ)}
    with _lock:
        _cache[project] = _Cached(_stamps(sorted(files)), answer)
    return answer


def _parse(listing: str, project: Path, environ: Mapping[str, str]) -> tuple[GitConfigPaths, set[str]]:
    """The hooks directory and included files from ``git config --list --show-origin -z`` output (origin, then
    key and value, each ended by NUL), and the configuration files it came from."""
    fields = listing.split("\0")
    hooks: Path | None = None
    includes: list[Path] = []
    files: set[str] = set()
    for origin, entry in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = entry.partition("\n")
        key = key.lower()
        source = _origin_file(origin, project)
        if source is not None:
            files.add(str(source))
        if key == "core.hookspath" and value:
            hooks = _absolute(value, project, environ)
        elif (key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))) and value:
            base = source.parent if source is not None else project
            includes.append(_absolute(value, base, environ))
    return GitConfigPaths(hooks, tuple(dict.fromkeys(includes))), files


def _origin_file(origin: str, project: Path) -> Path | None:
    if not origin.startswith("file:"):
        return None
    return Path(os.path.normpath(project / origin.removeprefix("file:")))


def _absolute(value: str, base: Path, environ: Mapping[str, str]) -> Path:
    home = environ.get("HOME", "")
    if value.startswith("~/") and home:
        value = home + value[1:]
    return Path(os.path.normpath(base / value))


def _global_files(environ: Mapping[str, str]) -> list[str]:
    home = environ.get("HOME", "")
    config_home = environ.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
    found = [environ.get("GIT_CONFIG_GLOBAL", "")]
    if home:
        found.append(os.path.join(home, ".gitconfig"))
    if config_home:
        found.append(os.path.join(config_home, "git", "config"))
    return [path for path in found if path]


def _stamps(paths: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """Each path with its modification time (``-1`` when it does not exist)."""
    found: list[tuple[str, int]] = []
    for path in paths:
        try:
            found.append((path, os.stat(path).st_mtime_ns))
        except OSError:
            found.append((path, -1))
    return tuple(found)
