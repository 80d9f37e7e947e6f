"""Running one turn for the terminal: Ctrl+C or SIGTERM cancels the turn, a second one leaves (130 or 143)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import anyio

from hive_core import SessionRunner
from hive_protocol import Event
from hive_protocol import UserMessageRequest

from .signals import STOP_SIGNALS
from .signals import exit_code_for
from .summary import TurnSummary

__all__ = ["ForcedExit", "drive_turn"]


class ForcedExit(Exception):
    """Leave at once with :attr:`code`: Ctrl+C pressed twice (130), or SIGTERM received (143)."""

    def __init__(self, code: int = 130, summary: TurnSummary | None = None) -> None:
        super().__init__(f"stopped (exit code {code})")
        self.code = code
        """The exit code to leave with."""
        self.summary = summary if summary is not None else TurnSummary()
        """What the turn had come to when it was stopped (machine outputs keep it)."""


async def drive_turn(
    runner: SessionRunner,
    request: UserMessageRequest,
    sink: Callable[[Event], None],
    *,
    timeout: float | None = None,
) -> TurnSummary:
    """Run one turn, passing every event to ``sink``; return what it came to.

    The first Ctrl+C cancels the turn (it still ends with its ``turn_end``); a second one raises
    :class:`ForcedExit`. SIGTERM cancels the turn the same way, then raises :class:`ForcedExit` (143): hive was
    asked to end, not only the turn.
    """
    summary = TurnSummary()
    interrupts = 0
    terminated = False

    def emit(event: Event) -> None:
        summary.add(event)
        sink(event)

    async def watch_interrupts() -> None:
        nonlocal interrupts, terminated
        with anyio.open_signal_receiver(*STOP_SIGNALS) as signals:
            async for signum in signals:
                interrupts += 1
                terminated = terminated or signum == signal.SIGTERM
                if interrupts > 1 or not runner.cancel():
                    group.cancel_scope.cancel()
                    return

    async with anyio.create_task_group() as group:
        if threading.current_thread() is threading.main_thread():
            group.start_soon(watch_interrupts)
        await runner.run_turn(request, emit, timeout=timeout)
        group.cancel_scope.cancel()
    if terminated:
        raise ForcedExit(exit_code_for(signal.SIGTERM), summary)
    if interrupts > 1 or (interrupts and summary.end is None):
        raise ForcedExit(exit_code_for(signal.SIGINT), summary)
    return summary
