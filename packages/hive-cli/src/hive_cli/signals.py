"""What ``hive`` does when it is asked to stop: SIGINT (Ctrl+C) and SIGTERM.

The first one cancels the running turn, which still ends with its ``turn_end`` (and takes the processes it
started with it), and hive leaves with ``128 + signal``: 130 for SIGINT, 143 for SIGTERM. A second one leaves at
once (:func:`leave_now`). Whatever hive leaves behind, its child watchdog kills (``hive_core.child_processes``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncGenerator
from collections.abc import Callable
from contextlib import asynccontextmanager
from typing import Final
from typing import NoReturn

import anyio
import anyio.abc

__all__ = ["STOP_SIGNALS", "StopSignals", "exit_code_for", "leave_now", "stop_signals"]

STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a turn and then hive."""


def exit_code_for(signum: int) -> int:
    """The exit code after the stop signal ``signum``: the shell's ``128 + n``."""
    return 128 + signum


def leave_now(code: int) -> NoReturn:
    """Exit at once with ``code``: what was written is flushed (traces too, for a second at most, when tracing is
    on), every child hive started is killed, and nothing else waits (not a worker thread blocked reading stdin,
    nor an MCP server taking its time to stop)."""
    from hive_core.child_processes import child_supervisor

    from .telemetry import flush_tracing

    flush_tracing(timeout_ms=1000)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    child_supervisor().kill_all()
    os._exit(code)


class StopSignals:
    """The stop signals received while a :func:`stop_signals` block runs."""

    def __init__(self) -> None:
        self.signum: int | None = None
        """The first stop signal received; ``None`` while there was none."""
        self.on_stop: Callable[[], object] | None = None
        """Called on the first signal (say, ``SessionRunner.stop``); while unset, the signal cancels the block."""
        self._block: anyio.CancelScope | None = None

    @property
    def code(self) -> int:
        """The exit code the signal asks for (:func:`exit_code_for`); 0 while there was none."""
        return 0 if self.signum is None else exit_code_for(self.signum)

    async def _watch(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                if self.signum is not None:
                    leave_now(self.code)
                self.signum = signum
                if self.on_stop is not None:
                    self.on_stop()
                elif self._block is not None:
                    self._block.cancel()


@asynccontextmanager
async def stop_signals() -> AsyncGenerator[StopSignals]:
    """Watch SIGINT and SIGTERM for as long as the block runs, shutting down included.

    The first signal calls :attr:`StopSignals.on_stop`, or cancels the block while that is unset (hive was still
    starting); a second one leaves at once (:func:`leave_now`). Read :attr:`StopSignals.code` after the block.
    """
    stop = StopSignals()
    try:
        async with anyio.create_task_group() as group:
            await group.start(stop._watch)  # pyright: ignore[reportPrivateUsage]
            with anyio.CancelScope() as stop._block:  # pyright: ignore[reportPrivateUsage]
                yield stop
            group.cancel_scope.cancel()
    except BaseExceptionGroup as failed:
        # The watcher never fails: what failed is the block, and its caller expects its own exception.
        if len(failed.exceptions) == 1:
            raise failed.exceptions[0] from None
        raise
