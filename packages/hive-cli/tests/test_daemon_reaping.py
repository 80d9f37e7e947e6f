"""A command's daemon dies with the command, and with hive, even once it left every mark hive could follow.

With the sandbox off, an approved command starts a daemon the way daemons start: a double fork, ``setsid`` (out of
the command's session and process group) and ``env -i`` (without the owner variable hive's watchdog scans for).
The daemon writes its pid to a file. hive runs each such command under a child subreaper, so the daemon stays
below it in the process tree: killed when hive is killed with SIGKILL (by the watchdog, which walks that tree), and
killed when the call ends while hive goes on.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text
from cli_harness import wait_until

from hive_conformance.model_server import ScriptedModelServer

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes in /proc"),
]

DAEMON_SECONDS: Final = 305
"""How long the daemon sleeps: far longer than any test, so only a kill ends it."""


def _daemonise(pid_file: Path) -> str:
    """The command line that starts the daemon (a double fork, setsid, env -i) and records its pid."""
    inner = f"echo $$ > {shlex.quote(str(pid_file))}; exec sleep {DAEMON_SECONDS}"
    return f"(setsid env -i /bin/sh -c {shlex.quote(inner)} > /dev/null 2>&1 < /dev/null &)"


def _start(pid: int) -> str | None:
    """The start time of process ``pid`` (tells a reused pid apart); ``None`` once it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def _environment(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


@pytest.fixture
def pid_file(ws: Workspace, server: ScriptedModelServer) -> Path:
    """Where the test's daemon writes its pid, in a workspace whose commands run unconfined and unasked."""
    ws.use(server).allow_all().sandbox_off()
    return ws.root / "daemon.pid"


@pytest.fixture
def daemons() -> Iterator[list[tuple[int, str]]]:
    """The daemons a test saw: killed at teardown if the test failed to see them die."""
    seen: list[tuple[int, str]] = []
    yield seen
    for pid, start in seen:
        if _start(pid) == start:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _sandbox_off(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server).allow_all().sandbox_off()


def _daemon(pid_file: Path, daemons: list[tuple[int, str]]) -> tuple[int, str]:
    def started() -> tuple[int, str] | None:
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            return None
        start = _start(pid)
        return (
            None
            if start is None or b"sleep" not in Path(f"/proc/{pid}/cmdline").read_bytes()
            else (pid, start)
        )

    found = wait_until(started, timeout=60, what="the daemon to start")
    assert found is not None
    daemons.append(found)
    pid, _ = found
    assert b"HIVE_OWNER=" not in _environment(pid)  # nothing marks it as hive's
    assert os.getsid(pid) == pid  # a session of its own
    return found


def test_a_daemon_that_left_the_group_and_cleared_its_environment_dies_when_hive_is_killed(
    ws: Workspace, server: ScriptedModelServer, daemons: list[tuple[int, str]], pid_file: Path
) -> None:
    # The command goes on after starting the daemon, so hive is mid-call when it is killed.
    command = f"{_daemonise(pid_file)}; sleep 306"
    server.add(calls(("c1", "execute_command", {"command": command, "timeout_ms": 600_000})), text("Done."))
    with ws.start("-p", "start the daemon", "-o", "json") as proc:
        proc.close_stdin()
        pid, start = _daemon(pid_file, daemons)
        proc.signal(signal.SIGKILL)
        assert proc.wait() == -signal.SIGKILL
    wait_until(lambda: _start(pid) != start, timeout=20, what=f"the daemon {pid} to be gone")


def test_a_daemon_dies_when_the_command_that_started_it_ends_and_hive_goes_on(
    ws: Workspace, server: ScriptedModelServer, daemons: list[tuple[int, str]], pid_file: Path
) -> None:
    # The command waits until the daemon wrote its pid, then ends.
    wait = f"while [ ! -s {shlex.quote(str(pid_file))} ]; do sleep 0.05; done"
    command = f"{_daemonise(pid_file)}; {wait}"
    server.add(calls(("c1", "execute_command", {"command": command})), text("Started."))
    with ws.serve() as proc:
        assert proc.turn("start it")[-1]["stop_reason"] == "completed"
        pid, start = _daemon(pid_file, daemons) if _start(int(pid_file.read_text())) else (0, "")
        if pid:
            wait_until(lambda: _start(pid) != start, timeout=20, what=f"the daemon {pid} to be gone")
        assert proc.process.poll() is None  # the end of the call killed it, not the end of hive
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
