"""Running one turn for the terminal: Ctrl+C cancels the turn, a second Ctrl+C leaves with 130."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import anyio

from hive_core import SessionRunner
from hive_protocol import Event, UserMessageRequest

from .summary import TurnSummary

__all__ = ["ForcedExit", "drive_turn"]


class ForcedExit(Exception):
    """The person pressed Ctrl+C twice: leave at once with exit code 130."""


async def drive_turn(
    runner: SessionRunner,
    request: UserMessageRequest,
    sink: Callable[[Event], None],
    *,
    timeout: float | None = None,
) -> TurnSummary:
    """Run one turn, passing every event to ``sink``; return what it came to.

    The first Ctrl+C cancels the turn (it still ends with its ``turn_end``); a second one raises
    :class:`ForcedExit`.
    """
    summary = TurnSummary()
    interrupts = 0

    def emit(event: Event) -> None:
        summary.add(event)
        sink(event)

    async def watch_interrupts() -> None:
        nonlocal interrupts
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupts += 1
                if interrupts > 1 or not runner.cancel():
                    group.cancel_scope.cancel()
                    return

    async with anyio.create_task_group() as group:
        if threading.current_thread() is threading.main_thread():
            group.start_soon(watch_interrupts)
        await runner.run_turn(request, emit, timeout=timeout)
        group.cancel_scope.cancel()
    if interrupts > 1 or (interrupts and summary.end is None):
        raise ForcedExit
    return summary
