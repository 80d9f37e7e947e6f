"""The command tool: run a shell command in the working directory and report what it printed.

The command runs in a session and process group of its own. When it returns, times out or is cancelled, the
whole group is killed, so nothing it started in the background outlives the call. (A process that moves itself
into another session, as daemons do, escapes the group; inside the sandbox nothing escapes, since the sandbox's
pid namespace ends with it.)

Where the machine offers one, the command runs in the OS sandbox the ``sandbox`` settings describe, and it
inherits only an allow-list of environment variables (:mod:`hive_core.sandbox`). When the agent has a policy,
the project's files and folders its read rules deny are unreadable to a sandboxed command, and those they ask
about too unless a person approved this very command (:func:`hive_core.sandbox.refused_paths`): the command runs
code (a test the model wrote, run by an allowed ``pytest``) that could otherwise print them into the model's
context. The result then ends with a line saying so, naming what was asked about.
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
from collections.abc import Mapping
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream
from anyio.abc import Process

from hive_core.approvals import PathJudge
from hive_core.approvals import PermissionAction
from hive_core.permissions import PermissionPolicy
from hive_core.sandbox import ReadJudge
from hive_core.sandbox import RefusedFinder
from hive_core.sandbox import RefusedPaths
from hive_core.sandbox import RefusedScanTooLarge
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import launch_command
from hive_core.sandbox import refused
from hive_core.sandbox import sandbox_status
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tools import Tool
from hive_core.tools import ToolContext

from ._capture import HeadTailBuffer

__all__ = ["execute_command", "execute_command_tool"]

_PIPE_GRACE = 2.0
"""Seconds to wait for the pipes to close after the process group is killed."""

_NAMED = 5
"""How many hidden paths the result names."""


def execute_command_tool(sandbox: SandboxSettings | None = None) -> Tool:
    """The ``execute_command`` tool, confining commands as ``sandbox`` says (by default: ``auto`` mode)."""
    settings = sandbox if sandbox is not None else SandboxSettings()
    finder = RefusedFinder()

    async def execute_command(ctx: ToolContext, command: str, timeout_ms: int = 30_000) -> str:
        """Run a shell command in the working directory and return its exit code and output.

        The command runs with bash -c (cmd.exe /c on Windows), reads no input, and is stopped, with every
        process it started, when timeout_ms runs out; anything it leaves running in the background is stopped
        when it returns. Where a sandbox is available it can write only inside the project and /tmp, cannot read
        the files the read rules refuse, and has no network unless the configuration allows it. The result reads
        "Exit code: N", then "Output:" and "Stderr:" sections for whatever it printed. Each stream keeps at most
        50,000 characters: the first 20,000 and the last 30,000, with a note of what was left out.

        Args:
            command: The command line to run.
            timeout_ms: How long the command may run, in milliseconds, before it is stopped and the call fails.
        """
        if not command.strip():
            raise ValueError("the command is empty")
        if timeout_ms < 1:
            raise ValueError(f"timeout_ms is {timeout_ms}; give a positive number of milliseconds")
        # A first walk of a large project takes seconds; a cancelled turn does not wait for it.
        hidden, unreadable = await anyio.to_thread.run_sync(
            partial(_hidden, ctx, settings, finder), abandon_on_cancel=True
        )
        # Not abandoned on cancel: the launch claims placeholders in the project, which its release removes.
        launch = await anyio.to_thread.run_sync(
            partial(
                launch_command,
                _shell(command),
                working_dir=ctx.working_dir,
                settings=settings,
                unreadable_paths=unreadable,
            )
        )
        # Outside the sandbox (whose pid namespace ends with it), a subreaper keeps the command's daemons in reach.
        confined = launch.argv != _shell(command)
        try:
            result = await _run(
                launch.argv, launch.env, ctx.working_dir, timeout_ms, reap_orphans=not confined
            )
        finally:
            # The command has ended (its group killed, the sandbox gone): the empty mount points go too.
            launch.release()
        note = _hidden_note(hidden, approved=ctx.approved)
        return f"{result}\n{note}" if note else result

    # The command enforces its own timeout_ms (and reports the partial output), so the agent-wide per-call
    # timeout must not cut it short first.
    return Tool(execute_command, name=EXECUTE_COMMAND, timeout=math.inf)


execute_command = execute_command_tool()
"""The command tool with the default sandbox settings (``auto``: sandboxed where the machine allows)."""


def _hidden(
    ctx: ToolContext, settings: SandboxSettings, finder: RefusedFinder
) -> tuple[RefusedPaths, list[Path]]:
    """What the read rules refuse that the sandbox hides from the command, and the paths to hide.

    Nothing is looked for when the command will not be confined (nothing could be hidden, and the result must not
    say otherwise) or the agent has no policy (no rules refuse anything)."""
    hidden = RefusedPaths()
    root = Path(os.path.realpath(ctx.working_dir))
    if ctx.path_judge is not None and sandbox_status(settings).confinement is not None:
        policy = ctx.path_judge if isinstance(ctx.path_judge, PermissionPolicy) else None
        # The whole project the rules speak of, when the command runs in a folder of it: the sandbox shows the
        # rest of the project read-only.
        if policy is not None and root.is_relative_to(policy.working_dir):
            root = policy.working_dir
        try:
            # A policy's rules never change, so its verdicts can be remembered; another judge's might not.
            hidden = finder.find(root, _read_judge(ctx.path_judge, root), rules=policy)
        except RefusedScanTooLarge as error:
            raise RefusedScanTooLarge(
                f"{error}, so the command was not run (the sandbox could not hide what the rules refuse); "
                "run it outside hive, or start hive in a smaller folder"
            ) from None
    unreadable = hidden.hidden(approved=ctx.approved)
    if len(unreadable) > refused.HIDDEN_LIMIT:
        raise RefusedScanTooLarge(
            f"the read rules refuse {len(unreadable):,} files and folders scattered through the project, more "
            f"than a command can be run with hidden ({refused.HIDDEN_LIMIT:,}), so the command was not run; a "
            "rule denying or asking about their folders as a whole ('logs/**') hides each with one mount"
        )
    return hidden, [root / path for path in unreadable]


def _read_judge(judge: PathJudge, root: Path) -> ReadJudge:
    """How the walk of ``root`` (resolved) asks the read rules about a path relative to it: the policy's own
    verdict for it.

    A :class:`PermissionPolicy` whose project is ``root`` judges the relative path directly (placing each of
    100,000 files again, resolving links component by component, would cost seconds); any other judge gets the
    absolute path."""
    if isinstance(judge, PermissionPolicy) and judge.working_dir == root:
        policy = judge

        def by_rules(relative: str, directory: bool) -> PermissionAction:
            return policy.judge_relative("read", relative, directory=directory).action

        return by_rules

    def by_path(relative: str, directory: bool) -> PermissionAction:
        return judge.judge_path("read", os.path.join(root, relative)).action

    return by_path


def _hidden_note(hidden: RefusedPaths, *, approved: bool) -> str:
    """One line telling the model what it could not read and why; empty when nothing was hidden."""
    asked = () if approved else hidden.asked
    if not hidden.denied and not asked:
        return ""
    parts: list[str] = []
    if asked:
        named = ", ".join(asked[:_NAMED]) + (
            f" and {len(asked) - _NAMED} more" if len(asked) > _NAMED else ""
        )
        parts.append(f"{named} (the read rules ask about them: read_file asks the user)")
    if hidden.denied:
        count = len(hidden.denied)
        parts.append(f"{count} path{'s' if count > 1 else ''} the read rules deny")
    return f"Hidden from the command (unreadable, 'Permission denied'): {'; '.join(parts)}."


async def _spawn(argv: Sequence[str], env: Mapping[str, str], cwd: Path, *, reap_orphans: bool) -> Process:
    """Start a command in a session and process group of its own, reading no input (the one place commands
    are started); it and all it starts die with hive, however hive ends."""
    from hive_core.child_processes import open_child

    return await open_child(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, reap_orphans=reap_orphans)


async def _run(
    argv: Sequence[str], env: Mapping[str, str], cwd: Path, timeout_ms: int, *, reap_orphans: bool = False
) -> str:
    stdout, stderr = HeadTailBuffer(), HeadTailBuffer()
    process: Process | None = None
    # Shielded: cancelled halfway, the spawn would kill the shell alone and leave its children running.
    with anyio.CancelScope(shield=True):
        process = await _spawn(argv, env, cwd, reap_orphans=reap_orphans)
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
        from hive_core.child_processes import SupervisedProcess

        if isinstance(process, SupervisedProcess) and process.returncode is None:
            process.kill_tree()  # the group, and what left it but stayed below the subreaper
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
