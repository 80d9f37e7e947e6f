"""Where configuration lives: the hive home, the project root, and the files in each."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = [
    "AGENT_FILE_NAME",
    "CONFIG_FILE_NAME",
    "ENV_FILE_NAME",
    "HIVE_DIR_NAME",
    "HIVE_HOME_VAR",
    "RULES_FILE_NAMES",
    "find_project_root",
    "global_config_path",
    "hive_home",
    "home_project_problem",
    "project_config_path",
    "project_env_path",
    "user_home",
]

AGENT_FILE_NAME: Final = "agent.yaml"
"""The file that defines a subagent, in a folder named for it under the project's agents directory."""

HIVE_HOME_VAR: Final = "HIVE_HOME"
"""The environment variable that moves the hive home away from ``~/.hive``."""

HIVE_DIR_NAME: Final = ".hive"
"""The directory name of the hive home (under the user's home) and of a project's hive directory."""

CONFIG_FILE_NAME: Final = "config.yaml"
"""The configuration file's name, in the hive home and in a project's ``.hive/``."""

ENV_FILE_NAME: Final = ".env"
"""The project's dotenv file, at the project root."""

RULES_FILE_NAMES: Final = ("permissions.yaml", "permissions.yml", "permissions.json")
"""Permission rules file names looked for in ``<project>/.hive/``, in order; the first that exists is used."""


def hive_home(env: Mapping[str, str] = os.environ) -> Path:
    """The hive home: ``$HIVE_HOME`` when set and not empty (``~`` expanded, made absolute), else
    ``~/.hive``."""
    moved = env.get(HIVE_HOME_VAR, "")
    if moved:
        return Path(moved).expanduser().absolute()
    return Path.home() / HIVE_DIR_NAME


def user_home(env: Mapping[str, str] = os.environ) -> Path:
    """The user's home directory: ``$HOME`` when set and not empty, else the password database's, resolved."""
    named = env.get("HOME", "")
    return (Path(named) if named else Path.home()).expanduser().resolve()


def _contains(outer: Path, inner: Path) -> bool:
    return outer == inner or outer in inner.parents


def find_project_root(start: Path, *, home: Path | None = None) -> Path:
    """The project around ``start``: the root of the repository it is in (the nearest directory upwards with a
    ``.git``, a directory or the file of a worktree or submodule), else ``start`` itself.

    A ``.hive/`` never marks a project: one below the repository root (``src/.hive/``) must not make a folder its
    own project with its own rules. A ``.git`` at the user's home (``home``, by default :func:`user_home`) or
    above it is not taken either: a home folder kept in git is not the project of every folder under it. ``start``
    may be a file (its directory is used); the result is an absolute, resolved path. Whether the result may be
    used as a project at all is :func:`home_project_problem`'s question.
    """
    origin = Path(start).expanduser().resolve()
    if origin.is_file():
        origin = origin.parent
    home_dir = (home if home is not None else user_home()).expanduser().resolve()
    for candidate in (origin, *origin.parents):
        if _contains(candidate, home_dir):
            break
        if (candidate / ".git").exists():  # a directory, or a file in a worktree or submodule
            return candidate
    return origin


def home_project_problem(root: Path, *, home: Path | None = None) -> str | None:
    """Why ``root`` cannot be a project, or ``None`` when it can: the user's home folder (``home``, by default
    :func:`user_home`), a folder above it, or ``/`` would put every credential store (``~/.ssh``, ``~/.aws``,
    the hive home) inside the project."""
    resolved = Path(root).expanduser().resolve()
    home_dir = (home if home is not None else user_home()).expanduser().resolve()
    if resolved == Path(resolved.anchor):
        return f"{resolved} is the root of the file system"
    if resolved == home_dir:
        return f"{resolved} is your home folder"
    if _contains(resolved, home_dir):
        return f"{resolved} holds your home folder"
    return None


def global_config_path(home: Path | None = None) -> Path:
    """The global configuration file, ``<home>/config.yaml`` (``home`` by default :func:`hive_home`)."""
    return (home if home is not None else hive_home()) / CONFIG_FILE_NAME


def project_config_path(project_root: Path) -> Path:
    """The project's configuration file, ``<project>/.hive/config.yaml``."""
    return project_root / HIVE_DIR_NAME / CONFIG_FILE_NAME


def project_env_path(project_root: Path) -> Path:
    """The project's dotenv file, ``<project>/.env``."""
    return project_root / ENV_FILE_NAME
