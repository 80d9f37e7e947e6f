"""A text file's lines read from a descriptor in bounded memory, however long a line is.

The file is read in chunks and decoded incrementally; of each line at most :data:`LINE_LIMIT` characters are kept
and the rest only counted, so a file of one 2 GiB line costs a chunk and a cut line, not the line. Line endings
(LF, CRLF, lone CR) become LF, as Python's universal newlines do.
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["LINE_LIMIT", "Line", "cut_note", "read_bounded", "text_lines"]

LINE_LIMIT = 64 * 1024
"""The most characters of one line a tool keeps; the rest of a longer line is counted, not held."""

_CHUNK = 64 * 1024
_BREAK = re.compile(r"\r\n?|\n")


@dataclass(frozen=True)
class Line:
    """One line of a file, perhaps cut."""

    number: int
    """Its number, counting from 1."""
    text: str
    """Its text, at most the limit's characters, without its line break."""
    length: int
    """How many characters the whole line has, its line break not counted."""
    ended: bool
    """Whether a line break ended it (only the last line of a file may lack one)."""

    @property
    def cut(self) -> bool:
        """Whether :attr:`text` holds only the start of the line."""
        return len(self.text) < self.length


def text_lines(
    fd: int, encoding: str, *, limit: int = LINE_LIMIT, offset: int = 0, chunk_size: int = _CHUNK
) -> Iterator[Line]:
    """The lines of the file open on ``fd`` from byte ``offset`` on, decoded with ``encoding`` (bad bytes become
    U+FFFD), each cut to ``limit`` characters, reading ``chunk_size`` bytes at a time with ``pread`` (the descriptor's
    position is not used)."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    parts: list[str] = []
    kept = 0
    length = 0
    number = 0
    skip_lf = False
    at_end = False
    while not at_end:
        chunk = os.pread(fd, chunk_size, offset)
        offset += len(chunk)
        at_end = not chunk
        text = decoder.decode(chunk, final=at_end)
        start = 0
        if skip_lf and text:
            start = 1 if text[0] == "\n" else 0
            skip_lf = False
        while start < len(text):
            found = _BREAK.search(text, start)
            piece = text[start : len(text) if found is None else found.start()]
            length += len(piece)
            room = limit - kept
            if room > 0 and piece:
                parts.append(piece[:room])
                kept += min(room, len(piece))
            if found is None:
                break
            number += 1
            yield Line(number, "".join(parts), length, ended=True)
            parts, kept, length = [], 0, 0
            skip_lf = found.group() == "\r" and found.end() == len(text)
            start = found.end()
    if length:
        yield Line(number + 1, "".join(parts), length, ended=False)


def read_bounded(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from the start of the file open on ``fd`` (by ``pread``), in chunks: a file that grew
    after it was measured costs no more."""
    pieces: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.pread(fd, min(_CHUNK * 16, limit - size), size)
        if not chunk:
            break
        pieces.append(chunk)
        size += len(chunk)
    return b"".join(pieces)


def cut_note(line: Line, name: str) -> str:
    """What a reply says after a line it cut: how long the line is and how to get at the rest."""
    return (
        f"[line {line.number} of {name} is {line.length:,} characters long; only its first "
        f"{len(line.text):,} are shown. grep_files finds text anywhere in it, or a command such as "
        f"cut -c {LINE_LIMIT + 1}-{2 * LINE_LIMIT} shows a further part]"
    )
