"""One ``codex exec --json`` process: the fallback turn where the app-server is unavailable.

:func:`exec_arguments` builds the command line: ``codex exec [resume|fork] --json --skip-git-repo-check [-m M]
<sandbox> [extra] -- [<thread id>] <prompt>``, with stdin at ``/dev/null`` (exec would otherwise read more input
from it). exec has no interactive approvals, so hive fails closed: the sandbox is ``read-only`` unless the mode
asks for another (:data:`EXEC_SANDBOXES`), and ``--dangerously-bypass-approvals-and-sandbox`` is passed only for
the bypass mode (:data:`BYPASS_MODE`). The sandbox goes as ``-c sandbox_mode=...``: ``exec resume`` and ``exec
fork`` have no ``--sandbox`` option.

:func:`run_exec_turn` runs it (its own process group, through :func:`~hive_core.child_processes.open_child`),
feeds each stdout line to an :class:`~.exec_events.ExecTurn`, and leaves no process behind: cancelled, the
group gets SIGINT (Codex interrupts its turn and exits), then SIGKILL after the grace.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Final

import anyio

from hive_core.failures import ChatError
from hive_providers.backends.kit.cli_process import CliProcess

from .exec_events import ExecTurn
from .exec_wire import decode_exec_event

__all__ = [
    "APPROVAL_WARNING",
    "ASKING_MODES",
    "BYPASS_MODE",
    "EXEC_SANDBOXES",
    "exec_arguments",
    "exec_sandbox",
    "run_exec_turn",
]

BYPASS_MODE: Final = "yolo"
"""The mode that runs without sandbox or approvals (``--dangerously-bypass-approvals-and-sandbox``): only when
the user asks for it."""
EXEC_SANDBOXES: Final[Mapping[str, str]] = {
    "read-only": "read-only",
    "workspace-write": "workspace-write",
    "danger-full-access": "danger-full-access",
    "never": "workspace-write",
}
"""Modes that name exec's sandbox (``never``, the app-server's "never ask", writes inside the project)."""
ASKING_MODES: Final = ("untrusted", "on-failure", "on-request")
"""The app-server's approval policies that ask: exec cannot, so they (and no mode) run ``read-only``."""
APPROVAL_WARNING: Final = (
    "codex exec cannot ask for approvals: the turn runs in Codex's read-only sandbox (commands that write "
    "fail); choose --agent-mode workspace-write or yolo to let it act without asking"
)
"""The one warning of a fallback turn whose mode would have asked."""

_EXIT_WAIT: Final = 5.0


def exec_sandbox(mode: str | None) -> str | None:
    """The sandbox of a turn in ``mode``: ``read-only`` unless the mode names another; ``None`` for the bypass
    mode (no sandbox at all)."""
    if mode == BYPASS_MODE:
        return None
    return EXEC_SANDBOXES.get(mode or "", "read-only")


def exec_arguments(
    *,
    prompt: str,
    thread_id: str | None = None,
    fork: bool = False,
    model: str | None = None,
    mode: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """The arguments after the program: a new thread, ``resume`` of ``thread_id``, or (``fork``) a copy of it."""
    arguments = ["exec"]
    if thread_id is not None:
        arguments.append("fork" if fork else "resume")
    arguments += ["--json", "--skip-git-repo-check"]
    if model:
        arguments += ["-m", model]
    sandbox = exec_sandbox(mode)
    if sandbox is None:
        arguments.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        arguments += ["-c", f'sandbox_mode="{sandbox}"']
    arguments += [*extra, "--"]
    if thread_id is not None:
        arguments.append(thread_id)
    arguments.append(prompt)
    return arguments


async def run_exec_turn(
    command: Sequence[str],
    turn: ExecTurn,
    *,
    cwd: str | os.PathLike[str],
    env: Mapping[str, str],
    grace: float,
    name: str = "codex",
    started: list[int] | None = None,
) -> None:
    """Run ``command`` to its end, feeding its events to ``turn``; the pid goes to ``started`` when given.

    Raises :class:`~hive_core.failures.ChatError` when it exits before the turn ended (quoting its stderr and
    the lines that were not JSON); a ``turn.failed`` is left to :meth:`ExecTurn.finish`.
    """
    cli = await CliProcess.start(name, command, cwd=cwd, env=env, stdin=subprocess.DEVNULL)
    if started is not None:
        started.append(cli.process.pid)
    cancelled = False
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(cli.transport.drain_stderr)
            while (event := await cli.transport.receive()) is not None:
                turn.on_event(decode_exec_event(event))
            with anyio.move_on_after(_EXIT_WAIT):
                await cli.process.wait()
                await cli.transport.stderr_closed.wait()
            group.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        cancelled = True  # Codex interrupts its turn and exits on SIGINT
        raise
    finally:
        await cli.stop(grace, interrupt=cancelled)
    if not turn.ended:
        what = (
            f"{name} exec ended without finishing the turn"
            if cli.process.returncode is None
            else cli.describe_exit("before the turn ended", who=f"{name} exec")
        )
        said = [f"Codex said: {turn.failure}"] if turn.failure else []
        raise ChatError(cli.describe(what, *said), code="internal")
