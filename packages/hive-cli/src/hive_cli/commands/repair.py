"""What ``hive doctor`` finds wrong with hive's own files and ``hive doctor --fix`` repairs: a missing hive home,
modes that let others read a file holding keys, and a legacy ``settings.json`` not yet migrated."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from hive_cli.errors import USER_ERRORS
from hive_cli.legacy_settings import LEGACY_SETTINGS
from hive_cli.legacy_settings import migrate
from hive_core.config import global_config_path
from hive_core.config import is_secret_key
from hive_core.config import project_config_path
from hive_core.config import project_env_path
from hive_core.redaction import is_secret_name

__all__ = ["LEGACY_SETTINGS", "Finding", "find_problems", "repair_all"]

_DIR_MODE: Final = 0o700
_FILE_MODE: Final = 0o600


@dataclass(frozen=True)
class Finding:
    """A problem found, and how to repair it."""

    problem: str
    """What is wrong, for the report."""
    repair: Callable[[], str]
    """Repairs it and says what it did; raises ``OSError`` or a user error when it cannot."""


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _tighten(path: Path, mode: int) -> Finding | None:
    """A finding when the file ``path`` is open to others beyond ``mode``."""
    if os.name == "nt" or _mode(path) & ~mode == 0:
        return None
    now = _mode(path)

    def repair() -> str:
        path.chmod(mode)
        return f"{path}: mode {now:04o} → {mode:04o}"

    return Finding(f"{path} holds keys but its mode is {now:04o}: other users can read it", repair)


def _holds_keys(path: Path) -> bool:
    """Whether a project config (YAML) or ``.env`` file names a secret."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if path.name == ".env":
        names = (line.removeprefix("export ").split("=", 1)[0].strip() for line in text.splitlines())
        return any(is_secret_name(name) for name in names if name and not name.startswith("#"))
    words = (line.split(":", 1)[0].strip().strip("'\"") for line in text.splitlines() if ":" in line)
    return any(is_secret_key(word) for word in words if word and not word.startswith("#"))


def find_problems(home: Path, project_root: Path) -> list[Finding]:
    """Every problem of hive's files for this home and project, in the order they are best repaired."""
    found: list[Finding] = []
    if not home.exists():

        def create() -> str:
            home.mkdir(mode=_DIR_MODE, parents=True)
            home.chmod(_DIR_MODE)  # mkdir's mode is narrowed by the umask, never widened
            return f"created {home} (mode {_DIR_MODE:04o})"

        found.append(Finding(f"the hive home {home} does not exist", create))
    candidates = [global_config_path(home), home / LEGACY_SETTINGS]
    candidates += [
        path
        for path in (project_config_path(project_root), project_env_path(project_root))
        if _holds_keys(path)
    ]
    for path in candidates:
        if path.is_file() and (loose := _tighten(path, _FILE_MODE)) is not None:
            found.append(loose)
    legacy = home / LEGACY_SETTINGS
    if legacy.is_file():
        found.append(
            Finding(
                f"a legacy {legacy} is not migrated to config.yaml", lambda: migrate(legacy, home).summary()
            )
        )
    return found


def repair_all(findings: list[Finding]) -> list[tuple[Finding, str, bool]]:
    """Repair each finding in turn: (finding, what was done or why it could not be, repaired)."""
    outcomes: list[tuple[Finding, str, bool]] = []
    for finding in findings:
        try:
            outcomes.append((finding, finding.repair(), True))
        except (OSError, *USER_ERRORS) as exc:
            outcomes.append((finding, str(exc), False))
    return outcomes
