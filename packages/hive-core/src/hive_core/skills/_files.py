"""Reading a file that must lie inside a directory: the object opened is checked, not the name.

A name can be a symbolic link, or pass through one, that leads anywhere. So the file is opened first (without
blocking: a FIFO does not hang the read) and the kernel is asked where the object it holds really is; only a
regular file inside the directory is read. A link swapped in between a check and the open cannot lead out.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hive_core.builtin_tools._open import kernel_path

__all__ = ["ReadProblem", "TextRead", "is_inside", "read_text_inside"]

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class ReadProblem(Exception):
    """Why a file was not read, in words fit for the user or the model (``str()``)."""


@dataclass(frozen=True)
class TextRead:
    """A text file's content as read."""

    text: str
    """The text, a leading byte-order mark dropped and CRLF line endings made LF."""
    cut: bool
    """Whether the file held more than was read (only with ``cut_at``)."""


def is_inside(path: str | Path, directory: Path) -> bool:
    """Whether the absolute ``path`` is ``directory`` itself or below it (no resolving: both as given)."""
    inner, outer = os.fspath(path), os.fspath(directory)
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def read_text_inside(path: Path, directory: Path, *, limit: int, cut_at: bool = False) -> TextRead:
    """The UTF-8 text of the regular file at ``path``, which must lie in the resolved ``directory`` once every
    link is followed.

    At most ``limit`` bytes are read: a larger file raises :class:`ReadProblem`, or with ``cut_at`` gives its
    first ``limit`` bytes (an incomplete last character dropped) marked :attr:`TextRead.cut`. Raises
    :class:`ReadProblem` for a file that is missing, outside, not a regular file, unreadable or not UTF-8.
    """
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise ReadProblem("it does not exist") from None
    except OSError as exc:
        raise ReadProblem(f"it cannot be opened ({exc.strerror or exc})") from None
    try:
        try:
            real = kernel_path(fd, str(path))
        except PermissionError as exc:
            raise ReadProblem(str(exc)) from None
        if not is_inside(real, directory):
            raise ReadProblem("it leads out of its directory through a symbolic link")
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ReadProblem("it is a directory")
        if not stat.S_ISREG(mode):
            raise ReadProblem("it is not a regular file (a pipe, a device or a socket)")
        data = _read_up_to(fd, limit + 1)
    except OSError as exc:
        raise ReadProblem(f"it cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    cut = len(data) > limit
    if cut and not cut_at:
        raise ReadProblem(f"it is larger than {limit:,} bytes")
    try:
        # An incremental decoder keeps back a character the cut split in two instead of failing on it.
        text = codecs.getincrementaldecoder("utf-8")().decode(data[:limit], final=not cut)
    except UnicodeDecodeError as exc:
        raise ReadProblem(f"it is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return TextRead(text.removeprefix("\ufeff").replace("\r\n", "\n"), cut)


def _read_up_to(fd: int, count: int) -> bytes:
    chunks: list[bytes] = []
    left = count
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 16))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
