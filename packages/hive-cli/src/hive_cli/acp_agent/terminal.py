"""``execute_command`` through the client's ``terminal/*``, so the editor shows the command's run live.

A command the client runs is outside hive's sandbox, so the client's terminal serves ``execute_command`` only
where hive's sandbox would not confine the command anyway (``sandbox.mode: off``, or ``auto`` on a machine where
no sandbox runs); it is judged again at each call, and a command the sandbox would confine runs in hive's own tool
as before. The approval gate judges each call as it judges hive's own, before the tool runs.

The command is started as hive starts it (``bash -c``, in the call's working directory, with the environment
hive's allow-list passes); the tool call's update carries the terminal, its result reads as hive's own tool's
("Exit code: N", then the output). A timeout or a cancelled turn kills the command; the terminal is always
released.
"""

from __future__ import annotations

import math
import os
import shutil
import signal

import anyio
from acp import Client
from acp.schema import CreateTerminalResponse
from acp.schema import EnvVariable
from acp.schema import TerminalToolCallContent
from acp.schema import ToolCallProgress
from acp.schema import WaitForTerminalExitResponse

from hive_core.builtin_tools import execute_command as builtin_command
from hive_core.sandbox import SandboxSettings
from hive_core.sandbox import command_environment
from hive_core.sandbox import sandbox_status
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tools import Tool
from hive_core.tools import ToolContext

__all__ = ["client_command_tool", "unconfined"]

_OUTPUT_LIMIT = 100_000
"""Bytes of output the client keeps (its last ones): what hive's own tool keeps of stdout and stderr together."""


def unconfined(settings: SandboxSettings) -> bool:
    """Whether hive would run a command with ``settings`` unconfined (and not refuse it): only then may the
    client's terminal run it."""
    status = sandbox_status(settings)
    return status.confinement is None and not status.refuses


def client_command_tool(client: Client, session_id: str, settings: SandboxSettings, fallback: Tool) -> Tool:
    """``execute_command`` run in the client's terminal while ``settings`` leave commands unconfined, else by
    ``fallback`` (hive's own tool)."""

    async def execute_command(ctx: ToolContext, command: str, timeout_ms: int = 30_000) -> str:
        if not unconfined(settings):
            return await fallback.function(ctx, command, timeout_ms)
        if not command.strip():
            raise ValueError("the command is empty")
        if timeout_ms < 1:
            raise ValueError(f"timeout_ms is {timeout_ms}; give a positive number of milliseconds")
        environment = command_environment(
            os.environ, passed=settings.passed_variables, withheld=settings.withheld_variables
        )
        created: CreateTerminalResponse | None = None
        # Shielded: cancelled while the answer is on its way, the command would run on with no one to kill it.
        with anyio.CancelScope(shield=True):
            created = await client.create_terminal(
                session_id=session_id,
                command=shutil.which("bash") or "/bin/sh",
                args=["-c", command],
                cwd=str(ctx.working_dir),
                env=[EnvVariable(name=name, value=value) for name, value in environment.items()],
                output_byte_limit=_OUTPUT_LIMIT,
            )
        if created is None:  # a shielded scope is not cancelled; the type checker cannot know
            raise RuntimeError("the editor's terminal was not created")
        terminal = created.terminal_id
        exited = timed_out = False
        ended: WaitForTerminalExitResponse | None = None
        try:
            await client.session_update(
                session_id,
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=ctx.call_id,
                    content=[TerminalToolCallContent(type="terminal", terminal_id=terminal)],
                ),
            )
            with anyio.move_on_after(timeout_ms / 1000) as waited:
                ended = await client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal)
            timed_out = waited.cancelled_caught
            if timed_out:
                await client.kill_terminal(session_id=session_id, terminal_id=terminal)
            exited = True
            shown = await client.terminal_output(session_id=session_id, terminal_id=terminal)
        finally:
            with anyio.CancelScope(shield=True):
                if not exited:  # cancelled: the command dies with the turn
                    await client.kill_terminal(session_id=session_id, terminal_id=terminal)
                await client.release_terminal(session_id=session_id, terminal_id=terminal)
        output = shown.output.rstrip("\n")
        if shown.truncated:
            output = (
                f"[the start of the output was left out; its last {_OUTPUT_LIMIT:,} bytes follow]\n{output}"
            )
        if timed_out:
            message = (
                f"the command was still running after {timeout_ms} ms, so it was stopped together with every "
                "process it started"
            )
            raise TimeoutError(f"{message}\nOutput so far:\n{output}" if output.strip() else message)
        exit_status = shown.exit_status or ended
        if exit_status is None:
            raise RuntimeError("the editor's terminal reported no exit status for the command")
        status = _status(exit_status.exit_code, exit_status.signal)
        return f"{status}\nOutput:\n{output}" if output.strip() else status

    execute_command.__doc__ = builtin_command.function.__doc__
    # As hive's own: the command enforces its timeout_ms itself.
    return Tool(execute_command, name=EXECUTE_COMMAND, timeout=math.inf)


def _status(code: int | None, killed_by: str | None) -> str:
    """The result's first line, as hive's own tool writes it."""
    if code is not None:
        return f"Exit code: {code}"
    number = getattr(signal, killed_by or "", None)
    if isinstance(number, signal.Signals):
        return f"Exit code: {-number.value} (killed by {number.name})"
    return f"Exit code: -1 (killed by {killed_by})"
