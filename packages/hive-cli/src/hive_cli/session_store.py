"""Where the CLI keeps its sessions: one SQLite database in the hive home, shared by every ``hive`` process."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from hive_core.config import hive_home
from hive_core.sessions import SqliteSessionStore

__all__ = ["SESSIONS_FILE_NAME", "open_session_store", "session_store_path"]

SESSIONS_FILE_NAME: Final = "sessions.db"
"""The database's file name in the hive home."""


def session_store_path(env: Mapping[str, str] = os.environ) -> Path:
    """``<hive home>/sessions.db``; the hive home is ``$HIVE_HOME`` when set, else ``~/.hive``."""
    return hive_home(env) / SESSIONS_FILE_NAME


def open_session_store(env: Mapping[str, str] = os.environ) -> SqliteSessionStore:
    """The store at :func:`session_store_path` (the file is opened on first use, not here)."""
    return SqliteSessionStore(session_store_path(env))
