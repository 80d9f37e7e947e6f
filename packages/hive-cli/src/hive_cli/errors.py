"""Which failures a command reports as a plain message, and how the rest are reported as bugs.

A :class:`~hive_core.errors.UserError` (a bad file, an unknown name, a missing setting) prints as
``hive: <message>`` and exits 1. Anything else that escapes a command is a bug in hive: one line naming it, a
line asking for a report, and exit code :data:`INTERNAL_ERROR_EXIT`; ``hive --debug`` (or ``HIVE_DEBUG=1``)
prints its traceback too.
"""

from __future__ import annotations

import traceback
from typing import Final
from typing import TextIO
from typing import cast

from hive_core.errors import UserError

__all__ = ["INTERNAL_ERROR_EXIT", "USER_ERRORS", "report_failure"]

USER_ERRORS: Final[tuple[type[UserError], ...]] = (UserError,)
"""Errors whose message tells the user what to fix."""

INTERNAL_ERROR_EXIT: Final = 70
"""The exit code of a bug (``EX_SOFTWARE`` of ``sysexits.h``)."""


def report_failure(error: Exception, stream: TextIO, *, debug: bool = False) -> int:
    """Report an exception that escaped a command on ``stream``; return the exit code.

    A user error (alone, or alone in the exception groups a task group wraps it in) is its message, exit 1.
    Anything else is a bug: its type and message, how to get the traceback, exit :data:`INTERNAL_ERROR_EXIT`;
    with ``debug`` the traceback itself.
    """
    cause = _alone(error)
    if isinstance(cause, USER_ERRORS):
        stream.write(f"hive: {cause}\n")
        return 1
    if debug:
        stream.write("".join(traceback.format_exception(error)))
    message = " ".join(str(cause).split())
    stream.write(f"hive: internal error: {type(cause).__name__}{f': {message}' if message else ''}\n")
    if debug:
        stream.write("hive: this is a bug in hive; please report it with the traceback above\n")
    else:
        stream.write(
            "hive: this is a bug in hive; run it again with --debug for the traceback, and report it\n"
        )
    return INTERNAL_ERROR_EXIT


def _alone(error: BaseException) -> BaseException:
    """The exception inside groups of one (a task group wraps what fails in it), else ``error``."""
    while isinstance(error, BaseExceptionGroup):
        group = cast("BaseExceptionGroup[BaseException]", error)
        if len(group.exceptions) != 1:
            return group
        error = group.exceptions[0]
    return error
