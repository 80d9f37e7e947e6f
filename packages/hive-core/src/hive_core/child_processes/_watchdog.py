"""The watchdog program: once hive is gone, it kills every process hive started and their descendants.

Run by :class:`~hive_core.child_processes.ChildSupervisor` as ``python -I -S _watchdog.py NAME=VALUE``, in a
session of its own, with the read end of a pipe on standard input. hive holds the write end and writes one line
per process group it starts (``+PGID``) or is done with (``-PGID``). When the pipe reaches its end (hive exited,
crashed or was killed with SIGKILL: the kernel closes the pipe in every case) the watchdog kills every registered
group, with every process below its leader in the process tree (a command's daemon that left the group and
cleared its environment stays there when a subreaper launched the command: see ``_subreaper.py``), and then, where
``/proc`` exists, every process whose environment carries ``NAME=VALUE``, scanning again
until none is left (a process forking meanwhile is caught by the next pass), and exits.

The standard library only, and nothing hive imports: this file runs in a bare interpreter (``-S``, no
site-packages) so that it starts in a few milliseconds. :func:`kill_all` is also imported by hive itself, for a
forced exit that must not wait for the watchdog.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterable
from collections.abc import Iterator

__all__ = ["IGNORED_SIGNALS", "kill_all", "marked_processes", "process_tree"]

IGNORED_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name)
)
"""What the watchdog never dies of: a Ctrl+C, a hang-up or a broad kill meant for hive must not take away the
one who cleans up after it. (SIGKILL cannot be ignored; a watchdog killed so is replaced at hive's next spawn.)"""

_PROC = "/proc"
_MAX_PASSES = 100
"""Scans at most; each kills what the last one found, so only a process forking faster than a scan outlasts it."""


def marked_processes(marker: bytes, *, proc: str = _PROC) -> Iterator[int]:
    """The ids of the live processes whose environment holds the entry ``marker`` (``NAME=VALUE``), or the
    entry of one of its children (``NAME=VALUE.N``, ``NAME=VALUE.N.M``...).

    A zombie has no environment left, so a killed process stops being found as soon as it is dead. Processes
    whose environment cannot be read (another user's) are skipped.
    """
    needle = b"\0" + marker
    try:
        names = os.listdir(proc)
    except OSError:
        return
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/environ", "rb") as file:
                environ = file.read()
        except OSError:
            continue
        if _holds(b"\0" + environ + b"\0", needle):
            yield int(name)


def process_tree(roots: Iterable[int], *, proc: str = _PROC) -> set[int]:
    """``roots`` and every process below them in the process tree, each stopped (SIGSTOP) as it is found so that
    none forks meanwhile; walked again until a pass finds nothing new. Only a root that leads its own process
    group (a group hive covers, whose leader still runs) is walked: another process may have its id by now."""
    found: set[int] = set()
    pending = [root for root in roots if _group_of(root, proc) == root]
    while pending:
        for pid in pending:
            found.add(pid)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGSTOP)
        # A fork that was under way when its parent was stopped shows up in the next pass.
        pending = [child for pid in found for child in _children(pid, proc) if child not in found]
    return found


def _group_of(pid: int, proc: str) -> int | None:
    try:
        with open(f"{proc}/{pid}/stat", "rb") as file:
            # The fields after the command name (which may hold anything): state, parent, group...
            return int(file.read().rpartition(b")")[2].split()[2])
    except (OSError, ValueError, IndexError):
        return None


def _children(pid: int, proc: str) -> list[int]:
    children: list[int] = []
    try:
        threads = os.listdir(f"{proc}/{pid}/task")
    except OSError:
        return children
    for thread in threads:
        try:
            with open(f"{proc}/{pid}/task/{thread}/children", "rb") as file:
                children.extend(int(child) for child in file.read().split())
        except FileNotFoundError:
            if os.path.isdir(f"{proc}/{pid}/task/{thread}"):  # a kernel without the children files
                return _children_by_parent(pid, proc)
        except (OSError, ValueError):
            continue
    return children


def _children_by_parent(pid: int, proc: str) -> list[int]:
    """The processes whose parent is ``pid``, from every process's ``stat``."""
    found: list[int] = []
    for name in os.listdir(proc):
        if not name.isdigit():
            continue
        try:
            with open(f"{proc}/{name}/stat", "rb") as file:
                # The fields after the command name (which may hold anything): state, parent...
                if int(file.read().rpartition(b")")[2].split()[1]) == pid:
                    found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _holds(environ: bytes, needle: bytes) -> bool:
    start = environ.find(needle)
    while start >= 0:
        if environ[start + len(needle) : start + len(needle) + 1] in (b"\0", b"."):
            return True
        start = environ.find(needle, start + 1)
    return False


def kill_all(groups: Iterable[int], marker: bytes) -> None:
    """SIGKILL every process group in ``groups`` with every process below its leader in the process tree, then
    every process carrying ``marker``, until none is left.

    Does nothing where there are no process groups (Windows).
    """
    if not hasattr(os, "killpg"):
        return
    groups = list(groups)
    below: set[int] = process_tree(groups) if os.path.isdir(f"{_PROC}/self/task") else set()
    for group in groups:
        with contextlib.suppress(OSError):
            os.killpg(group, signal.SIGKILL)
    for pid in below:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    if not os.path.isdir(f"{_PROC}/self"):
        return
    own = os.getpid()
    clean = 0
    for _ in range(_MAX_PASSES):
        found = [pid for pid in marked_processes(marker) if pid != own]
        # Two clean passes in a row: a process in the middle of an exec shows an empty environment for an
        # instant, so one clean pass can miss it.
        clean = 0 if found else clean + 1
        if clean == 2:
            return
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _serve(marker: bytes) -> None:
    groups: set[int] = set()
    pending = b""
    while True:
        try:
            chunk = os.read(0, 4096)
        except InterruptedError:  # pragma: no cover - retried by Python itself since PEP 475
            continue
        except OSError:
            break
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError):
                group = int(line[1:])
                if line.startswith(b"+"):
                    groups.add(group)
                elif line.startswith(b"-"):
                    groups.discard(group)
    kill_all(groups, marker)


def main(argv: list[str]) -> int:
    """Watch standard input until its end, then kill what the marker ``argv[1]`` and the registrations name."""
    if len(argv) != 2 or "=" not in argv[1]:
        sys.stderr.write("usage: _watchdog.py NAME=VALUE  (the pipe from hive on stdin)\n")
        return 2
    # Blocked already by the spawn; ignored too, so that unblocking them later would change nothing.
    for signum in IGNORED_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    # Whatever else the spawn passed on (descriptors a C library opened without close-on-exec) is not ours.
    os.closerange(3, 1 << 16)
    _serve(os.fsencode(argv[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
