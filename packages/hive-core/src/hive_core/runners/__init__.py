"""Runners: the transports that drive a processor (``user_message`` in, events out) for a client: stdio, HTTP,
in process."""

from .http import HttpRunner, HttpRunnerError, run_http
from .inprocess import collect_turn, open_turn
from .session import Processor, Resume, SessionRunner
from .stdio import StdioRunner, run_stdio
from .turns import TurnRecorder

__all__ = [
    "HttpRunner",
    "HttpRunnerError",
    "Processor",
    "Resume",
    "SessionRunner",
    "StdioRunner",
    "TurnRecorder",
    "collect_turn",
    "open_turn",
    "run_http",
    "run_stdio",
]
