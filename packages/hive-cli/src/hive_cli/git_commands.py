"""hive's own git invocations (``--auto-commit``, ``hive doctor``): the one place their command line is built, so
that nothing the repository says can make them run a program.

A repository's configuration (``.git/config``, and the files it includes) can be written by whatever ran in the
project, so git would run what it names: hooks, ``core.fsmonitor``, the clean and smudge filters and diff drivers
that ``.gitattributes`` selects, ``gpg.program`` when ``commit.gpgSign`` is on. Every git hive starts disables those
with ``-c`` options (which also reach the git processes it starts, for submodules): hooks and the file system
monitor off, signing off, no pager, no automatic ``gc``; a filter, diff or merge driver the repository's own
configuration defines is emptied (git then skips it). The user's global and system configuration are the user's
own and stay in force, so a driver set up there (Git LFS's) still runs. ``GIT_*`` variables that would send git to
another repository or change what it runs (``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_CONFIG_PARAMETERS``,
``GIT_EXTERNAL_DIFF``...) are not passed on; only who the author is and which global configuration to read are.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = ["GIT_OVERRIDES", "HiveGit", "UnsafeRepository", "git_environment"]

GIT_OVERRIDES: Final[tuple[str, ...]] = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.pager=cat",
    "core.editor=true",
    "core.sshCommand=ssh",
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "submodule.recurse=false",
)
"""The configuration every git hive runs gets on its command line (``-c``), whatever the repository says."""

_PASSED: Final = frozenset(
    {
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_CONFIG_NOSYSTEM",
    }
)
"""The ``GIT_*`` variables of hive's environment its git still sees: the user's identity and configuration files."""

# Driver settings that name a program, and the value that turns each off.
_DRIVER_KEYS: Final = {
    "clean": "",
    "smudge": "",
    "process": "",
    "required": "false",
    "textconv": "",
    "command": "",
    "driver": "",
}
_DRIVER_SECTIONS: Final = ("filter", "diff", "merge")
_TRUSTED_SCOPES: Final = frozenset({"global", "system"})
_SCOPES: Final = frozenset({"system", "global", "local", "worktree", "command", "unknown"})
_TIMEOUT: Final = 60.0


class UnsafeRepository(Exception):
    """The repository's configuration names a program hive cannot keep git from running; git was not run."""


def git_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that could redirect or arm git, and with prompts off."""
    env = {name: value for name, value in environ.items() if not name.startswith("GIT_") or name in _PASSED}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


class HiveGit:
    """git run by hive in ``root``, disarmed (see the module)."""

    def __init__(self, root: Path, environ: Mapping[str, str] = os.environ) -> None:
        self.root = root
        """The directory git runs in (it finds the repository from there)."""
        self.env = git_environment(environ)
        """The environment it runs with."""
        self._options: list[str] | None = None

    def command(self, *args: str) -> list[str]:
        """The full command line for ``git args...``.

        Raises :class:`UnsafeRepository` when a driver the repository defines cannot be switched off.
        """
        return ["git", *self._global_options(), *args]

    def run(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        """Run ``git args...`` to its end, its output captured (never raises for git's exit code; raises
        :class:`UnsafeRepository` as :meth:`command` does)."""
        return self._run(self.command(*args), input)

    def _run(self, argv: list[str], input: str | None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv,
            cwd=self.root,
            env=self.env,
            input=input,
            stdin=subprocess.DEVNULL if input is None else None,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="surrogateescape",
            timeout=_TIMEOUT,
            check=False,
        )

    def _global_options(self) -> list[str]:
        if self._options is None:
            base = ["--no-pager", "--literal-pathspecs", *_pairs(GIT_OVERRIDES)]
            self._options = base + _pairs(self._untrusted_drivers(base))
        return self._options

    def _untrusted_drivers(self, base: list[str]) -> list[str]:
        """``key=`` settings that empty every filter, diff and merge driver program defined outside the user's
        global and system configuration; when git cannot say where a setting comes from, every one found."""
        pattern = r"^(" + "|".join(_DRIVER_SECTIONS) + r")\..*\.(" + "|".join(_DRIVER_KEYS) + r")$"
        scoped = self._run(["git", *base, "config", "--show-scope", "-z", "--get-regexp", pattern], None)
        keys = _scoped_keys(scoped.stdout) if scoped.returncode in (0, 1) else None  # 1: none set
        if keys is None:  # git too old to say, or an answer not understood: every driver is distrusted
            listing = self._run(["git", *base, "config", "-z", "--get-regexp", pattern], None)
            keys = [entry.split("\n", 1)[0] for entry in listing.stdout.split("\0")]
        overrides: list[str] = []
        for key in keys:
            if not key:
                continue
            if "=" in key:  # `-c` cannot name it: git would split the key there
                raise UnsafeRepository(
                    f"the repository's configuration sets {key}, a driver hive cannot switch off; "
                    "remove it from .git/config"
                )
            setting = f"{key}={_DRIVER_KEYS[key.rsplit('.', 1)[-1].lower()]}"
            if setting not in overrides:
                overrides.append(setting)
        return overrides


def _scoped_keys(listing: str) -> list[str] | None:
    """The keys set outside the trusted scopes, from ``git config --show-scope -z`` output (scope, then key and
    value, each ended by NUL); ``None`` when the output is not in that shape."""
    fields = listing.split("\0")
    if fields and fields[-1] == "":
        fields.pop()
    if len(fields) % 2:
        return None
    keys: list[str] = []
    for scope, entry in zip(fields[0::2], fields[1::2], strict=True):
        if scope not in _SCOPES:
            return None
        if scope not in _TRUSTED_SCOPES:
            keys.append(entry.split("\n", 1)[0])
    return keys


def _pairs(settings: tuple[str, ...] | list[str]) -> list[str]:
    return [part for setting in settings for part in ("-c", setting)]
