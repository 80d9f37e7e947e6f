"""Text files as the file tools see them: encoding by byte-order mark, binary detection, line endings.

A file is UTF-8 unless it starts with a UTF-16 byte-order mark. A file is binary when its first 8 KiB hold a
NUL byte (a UTF-16 file is exempt: its NULs are half of its ASCII characters). Writing back uses the encoding
and the byte-order mark the file had, so an edit changes only the text it replaces.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

__all__ = [
    "BINARY_PROBE",
    "FORMAT_PROBE",
    "NEW_FILE",
    "READ_LIMIT",
    "TextFormat",
    "binary_message",
    "decode",
    "encode",
    "format_of",
    "looks_binary",
    "newline_of",
    "normalize_newlines",
    "sniff",
    "stream_encoding",
]

READ_LIMIT = 1024 * 1024
"""The most bytes a tool reads or edits as a whole file."""

BINARY_PROBE = 8192
"""How many leading bytes are checked for NUL."""

FORMAT_PROBE = 64 * 1024
"""How many leading bytes :func:`format_of` needs."""

_MARKS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


@dataclass(frozen=True)
class TextFormat:
    """How a text file is stored."""

    encoding: str
    """The Python codec of its body: ``utf-8``, ``utf-16-le`` or ``utf-16-be``."""
    bom: bytes = b""
    """The byte-order mark it starts with (empty for none)."""
    newline: str | None = None
    """``"\\r\\n"`` when any line ends so, ``"\\n"`` when all end with LF, ``None`` with no line break."""

    def describe(self) -> str:
        """The format in words, for a tool's report: ``UTF-8 with a byte-order mark, CRLF line endings``."""
        name = {"utf-8": "UTF-8", "utf-16-le": "UTF-16 LE", "utf-16-be": "UTF-16 BE"}[self.encoding]
        parts = [f"{name} with a byte-order mark" if self.bom else name]
        if self.newline == "\r\n":
            parts.append("CRLF line endings")
        return ", ".join(parts)


NEW_FILE = TextFormat("utf-8")
"""The format of a file the tools create: UTF-8 without a mark, line endings as written."""


def sniff(head: bytes) -> tuple[str, bytes]:
    """The codec and byte-order mark a file's first bytes announce (UTF-8 without a mark if none)."""
    for mark, encoding in _MARKS:
        if head.startswith(mark):
            return encoding, mark
    return "utf-8", b""


def looks_binary(head: bytes) -> bool:
    """Whether a file starting with ``head`` is binary: a NUL byte early on, outside a UTF-16 file."""
    encoding, _ = sniff(head)
    return not encoding.startswith("utf-16") and b"\0" in head[:BINARY_PROBE]


def newline_of(text: str) -> str | None:
    """The line ending a text uses: CRLF as soon as one line ends so, else LF, else ``None``."""
    if "\r\n" in text:
        return "\r\n"
    return "\n" if "\n" in text else None


def normalize_newlines(text: str) -> str:
    """``text`` with CRLF and lone CR line endings turned into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes, *, name: str, strict: bool) -> tuple[str, TextFormat]:
    """The text of a file's bytes and how it is stored.

    Raises ``ValueError`` for binary data, and for bytes that do not decode when ``strict`` (otherwise they
    become U+FFFD).
    """
    if looks_binary(data[:BINARY_PROBE]):
        raise ValueError(binary_message(name))
    encoding, bom = sniff(data)
    body = data[len(bom) :]
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        if strict:
            label = TextFormat(encoding).describe()
            raise ValueError(
                f"{name} is not valid {label} (bad byte at offset {exc.start + len(bom)}); "
                "it cannot be edited without damaging it"
            ) from None
        text = body.decode(encoding, errors="replace")
    return text, TextFormat(encoding, bom, newline_of(text))


def encode(text: str, fmt: TextFormat, *, with_bom: bool = True) -> bytes:
    """``text`` in ``fmt``'s encoding, led by its byte-order mark unless ``with_bom`` is false (appends)."""
    try:
        body = text.encode(fmt.encoding)
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"the text holds a character that cannot be stored ({exc.object[exc.start : exc.end]!r} at "
            f"position {exc.start}); lone surrogates are not text"
        ) from None
    return (fmt.bom if with_bom else b"") + body


def format_of(head: bytes) -> TextFormat | None:
    """How an existing file is stored, judged from ``head``, its first :data:`FORMAT_PROBE` bytes; ``None`` for a
    binary file."""
    if looks_binary(head):
        return None
    encoding, bom = sniff(head)
    body = head[len(bom) :]
    if encoding.startswith("utf-16") and len(body) % 2:
        body = body[:-1]
    text = body.decode(encoding, errors="replace")
    return TextFormat(encoding, bom, newline_of(text))


def stream_encoding(head: bytes) -> str:
    """The codec that reads a file starting with ``head`` as text, its byte-order mark dropped."""
    encoding, bom = sniff(head)
    if not bom:
        return encoding
    return "utf-8-sig" if encoding == "utf-8" else "utf-16"


def binary_message(name: str) -> str:
    """Why a binary file is refused."""
    return f"{name} looks like a binary file (it contains NUL bytes); the file tools handle text only"
