"""Runners: the transports that drive a processor (``user_message`` in, events out) for a client."""

from .inprocess import collect_turn, open_turn
from .session import Processor, Resume, SessionRunner
from .stdio import StdioRunner, run_stdio
from .turns import TurnRecorder

__all__ = [
    "Processor",
    "Resume",
    "SessionRunner",
    "StdioRunner",
    "TurnRecorder",
    "collect_turn",
    "open_turn",
    "run_stdio",
]
