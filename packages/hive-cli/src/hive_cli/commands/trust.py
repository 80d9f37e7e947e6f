"""``hive trust``: trust a project's settings that lower protection, list the trusted projects, revoke one."""

from __future__ import annotations

import sys
from pathlib import Path

from hive_cli.errors import USER_ERRORS
from hive_cli.project_trust import settings_needing_trust
from hive_core.config import TrustStore
from hive_core.config import find_project_root
from hive_core.config import hive_home
from hive_core.config import home_project_problem
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA

__all__ = ["trust_main"]


def _root(path: str | None) -> Path:
    start = Path(path) if path is not None else Path.cwd()
    return find_project_root(start)


def trust_main(path: str | None, *, list_all: bool = False, revoke: bool = False) -> int:
    """Trust the project around ``path`` (the current directory by default), or ``revoke`` that trust, or
    ``list_all`` the projects the store knows; the exit code."""
    store = TrustStore(hive_home())
    if list_all:
        records = store.records()
        if not records:
            sys.stdout.write("no project is trusted\n")
        for root, record in sorted(records.items()):
            state = store.state(Path(root)) if record.trusted else "declined"
            sys.stdout.write(f"{state:<9} {root}\n")
        return 0
    missing = path is not None and not Path(path).exists()
    root = Path(path).expanduser().resolve() if missing and path is not None else _root(path)
    if revoke:
        if not store.revoke(root):
            sys.stderr.write(f"hive: {root} was not trusted\n")
            return 1
        sys.stdout.write(f"revoked the trust in {root}\n")
        return 0
    if missing:
        sys.stderr.write(f"hive: {path} does not exist; name a project's folder\n")
        return 1
    problem = home_project_problem(root)
    if problem is not None:
        sys.stderr.write(f"hive: {problem}, which is never a project; trust a project's folder instead\n")
        return 1
    try:
        found = settings_needing_trust(root, load_config(root, schema=CONFIG_SCHEMA, trusted=False))
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    store.trust(root)
    sys.stdout.write(f"trusted {root}\n")
    for item in found:
        sys.stdout.write(f"  uses {item}\n")
    sys.stdout.write("a change to its .hive/ files or .env asks again\n")
    return 0
