"""Where configuration lives: the hive home, the project root, and the files in each."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

__all__ = [
    "CONFIG_FILE_NAME",
    "ENV_FILE_NAME",
    "HIVE_DIR_NAME",
    "HIVE_HOME_VAR",
    "find_project_root",
    "global_config_path",
    "hive_home",
    "project_config_path",
    "project_env_path",
]

HIVE_HOME_VAR: Final = "HIVE_HOME"
"""The environment variable that moves the hive home away from ``~/.hive``."""

HIVE_DIR_NAME: Final = ".hive"
"""The directory name of the hive home (under the user's home) and of a project's hive directory."""

CONFIG_FILE_NAME: Final = "config.yaml"
"""The configuration file's name, in the hive home and in a project's ``.hive/``."""

ENV_FILE_NAME: Final = ".env"
"""The project's dotenv file, at the project root."""


def hive_home(env: Mapping[str, str] = os.environ) -> Path:
    """The hive home: ``$HIVE_HOME`` when set and not empty (``~`` expanded, made absolute), else
    ``~/.hive``."""
    moved = env.get(HIVE_HOME_VAR, "")
    if moved:
        return Path(moved).expanduser().absolute()
    return Path.home() / HIVE_DIR_NAME


def find_project_root(start: Path, *, home: Path | None = None) -> Path:
    """The nearest directory from ``start`` upwards with a ``.hive/`` directory or a ``.git``, else ``start``.

    A ``.hive/`` that is the hive home (``home``, by default :func:`hive_home`) does not mark a project, so a
    directory under the user's home without a repository is not taken for a project rooted at ``~``. ``start``
    may be a file (its directory is used); the result is an absolute, resolved path.
    """
    origin = Path(start).expanduser().resolve()
    if origin.is_file():
        origin = origin.parent
    home_dir = (home if home is not None else hive_home()).expanduser().resolve()
    for candidate in (origin, *origin.parents):
        marker = candidate / HIVE_DIR_NAME
        if marker.is_dir() and marker.resolve() != home_dir:
            return candidate
        if (candidate / ".git").exists():  # a directory, or a file in a worktree or submodule
            return candidate
    return origin


def global_config_path(home: Path | None = None) -> Path:
    """The global configuration file, ``<home>/config.yaml`` (``home`` by default :func:`hive_home`)."""
    return (home if home is not None else hive_home()) / CONFIG_FILE_NAME


def project_config_path(project_root: Path) -> Path:
    """The project's configuration file, ``<project>/.hive/config.yaml``."""
    return project_root / HIVE_DIR_NAME / CONFIG_FILE_NAME


def project_env_path(project_root: Path) -> Path:
    """The project's dotenv file, ``<project>/.env``."""
    return project_root / ENV_FILE_NAME
