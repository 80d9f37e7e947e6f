"""The command launcher that keeps a command's daemons within reach: ``python -I -S _subreaper.py PROGRAM ARGS...``.

It makes itself a child subreaper (Linux's ``PR_SET_CHILD_SUBREAPER``), then runs the command as its child, in
the launcher's own process group and session (the ones hive started it in). A process the command starts that
leaves them (``setsid``, a double fork, a cleared environment: what daemons do) is re-parented to this launcher
when its parent exits, not to init, so it stays in the process tree below the launcher. From there:

- when the command exits, the launcher kills everything still below it, reaps it, and exits with the command's
  status (a signal that ended the command ends the launcher too);
- when hive dies, its watchdog walks the tree below every process group it covers before killing it
  (:func:`~hive_core.child_processes._watchdog.kill_all`), and finds the daemon there.

Linux only. It runs once per command, so it imports as little as it can (no ``signal`` module, whose enums cost
more than the rest): ``ctypes`` calls ``prctl`` and ``signal`` in the C library. Where ``prctl`` refuses, the
command runs all the same, with the reach it had before.
"""

from __future__ import annotations

import ctypes
import os
import resource
import sys

__all__ = ["main"]

_PR_SET_CHILD_SUBREAPER = 36
_SIG_DFL = 0
_SIGKILL = 9
# Signals Python ignores at start, which a command would otherwise inherit ignored. SIGXFSZ's number is the
# generic one (x86, ARM, RISC-V, POWER, s390); the few machines that number it otherwise are left as they are.
_SIGPIPE = 13
_SIGXFSZ = 25 if not os.uname().machine.startswith(("mips", "sparc", "alpha", "parisc")) else None


def _children() -> list[int]:
    """This process's children (it has one thread)."""
    own = os.getpid()
    try:
        with open(f"/proc/{own}/task/{own}/children", "rb") as file:
            return [int(pid) for pid in file.read().split()]
    except OSError:
        pass
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as file:
                # The parent's pid is the second field after the command name, which may hold anything.
                if int(file.read().rpartition(b")")[2].split()[1]) == own:
                    found.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _reap_the_rest() -> None:
    """Kill and reap every process below this one until none is left: each killed one's children come here."""
    while True:
        for pid in _children():
            try:  # noqa: SIM105 - contextlib is one import more at every command's start
                os.kill(pid, _SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> int:
    """Run ``argv[1:]`` under this subreaper; its exit status."""
    command = argv[1:]
    if not command:
        sys.stderr.write("usage: _subreaper.py PROGRAM [ARGS...]\n")
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    child = os.fork()
    if child == 0:
        for number in (_SIGPIPE, _SIGXFSZ):
            if number is not None:
                libc.signal(number, _SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"{command[0]}: {error.strerror or error}\n".encode())
        os._exit(127)
    _, status = os.waitpid(child, 0)
    _reap_the_rest()
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        # Ended the same way, so the caller sees the signal; without a core file of this launcher's own.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        libc.signal(number, _SIG_DFL)
        os.kill(os.getpid(), number)
        return 128 + number
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
