"""Where the CLI keeps its sessions: by default one SQLite database in the hive home, shared by every ``hive``
process; or a PostgreSQL database, shared by every machine, named by ``--store``, ``HIVE_SESSION_STORE`` or
``sessions.store`` in the configuration (global or the project's)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from hive_core.config import hive_home
from hive_core.config import load_config
from hive_core.config.paths import find_project_root
from hive_core.redaction import mask_url
from hive_core.sessions import SessionStoreError
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import is_postgres_url

__all__ = [
    "SESSIONS_FILE_NAME",
    "STORE_VARIABLE",
    "open_session_store",
    "session_store_location",
    "session_store_path",
]

SESSIONS_FILE_NAME: Final = "sessions.db"
"""The database's file name in the hive home."""

STORE_VARIABLE: Final = "HIVE_SESSION_STORE"
"""The environment variable of ``sessions.store``; ``--store`` sets it for the command and what it starts."""


def session_store_path(env: Mapping[str, str] = os.environ) -> Path:
    """``<hive home>/sessions.db``; the hive home is ``$HIVE_HOME`` when set, else ``~/.hive``."""
    return hive_home(env) / SESSIONS_FILE_NAME


def session_store_location(env: Mapping[str, str] = os.environ, *, cwd: Path | None = None) -> str:
    """The store the configuration names (``sessions.store``, which ``HIVE_SESSION_STORE`` and so ``--store``
    set), read for the project around ``cwd``; else the SQLite file :func:`session_store_path`."""
    from hive_providers import CONFIG_SCHEMA

    if not env.get(STORE_VARIABLE):
        root = find_project_root(cwd or Path.cwd())
        configured = load_config(root, env, schema=CONFIG_SCHEMA).get("sessions.store")
        if isinstance(configured, str) and configured:
            return configured
        return str(session_store_path(env))
    return env[STORE_VARIABLE]


def open_session_store(env: Mapping[str, str] = os.environ) -> SharedSessionStore:
    """The store of :func:`session_store_location` (nothing is opened or connected here, only on first use).

    A URL of another kind than ``postgresql://`` raises :class:`~hive_core.sessions.SessionStoreError`, naming it
    without its password.
    """
    location = session_store_location(env)
    if is_postgres_url(location):
        try:
            from hive_core.sessions.postgres import PostgresSessionStore
        except ImportError as exc:  # hive-core installed without its postgresql extra
            raise SessionStoreError(
                f"the session store {mask_url(location)} needs psycopg ({exc}); install hive-core[postgresql]",
                source=mask_url(location),
            ) from None
        return PostgresSessionStore(location)
    if "://" in location:
        raise SessionStoreError(
            f"the session store {mask_url(location)} is not one hive can use: give a postgresql:// URL, or "
            "leave sessions.store unset for the SQLite file in the hive home",
            source=mask_url(location),
        )
    return SqliteSessionStore(Path(location).expanduser())
