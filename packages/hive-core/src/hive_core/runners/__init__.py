"""Runners: the transports that drive a processor (``user_message`` in, events out) for a client: stdio, HTTP,
in process."""

from .feed import Feed
from .http import HttpRunner
from .http import HttpRunnerError
from .http import run_http
from .inprocess import collect_turn
from .inprocess import open_turn
from .session import ExtendedSink
from .session import Processor
from .session import RequestHandler
from .session import Resume
from .session import SessionRunner
from .stdio import StdioRunner
from .stdio import run_stdio
from .turns import TurnRecorder

__all__ = [
    "ExtendedSink",
    "Feed",
    "HttpRunner",
    "HttpRunnerError",
    "Processor",
    "RequestHandler",
    "Resume",
    "SessionRunner",
    "StdioRunner",
    "TurnRecorder",
    "collect_turn",
    "open_turn",
    "run_http",
    "run_stdio",
]
