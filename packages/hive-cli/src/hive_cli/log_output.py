"""What libraries log, written as hive's own one-line messages on stderr.

The ``hive`` command owns the process's logging. Without this, a library calling :func:`logging.exception` on the
root logger (the ACP library does, when a write to a CLI that already exited fails) would configure logging itself
and print ``ERROR:root:…`` with a traceback in the middle of the conversation. Records of ``WARNING`` and above
become ``hive: <logger>: <message>``; under ``--debug`` every record is shown, tracebacks included.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["configure_logging"]


class _Stderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when the record comes (a test's capture, a redirected stream)."""

    def emit(self, record: logging.LogRecord) -> None:  # pyright: ignore[reportImplicitOverride]
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # logging must never break the command
            self.handleError(record)


class _OneLine(logging.Formatter):
    def __init__(self, *, debug: bool) -> None:
        super().__init__()
        self.debug = debug

    def format(self, record: logging.LogRecord) -> str:  # pyright: ignore[reportImplicitOverride]
        line = f"hive: {record.name}: {record.getMessage()}"
        if self.debug and record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure_logging(*, debug: bool) -> None:
    """Send log records to stderr as one line each: ``WARNING`` and above, or everything with ``debug``."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _Stderr)]:
        root.removeHandler(handler)
    handler = _Stderr()
    handler.setFormatter(_OneLine(debug=debug))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
