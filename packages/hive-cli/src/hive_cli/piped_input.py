"""Text piped into ``hive -p``: ``git diff | hive -p "review this"`` sends the diff and the prompt.

Only a pipe or a file on stdin is read, never a terminal. A pipe that stays open with nothing in it (a script's
``subprocess.Popen(stdin=PIPE)``, a CI step) must not hang the run: when no byte arrives within
:data:`FIRST_BYTE_WAIT` seconds hive goes on without it and says so, as ``claude -p`` does; once text starts
arriving it is read to its end.
"""

from __future__ import annotations

import os
import stat
import sys
from typing import IO
from typing import Final

from hive_core.errors import UserError

__all__ = ["FIRST_BYTE_WAIT", "MAX_PIPED_BYTES", "PipedInputTooLarge", "combine", "read_piped"]

FIRST_BYTE_WAIT: Final = 3.0
"""Seconds to wait for the first byte of a pipe before going on without it."""

MAX_PIPED_BYTES: Final = 16 * 1024 * 1024
"""The most hive reads from stdin (one request line's worth); more is an error, not a silent cut."""


class PipedInputTooLarge(UserError, ValueError):
    """More than :data:`MAX_PIPED_BYTES` came through stdin: the user pipes less (or names a file with ``@``)."""


def read_piped(stream: IO[bytes] | None = None, *, wait: float = FIRST_BYTE_WAIT) -> str | None:
    """The text piped into ``stream`` (stdin), or ``None`` for a terminal, nothing piped, or a silent pipe.

    Raises :class:`PipedInputTooLarge` past :data:`MAX_PIPED_BYTES`.
    """
    source: IO[bytes] = sys.stdin.buffer if stream is None else stream
    try:
        fd = source.fileno()
        mode = os.fstat(fd).st_mode
    except (OSError, ValueError):
        return None
    if os.isatty(fd) or not (stat.S_ISFIFO(mode) or stat.S_ISREG(mode) or stat.S_ISSOCK(mode)):
        return None
    if not stat.S_ISREG(mode) and not _readable_within(fd, wait):
        sys.stderr.write(
            f"hive: nothing arrived on stdin within {wait:g} s; going on without it "
            "(pipe the text in, or give stdin </dev/null)\n"
        )
        return None
    data = source.read(MAX_PIPED_BYTES + 1)
    if len(data) > MAX_PIPED_BYTES:
        raise PipedInputTooLarge(f"more than {MAX_PIPED_BYTES // (1024 * 1024)} MiB arrived on stdin")
    text = data.decode("utf-8", errors="replace").strip()
    return text or None


def combine(piped: str | None, prompt: str) -> str:
    """One message of the piped text and the prompt: the text first, the instruction after it."""
    return prompt if piped is None else f"{piped}\n\n{prompt}"


def _readable_within(fd: int, wait: float) -> bool:
    if os.name != "posix":
        return True  # no select() on Windows pipes: read, as `llm` does
    import select

    readable, _, _ = select.select([fd], [], [], wait)
    return bool(readable)
