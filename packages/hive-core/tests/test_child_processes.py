"""Child supervision: children (and what they start) die with their owner, however the owner ends.

Real processes throughout: an owner that is SIGKILLed, children that leave their session or clear their
environment, a watchdog that is sent the signals meant for hive, killed, or outlived by a forked copy.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import anyio
import pytest
from core_harness import stop_process

from hive_core.child_processes import OWNER_VARIABLE
from hive_core.child_processes import ChildSupervisor
from hive_core.child_processes import open_child
from hive_core.child_processes._watchdog import marked_processes  # pyright: ignore[reportPrivateUsage]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and sessions")

WAIT: Final = 20.0

# Starts one child in a session of its own (it keeps the marker) and one with an empty environment (it stays
# in the process group), prints their pids as JSON, then waits to be killed.
SPAWNER: Final = textwrap.dedent(
    """
    import json, subprocess, sys, time
    away = subprocess.Popen(["sleep", "300"], start_new_session=True)
    bare = subprocess.Popen(["sleep", "301"], env={})
    print(json.dumps([away.pid, bare.pid]), flush=True)
    time.sleep(300)
    """
)

# An owner: starts SPAWNER through its supervisor, prints every pid as JSON, then waits to be killed.
OWNER: Final = textwrap.dedent(
    """
    import json, subprocess, sys
    import anyio
    from hive_core.child_processes import child_supervisor, open_child

    async def main():
        child = await open_child([sys.executable, "-c", sys.argv[1]], stderr=subprocess.DEVNULL)
        line = b""
        while not line.endswith(b"\\n"):
            line += await child.stdout.receive(1)
        print(json.dumps([child.pid, *json.loads(line), child_supervisor().watchdog_pid]), flush=True)
        await anyio.sleep(300)

    anyio.run(main)
    """
)


def wait_until(predicate: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {WAIT:g} s waiting for {what}")
        time.sleep(0.01)


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is dead: it only waits to be reaped)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def leftovers() -> Iterator[list[int]]:
    """Pids a test started; whatever still runs at teardown is killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def spawn_bare(*arguments: str) -> subprocess.Popen[bytes]:
    """A process in a session of its own without the marker: only an adopted group reaches it."""
    return subprocess.Popen(list(arguments), start_new_session=True, env={"PATH": os.environ["PATH"]})


def reap(process: subprocess.Popen[bytes]) -> int:
    try:
        return process.wait(WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)


def test_nothing_runs_before_the_first_child() -> None:
    supervisor = ChildSupervisor()
    assert supervisor.watchdog_pid is None
    supervisor.kill_all()  # nothing to kill, and no watchdog started for it
    assert supervisor.watchdog_pid is None
    environment = supervisor.environment({"A": "1"})
    assert environment == {"A": "1", OWNER_VARIABLE: f"{supervisor.marker}.1"}
    assert supervisor.environment({})[OWNER_VARIABLE] == f"{supervisor.marker}.2"  # a mark for each child
    assert supervisor.marker.startswith(f"{os.getpid()}:")
    assert supervisor.watchdog_pid is not None
    assert running(supervisor.watchdog_pid)
    supervisor.close()


def test_a_sigkilled_owner_takes_every_child_along(leftovers: list[int]) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, SPAWNER], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert owner.stdout is not None
        line = owner.stdout.readline()
        assert line, owner.stderr.read() if owner.stderr else ""
        child, away, bare, watchdog = json.loads(line)
        leftovers += [child, away, bare, watchdog]
        assert all(running(pid) for pid in (child, away, bare, watchdog))
        owner.kill()
        assert owner.wait(WAIT) == -signal.SIGKILL
        for pid, what in ((child, "the child"), (away, "the child that left"), (bare, "the bare child")):
            wait_until(lambda pid=pid: not running(pid), what)
        wait_until(lambda: not running(watchdog), "the watchdog to exit")
    finally:
        stop_process(owner)


@pytest.mark.anyio
async def test_closing_kills_what_left_the_group_and_what_cleared_its_environment(
    leftovers: list[int],
) -> None:
    supervisor = ChildSupervisor()
    process = await open_child(
        [sys.executable, "-c", SPAWNER], stderr=subprocess.DEVNULL, supervisor=supervisor
    )
    try:
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(WAIT):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        away, bare = json.loads(line)
        leftovers += [away, bare, process.pid]
        assert supervisor.groups == {process.pid}
        assert set(marked_processes(f"{OWNER_VARIABLE}={supervisor.marker}".encode())) >= {process.pid, away}
        assert bare not in set(marked_processes(f"{OWNER_VARIABLE}={supervisor.marker}".encode()))
        supervisor.close()
        for pid in (away, bare):
            wait_until(lambda pid=pid: not running(pid), f"process {pid} to be killed")
        with anyio.fail_after(WAIT):
            assert await process.wait() == -signal.SIGKILL
    finally:
        await process.aclose()


@pytest.mark.anyio
async def test_a_closed_process_releases_its_group() -> None:
    supervisor = ChildSupervisor()
    try:
        process = await open_child(
            ["true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, supervisor=supervisor
        )
        assert supervisor.groups == {process.pid}
        with anyio.fail_after(WAIT):
            await process.aclose()
        assert process.returncode == 0
        assert supervisor.groups == frozenset()
    finally:
        supervisor.close()


def test_only_the_groups_still_adopted_are_killed(leftovers: list[int]) -> None:
    supervisor = ChildSupervisor()
    kept, released = spawn_bare("sleep", "300"), spawn_bare("sleep", "301")
    leftovers += [kept.pid, released.pid]
    supervisor.adopt(kept.pid)
    supervisor.adopt(released.pid)
    supervisor.release(released.pid)
    supervisor.close()
    assert reap(kept) == -signal.SIGKILL
    assert released.poll() is None
    released.kill()
    reap(released)


def test_the_watchdog_ignores_the_signals_meant_for_hive(leftovers: list[int]) -> None:
    supervisor = ChildSupervisor()
    adopted = spawn_bare("sleep", "300")
    leftovers.append(adopted.pid)
    supervisor.adopt(adopted.pid)
    watchdog = supervisor.watchdog_pid
    assert watchdog is not None
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        os.kill(watchdog, signum)
    assert running(watchdog)
    supervisor.close()  # the watchdog, still there, kills the group on its way out
    assert reap(adopted) == -signal.SIGKILL


def test_a_killed_watchdog_is_replaced_and_told_every_group(leftovers: list[int]) -> None:
    supervisor = ChildSupervisor()
    first, second = spawn_bare("sleep", "300"), spawn_bare("sleep", "301")
    leftovers += [first.pid, second.pid]
    supervisor.adopt(first.pid)
    watchdog = supervisor.watchdog_pid
    assert watchdog is not None
    os.kill(watchdog, signal.SIGKILL)
    os.waitpid(watchdog, 0)
    supervisor.adopt(second.pid)  # finds the pipe broken: a new watchdog, told both groups
    assert supervisor.watchdog_pid not in (None, watchdog)
    supervisor.close()
    assert reap(first) == -signal.SIGKILL
    assert reap(second) == -signal.SIGKILL


def test_a_forked_copy_does_not_hold_the_watchdog_open(leftovers: list[int]) -> None:
    supervisor = ChildSupervisor()
    supervisor.start()
    watchdog = supervisor.watchdog_pid
    assert watchdog is not None
    hold, release = os.pipe()
    copy = os.fork()
    if copy == 0:  # pragma: no cover - the forked copy: wait until the test lets it go
        os.close(release)
        os.read(hold, 1)
        os._exit(0)
    os.close(hold)
    leftovers.append(copy)
    try:
        closing = threading.Thread(target=supervisor.close, daemon=True)
        closing.start()
        closing.join(WAIT)
        # The copy is still running, and had it kept the pipe's write end the watchdog would still wait.
        assert not closing.is_alive(), "the watchdog did not see the end of its pipe"
        assert not running(watchdog)
    finally:
        os.close(release)
        os.waitpid(copy, 0)


@pytest.mark.anyio
async def test_closing_a_child_ends_what_it_left_running_and_only_that(leftovers: list[int]) -> None:
    supervisor = ChildSupervisor()
    try:
        other = await open_child(["sleep", "302"], supervisor=supervisor)
        leftovers.append(other.pid)
        process = await open_child(
            ["bash", "-c", "setsid sleep 300 & echo $!"], stderr=subprocess.DEVNULL, supervisor=supervisor
        )
        assert process.mark != other.mark
        assert process.stdout is not None
        line = b""
        with anyio.fail_after(WAIT):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
            away = int(line)
            leftovers.append(away)
            assert await process.wait() == 0
            assert running(away)  # it left the group: only its mark tells it apart
            await process.aclose()
        wait_until(lambda: not running(away), "the process the child left running to be killed")
        assert supervisor.groups == {other.pid}
        assert running(other.pid)  # another child's processes are not touched
        other.kill_tree()
        with anyio.fail_after(WAIT):
            assert await other.wait() == -signal.SIGKILL
        await other.aclose()
    finally:
        supervisor.close()


def test_a_mark_matches_its_children_marks_and_no_other(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    for pid, environ in {
        1: b"A=1\0HIVE_OWNER=9:ab\0",
        2: b"HIVE_OWNER=9:ab.3\0B=2\0",
        3: b"HIVE_OWNER=9:ab.31\0",
        4: b"HIVE_OWNER=9:abc\0",
        5: b"X=HIVE_OWNER=9:ab\0",
        6: b"HIVE_OWNER=9:ab.3.1",
    }.items():
        (proc / str(pid)).mkdir(parents=True)
        (proc / str(pid) / "environ").write_bytes(environ)
    (proc / "self").mkdir()
    assert sorted(marked_processes(b"HIVE_OWNER=9:ab", proc=str(proc))) == [1, 2, 3, 6]
    assert sorted(marked_processes(b"HIVE_OWNER=9:ab.3", proc=str(proc))) == [2, 6]


def test_without_a_watchdog_the_groups_are_still_killed_from_hive(
    monkeypatch: pytest.MonkeyPatch, leftovers: list[int]
) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")  # nothing to run the watchdog with
    supervisor = ChildSupervisor()
    adopted = spawn_bare("sleep", "300")
    leftovers.append(adopted.pid)
    supervisor.adopt(adopted.pid)
    assert supervisor.watchdog_pid is None
    supervisor.kill_all()  # what the exit hook and the CLI's forced exit do
    assert reap(adopted) == -signal.SIGKILL
    supervisor.release(adopted.pid)
