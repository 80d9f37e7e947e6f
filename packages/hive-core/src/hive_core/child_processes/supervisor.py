"""The hive side of child supervision: the owner marker, the registered process groups, the watchdog's pipe."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import weakref
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import IO
from typing import Any
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream
from anyio.abc import ByteSendStream
from anyio.abc import Process

from ._watchdog import IGNORED_SIGNALS
from ._watchdog import kill_all

__all__ = ["OWNER_VARIABLE", "ChildSupervisor", "SupervisedProcess", "child_supervisor", "open_child"]

OWNER_VARIABLE: Final = "HIVE_OWNER"
"""The variable every child carries (``<hive pid>:<nonce>.<n>``): how a child's descendants are found.

An environment allow-list (the command sandbox's) must let it through."""

_WATCHDOG: Final = Path(__file__).with_name("_watchdog.py")
_SUBREAPER: Final = Path(__file__).with_name("_subreaper.py")
_SUPERVISED: Final = sys.platform != "win32"
_SUBREAPERS: Final = sys.platform == "linux"
_log = logging.getLogger(__name__)

_instances: weakref.WeakSet[ChildSupervisor] = weakref.WeakSet()


class ChildSupervisor:
    """Makes the processes hive starts die with hive, however hive ends.

    Give each child :meth:`environment` (the owner marker) and start it in a session of its own, then
    :meth:`adopt` its process group; :meth:`release` it once the group is killed and the leader reaped.
    :func:`open_child` does all three. The first call starts the watchdog (see the package's docstring); nothing
    runs before. :meth:`close` ends the watchdog, which kills whatever is still running.
    """

    def __init__(self) -> None:
        self.marker: Final = f"{os.getpid()}:{secrets.token_hex(8)}"
        """What the value of :data:`OWNER_VARIABLE` starts with in this supervisor's children."""
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self._pipe: int | None = None
        self._watchdog: int | None = None
        self._used = False
        self._marked = 0
        self._fallback = False
        _instances.add(self)

    @property
    def watchdog_pid(self) -> int | None:
        """The watchdog's process id; ``None`` until the first child (and on Windows, which has none)."""
        return self._watchdog

    @property
    def groups(self) -> frozenset[int]:
        """The process groups adopted and not yet released."""
        with self._lock:
            return frozenset(self._groups)

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with the owner marker added: the environment of a child to cover. Starts the watchdog.

        Each call marks a child of its own, ``<marker>.<n>``, so that what one child started can be told from
        what another did (:meth:`SupervisedProcess.aclose`); the watchdog kills them all.
        """
        self.start()
        with self._lock:
            self._marked += 1
            return {**base, OWNER_VARIABLE: f"{self.marker}.{self._marked}"}

    def start(self) -> None:
        """Start the watchdog unless it runs (done by every other method that needs it)."""
        with self._lock:
            self._used = True
            self._ensure_watchdog()

    def adopt(self, group: int) -> None:
        """Cover the process group ``group`` (a child started in a new session leads its own: its pid)."""
        with self._lock:
            self._used = True
            self._ensure_watchdog()
            self._groups.add(group)
            self._send(f"+{group}\n")

    def release(self, group: int) -> None:
        """Stop covering ``group``: call it once the group is killed and its leader reaped, before the id can be
        reused."""
        with self._lock:
            if group in self._groups:
                self._groups.discard(group)
                self._send(f"-{group}\n")

    def kill_marked(self, mark: str) -> None:
        """Kill every process carrying ``mark`` (a child's value of :data:`OWNER_VARIABLE`): what that child
        left running once it is done, wherever it went (another process group or session)."""
        kill_all((), f"{OWNER_VARIABLE}={mark}".encode())

    def kill_all(self) -> None:
        """Kill every adopted group and every process carrying the marker, now, from this process."""
        if not self._used:
            return
        kill_all(self.groups, f"{OWNER_VARIABLE}={self.marker}".encode())

    def close(self) -> None:
        """End the watchdog: it kills what is still running, then exits; this waits for it."""
        with self._lock:
            pipe, watchdog = self._pipe, self._watchdog
            self._pipe = self._watchdog = None
            self._groups.clear()
        if pipe is not None:
            os.close(pipe)
        if watchdog is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(watchdog, 0)

    # -- the watchdog -------------------------------------------------------------------------------------------

    def _ensure_watchdog(self) -> None:
        if not _SUPERVISED or self._pipe is not None:
            return
        self._spawn()
        for group in self._groups:
            self._send(f"+{group}\n")

    def _spawn(self) -> None:
        read, write = os.pipe()
        argv = [sys.executable, "-I", "-S", str(_WATCHDOG), f"{OWNER_VARIABLE}={self.marker}"]
        actions = [
            (os.POSIX_SPAWN_DUP2, read, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
        ]
        try:
            # Its signals blocked from the start: one sent while its interpreter starts must not end it either.
            try:
                self._watchdog = os.posix_spawn(
                    sys.executable, argv, {}, file_actions=actions, setsid=True, setsigmask=IGNORED_SIGNALS
                )
            except NotImplementedError:  # no POSIX_SPAWN_SETSID: a process group of its own will do
                self._watchdog = os.posix_spawn(
                    sys.executable, argv, {}, file_actions=actions, setpgroup=0, setsigmask=IGNORED_SIGNALS
                )
        except OSError as error:
            os.close(write)
            # Without it, the children still die when hive exits normally (here) or on a stop signal (the CLI
            # calls kill_all); only a SIGKILL of hive would leave them running.
            _log.warning("hive cannot start its child watchdog (%s)", error)
            if not self._fallback:
                self._fallback = True
                atexit.register(self.kill_all)
            return
        finally:
            os.close(read)
        self._pipe = write

    def _send(self, line: str) -> None:
        if self._pipe is None:
            return
        try:
            os.write(self._pipe, line.encode())
        except OSError:
            # The watchdog died (killed by hand?): start another, told every group still covered.
            os.close(self._pipe)
            self._pipe = None
            if self._watchdog is not None:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(self._watchdog, os.WNOHANG)
            self._watchdog = None
            self._spawn()
            if self._pipe is not None:
                os.write(self._pipe, "".join(f"+{group}\n" for group in self._groups).encode())

    def _forget(self) -> None:
        """In a forked child: the pipe is the parent's, and so are the children."""
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
        self._pipe = self._watchdog = None
        self._groups = set()
        self._used = False
        self._lock = threading.Lock()


def _after_fork() -> None:
    for instance in list(_instances):
        instance._forget()  # pyright: ignore[reportPrivateUsage]


if _SUPERVISED:
    os.register_at_fork(after_in_child=_after_fork)

_shared: ChildSupervisor | None = None
_shared_lock = threading.Lock()


def child_supervisor() -> ChildSupervisor:
    """The process's supervisor, which every child hive starts goes through (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None or _shared.marker.split(":")[0] != str(os.getpid()):
            _shared = ChildSupervisor()
        return _shared


class SupervisedProcess(Process):
    """A process started by :func:`open_child`: an anyio process whose :meth:`aclose` also ends what it left
    running and releases its group from the supervisor."""

    def __init__(self, process: Process, supervisor: ChildSupervisor, mark: str) -> None:
        self._process = process
        self._supervisor = supervisor
        self.mark: Final = mark
        """Its value of :data:`OWNER_VARIABLE`, which its descendants inherit."""

    def kill_tree(self) -> None:
        """SIGKILL the process, its process group, every process below it in the process tree, and every
        descendant carrying its mark (those that left the group). Call it before the process is reaped (:meth:`wait`, :meth:`aclose`): until then its group's id
        cannot be reused. (On Windows: the process only.)"""
        if not _SUPERVISED:
            self._process.kill()
            return
        kill_all((self._process.pid,), f"{OWNER_VARIABLE}={self.mark}".encode())

    async def aclose(self) -> None:
        """Close the pipes and wait for the process (killing it if the wait is cancelled); then kill every
        descendant it left running that carries its mark, and release its group."""
        try:
            await self._process.aclose()
        finally:
            if self._process.returncode is not None:
                # Its group was the caller's to kill; the ones that left the group are found by their mark.
                self._supervisor.kill_marked(self.mark)
                self._supervisor.release(self._process.pid)

    async def wait(self) -> int:
        """Wait for the process to exit; its exit code (negative: the signal that killed it)."""
        return await self._process.wait()

    def terminate(self) -> None:
        """Send SIGTERM to the process (only the process: its group is the caller's to kill)."""
        self._process.terminate()

    def kill(self) -> None:
        """Send SIGKILL to the process."""
        self._process.kill()

    def send_signal(self, signal: signal.Signals) -> None:
        """Send ``signal`` to the process."""
        self._process.send_signal(signal)

    @property
    def pid(self) -> int:
        """The process id, which is also its process group's and session's."""
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code once it exited, else ``None``."""
        return self._process.returncode

    @property
    def stdin(self) -> ByteSendStream | None:
        """Its standard input, when it was opened as a pipe."""
        return self._process.stdin

    @property
    def stdout(self) -> ByteReceiveStream | None:
        """Its standard output, when it was opened as a pipe."""
        return self._process.stdout

    @property
    def stderr(self) -> ByteReceiveStream | None:
        """Its standard error, when it was opened as a pipe."""
        return self._process.stderr


_Stream = int | IO[Any] | None


async def open_child(
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    stdin: _Stream = subprocess.PIPE,
    stdout: _Stream = subprocess.PIPE,
    stderr: _Stream = subprocess.PIPE,
    supervisor: ChildSupervisor | None = None,
    reap_orphans: bool = False,
) -> SupervisedProcess:
    """Start ``command`` so that it, and everything it starts, dies with hive.

    The child runs in a session (and process group) of its own (a new process group on Windows), with ``env``
    (default: this process's environment) plus the owner marker, and its group is adopted by ``supervisor``
    (default: :func:`child_supervisor`) until :meth:`SupervisedProcess.aclose`, which also kills the
    descendants it left running outside its group. Killing the group when the child's work is done stays the
    caller's job (:meth:`SupervisedProcess.kill_tree`, or ``os.killpg(process.pid, signal.SIGKILL)``).

    ``reap_orphans`` (Linux) starts the command under a subreaper launcher (``_subreaper.py``, one more process and
    a bare interpreter's start), so that a daemon it starts stays below the child even once it left the group
    and cleared its environment: killed when the command exits, and by :meth:`SupervisedProcess.kill_tree` and
    the watchdog, which walk the tree. The child's :attr:`~SupervisedProcess.pid` is then the launcher's, which
    leads the same group; signal its group (as ``kill_tree`` does), not the launcher alone.
    """
    if reap_orphans and _SUBREAPERS:
        command = [sys.executable, "-I", "-S", str(_SUBREAPER), *command]
    supervisor = supervisor or child_supervisor()
    environment = supervisor.environment(os.environ if env is None else env)
    mark = environment[OWNER_VARIABLE]
    process: Process | None = None
    # Shielded: a spawn cancelled halfway would leave a child nobody adopted.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            list(command),
            cwd=cwd,
            env=environment,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=_SUPERVISED,
            creationflags=0 if _SUPERVISED else subprocess.CREATE_NEW_PROCESS_GROUP,
        )
        if _SUPERVISED:
            supervisor.adopt(process.pid)
    assert process is not None
    return SupervisedProcess(process, supervisor, mark)
