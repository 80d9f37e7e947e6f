"""The command tool: run a shell command in the working directory and report what it printed.

The command runs in a session and process group of its own. When it returns, times out or is cancelled, the
whole group is killed, so nothing it started in the background outlives the call. (A process that moves itself
into another session, as daemons do, escapes the group; inside the sandbox nothing escapes, since the sandbox's
pid namespace ends with it.)

Where the machine offers one, the command runs in the OS sandbox the ``sandbox`` settings describe, and it
inherits only an allow-list of environment variables (:mod:`hive_core.sandbox`).
"""

from __future__ import annotations

import codecs
import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, Process

from hive_core.sandbox import SandboxSettings, launch_command
from hive_core.tools import Tool, ToolContext

from ._capture import HeadTailBuffer

__all__ = ["execute_command", "execute_command_tool"]

_PIPE_GRACE = 2.0
"""Seconds to wait for the pipes to close after the process group is killed."""


def execute_command_tool(sandbox: SandboxSettings | None = None) -> Tool:
    """The ``execute_command`` tool, confining commands as ``sandbox`` says (by default: ``auto`` mode)."""
    settings = sandbox if sandbox is not None else SandboxSettings()

    async def execute_command(ctx: ToolContext, command: str, timeout_ms: int = 30_000) -> str:
        """Run a shell command in the working directory and return its exit code and output.

        The command runs with bash -c (cmd.exe /c on Windows), reads no input, and is stopped, with every
        process it started, when timeout_ms runs out; anything it leaves running in the background is stopped
        when it returns. Where a sandbox is available it can write only inside the project and /tmp, and has no
        network unless the configuration allows it. The result reads "Exit code: N", then "Output:" and
        "Stderr:" sections for whatever it printed. Each stream keeps at most 50,000 characters: the first
        20,000 and the last 30,000, with a note of what was left out.

        Args:
            command: The command line to run.
            timeout_ms: How long the command may run, in milliseconds, before it is stopped and the call fails.
        """
        if not command.strip():
            raise ValueError("the command is empty")
        if timeout_ms < 1:
            raise ValueError(f"timeout_ms is {timeout_ms}; give a positive number of milliseconds")
        launch = await anyio.to_thread.run_sync(
            partial(launch_command, _shell(command), working_dir=ctx.working_dir, settings=settings)
        )
        try:
            return await _run(launch.argv, launch.env, ctx.working_dir, timeout_ms)
        finally:
            # The command has ended (its group killed, the sandbox gone): the empty mount points go too.
            launch.release()

    # The command enforces its own timeout_ms (and reports the partial output), so the agent-wide per-call
    # timeout must not cut it short first.
    return Tool(execute_command, timeout=math.inf)


execute_command = execute_command_tool()
"""The command tool with the default sandbox settings (``auto``: sandboxed where the machine allows)."""


async def _spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> Process:
    """Start a command in a session and process group of its own, reading no input (the one place commands
    are started); it and all it starts die with hive, however hive ends."""
    from hive_core.child_processes import open_child

    return await open_child(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL)


async def _run(argv: Sequence[str], env: Mapping[str, str], cwd: Path, timeout_ms: int) -> str:
    stdout, stderr = HeadTailBuffer(), HeadTailBuffer()
    process: Process | None = None
    # Shielded: cancelled halfway, the spawn would kill the shell alone and leave its children running.
    with anyio.CancelScope(shield=True):
        process = await _spawn(argv, env, cwd)
    assert process is not None
    timed_out = False
    try:
        async with anyio.create_task_group() as tasks:
            out_done, err_done = anyio.Event(), anyio.Event()
            assert process.stdout is not None
            assert process.stderr is not None
            tasks.start_soon(_collect, process.stdout, stdout, out_done)
            tasks.start_soon(_collect, process.stderr, stderr, err_done)
            with anyio.move_on_after(timeout_ms / 1000):
                await process.wait()
            timed_out = process.returncode is None
            _kill_group(process)
            with anyio.move_on_after(_PIPE_GRACE):
                await out_done.wait()
                await err_done.wait()
            tasks.cancel_scope.cancel()
    finally:
        _kill_group(process)
        with anyio.CancelScope(shield=True):
            await process.aclose()
    if timed_out or process.returncode is None:
        message = (
            f"the command was still running after {timeout_ms} ms, so it was stopped together with every "
            "process it started"
        )
        sections = _sections(stdout, stderr, suffix=" so far")
        raise TimeoutError(f"{message}\n{sections}" if sections else message)
    return _report(process.returncode, stdout, stderr)


async def _collect(stream: ByteReceiveStream, buffer: HeadTailBuffer, done: anyio.Event) -> None:
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    try:
        async for chunk in stream:
            buffer.write(decoder.decode(chunk))
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        buffer.write(decoder.decode(b"", final=True))
        done.set()


def _report(returncode: int, stdout: HeadTailBuffer, stderr: HeadTailBuffer) -> str:
    status = f"Exit code: {returncode}"
    if returncode < 0:
        with contextlib.suppress(ValueError):
            status += f" (killed by {signal.Signals(-returncode).name})"
    sections = _sections(stdout, stderr)
    return f"{status}\n{sections}" if sections else status


def _sections(stdout: HeadTailBuffer, stderr: HeadTailBuffer, *, suffix: str = "") -> str:
    parts: list[str] = []
    for label, buffer in (("Output", stdout), ("Stderr", stderr)):
        text = buffer.getvalue()
        if text.strip():
            parts.append(f"{label}{suffix}:\n{text.rstrip(chr(10))}")
    return "\n".join(parts)


_CREATION_FLAGS = subprocess.CREATE_NEW_PROCESS_GROUP if sys.platform == "win32" else 0

if sys.platform == "win32":

    def _shell(command: str) -> list[str]:
        return ["cmd.exe", "/c", command]

    def _kill_group(process: Process) -> None:
        if process.returncode is None:
            subprocess.run(
                ["taskkill", "/F", "/T", "/PID", str(process.pid)], capture_output=True, check=False
            )

else:

    def _shell(command: str) -> list[str]:
        return [shutil.which("bash") or "/bin/sh", "-c", command]

    def _kill_group(process: Process) -> None:
        # The group outlives its leader (the shell) while any member lives, and its id is not reused
        # meanwhile, so killing it after the shell was reaped still reaches only what the command started.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
