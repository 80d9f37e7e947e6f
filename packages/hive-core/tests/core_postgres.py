"""A real PostgreSQL server for the tests: started from the machine's binaries in a temporary directory.

The server listens on a private port of 127.0.0.1 (its socket in the temporary directory too) with trust
authentication. ``initdb`` and ``postgres`` refuse to run as root, so as root they run as ``nobody`` (through
``setpriv``), in a directory given to that user. Without the binaries the tests that need a server are skipped,
saying why.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "find_postgres_bin", "postgres", "postgres_server"]


def find_postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: from ``PATH``, else Debian's ``/usr/lib/postgresql/*/bin``."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(found).parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


class PostgresServer:
    """A running server: :meth:`new_database` makes an empty database and returns its URL."""

    def __init__(self, port: int, user: str) -> None:
        self.port = port
        self.user = user

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        """A URL of ``database`` on this server (with ``password`` in it, which trust authentication ignores)."""
        secret = "" if password is None else f":{password}"
        return f"postgresql://{self.user}{secret}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        import psycopg
        from psycopg import sql

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)


_INITDB = ("-E", "UTF8", "--no-sync", "--no-instructions")
_WAIT = ("-w", "-t", "120", "start")  # pg_ctl waits until the server accepts connections


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def postgres_server(binaries: Path) -> Generator[PostgresServer]:
    """Start a server from ``binaries`` for the block, and stop it (and remove its files) after."""
    as_other: list[str] = []
    as_root = os.geteuid() == 0
    # As root, in /tmp itself: a private temporary folder (TMPDIR) may be closed to the server's user.
    root = Path(tempfile.mkdtemp(prefix="hive-pg-", dir="/tmp" if as_root else None))
    if as_root:
        as_other = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]
        shutil.chown(root, "nobody", "nogroup")
    data = root / "data"
    port = _free_port()
    user = "hive"
    env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
    try:
        subprocess.run(
            [*as_other, str(binaries / "initdb"), "-D", str(data), "-A", "trust", "-U", user, *_INITDB],
            check=True,
            capture_output=True,
            env=env,
        )
        options = f"-p {port} -k {root} -h 127.0.0.1 -c fsync=off -c full_page_writes=off"
        subprocess.run(
            [
                *as_other,
                str(binaries / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                *_WAIT,
            ],
            check=True,
            capture_output=True,
            env=env,
        )
        try:
            yield PostgresServer(port, user)
        finally:
            subprocess.run(
                [*as_other, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                check=False,
                capture_output=True,
                env=env,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres() -> Generator[PostgresServer]:
    """A PostgreSQL server for the whole run, started on first use (a conftest imports this fixture)."""
    binaries = find_postgres_bin()
    if binaries is None:
        pytest.skip(
            "no PostgreSQL here: initdb and pg_ctl are neither on PATH nor in /usr/lib/postgresql/*/bin"
        )
    with postgres_server(binaries) as server:
        yield server
