"""A CLI's process from its start to its end: what every backend does the same way around its own wire.

:class:`CliProcess` owns one CLI started through :func:`~hive_core.child_processes.open_child` (a process group
of its own, marked as hive's) and, when the CLI speaks on its stdio, the :class:`~.transport.ProcessTransport`
over it (the stderr tail, the lines that were not JSON). It says how the process ended
(:meth:`~CliProcess.describe_exit`, :meth:`~CliProcess.describe`), waits for a dying one to settle so that the
message can say so (:meth:`~CliProcess.settle`), and stops it with one ladder (:meth:`~CliProcess.stop`): close
stdin, let it exit of itself, SIGINT its group, kill the group (and every process carrying the child's mark), reap.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final

import anyio

from hive_core.child_processes import SupervisedProcess
from hive_core.child_processes import open_child
from hive_protocol import excerpt
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.transport import ProcessTransport

__all__ = ["FAILED_CALL_TEXT", "CliProcess", "open_cli"]

FAILED_CALL_TEXT: Final = "Not finished: the agent failed before this call's outcome was reported."
"""The result of a call left open by a turn whose CLI failed."""

STDERR_QUOTED: Final = 2000
"""How much of the end of a CLI's stderr an error message quotes."""
EXIT_WAIT: Final = 2.0
"""How long a process that should be ending is waited for: to exit, or to be reaped once killed."""
STDERR_WAIT: Final = 0.2
"""How long the stderr tail may take to catch up with a CLI that exited."""

_Stream = int | None


async def open_cli(
    name: str,
    command: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    stdin: _Stream = subprocess.PIPE,
) -> SupervisedProcess:
    """Start ``command`` through :func:`~hive_core.child_processes.open_child`; :class:`BackendStartError` if it
    cannot start (``name`` says which backend)."""
    try:
        return await open_child(command, cwd=cwd, env=env, stdin=stdin)
    except OSError as exc:
        raise BackendStartError(f"cannot start {name} ({command[0]}): {exc}") from exc


class CliProcess:
    """One running CLI, its stdio transport, and its end (see the module)."""

    def __init__(
        self,
        name: str,
        process: SupervisedProcess,
        transport: ProcessTransport | None = None,
        *,
        stream_format: str = "JSON-RPC",
    ) -> None:
        self.name = name
        """The backend's name, for messages."""
        self.process = process
        """The CLI's process (also its process group's leader)."""
        self.transport = transport if transport is not None else ProcessTransport(process)
        """Its stdin and stdout as messages, and its stderr's tail."""
        self.stream_format = stream_format
        """What the CLI's stdout speaks, as the sentence on its noise names it."""

    @classmethod
    async def start(
        cls,
        name: str,
        command: Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None,
        env: Mapping[str, str],
        stdin: _Stream = subprocess.PIPE,
        transport: Callable[[SupervisedProcess], ProcessTransport] = ProcessTransport,
        stream_format: str = "JSON-RPC",
    ) -> CliProcess:
        """Start ``command`` (see :func:`open_cli`) with the transport ``transport`` builds over it."""
        process = await open_cli(name, command, cwd=cwd, env=env, stdin=stdin)
        return cls(name, process, transport(process), stream_format=stream_format)

    # -- how it ended ---------------------------------------------------------------------------------------

    def describe_exit(self, when: str, *, who: str | None = None) -> str:
        """How the CLI ended, ``when`` (``"at start"``, ``"during the turn"``): it exited with a code, was
        killed by a signal, or (still running) closed its output. ``who`` names it (default: :attr:`name`)."""
        who = self.name if who is None else who
        code = self.process.returncode
        if code is None:
            return f"{who} closed its output {when}"
        if code < 0:
            return f"{who} was killed by signal {-code} {when}"
        return f"{who} exited with code {code} {when}"

    def describe(self, what: str, *extra: str) -> str:
        """``what``, then ``extra``, the lines on stdout that were not JSON, and the end of the CLI's stderr."""
        parts = [what, *extra]
        if noise := self.transport.describe_noise():
            parts.append(noise.replace("JSON-RPC", self.stream_format))
        if tail := self.transport.stderr_tail():
            parts.append(f"stderr: {excerpt(tail[-STDERR_QUOTED:], STDERR_QUOTED)}")
        return "; ".join(parts)

    async def settle(self, *, exit_wait: float = EXIT_WAIT, stderr_wait: float = STDERR_WAIT) -> None:
        """After its output ended or its pipe broke: give the CLI ``exit_wait`` seconds to exit and its stderr
        ``stderr_wait`` more to be read, so the message can say how it ended (shielded, bounded)."""
        with anyio.CancelScope(shield=True):
            if self.process.returncode is None and exit_wait > 0:
                with anyio.move_on_after(exit_wait):
                    await self.process.wait()
            if stderr_wait > 0:
                await self.settle_stderr(stderr_wait)

    async def settle_stderr(self, wait: float = STDERR_WAIT) -> None:
        """Let the stderr tail catch up with what the CLI wrote before it failed (at most ``wait`` seconds)."""
        with anyio.CancelScope(shield=True), anyio.move_on_after(wait):
            await self.transport.stderr_closed.wait()

    # -- stopping -------------------------------------------------------------------------------------------

    def signal_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the CLI's process group (nothing once it exited)."""
        if self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)

    async def interrupt(self, grace: float) -> None:
        """SIGINT the group and wait ``grace`` seconds for the CLI to exit (nothing once it exited)."""
        if self.process.returncode is None:
            self.signal_group(signal.SIGINT)
            with anyio.move_on_after(grace):
                await self.process.wait()

    async def stop(
        self, grace: float, *, exit_wait: float = 0.0, interrupt: bool = True, sweep: bool = True
    ) -> None:
        """Stop the CLI, shielded: close its stdin and wait ``exit_wait`` seconds for it to exit of itself; SIGINT
        its group and wait ``grace`` (unless not ``interrupt``); kill the group and every process carrying the
        child's mark; reap it. Leaves no process behind.

        Without ``sweep``, a CLI that exited of itself has only its group killed: what left the group is killed
        as it is reaped, and the scan of ``/proc`` for the mark (:meth:`~SupervisedProcess.kill_tree`) is
        spared (twice per turn, ~10 % of a one-turn process's CPU)."""
        process = self.process
        with anyio.CancelScope(shield=True):
            await self.transport.close()
            if process.returncode is None and exit_wait > 0:
                with anyio.move_on_after(exit_wait):
                    await process.wait()
            if interrupt:
                await self.interrupt(grace)
            if process.returncode is None or sweep:
                # The group too: what the CLI started may outlive it there.
                process.kill_tree()
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
            with anyio.move_on_after(EXIT_WAIT):
                await process.aclose()
