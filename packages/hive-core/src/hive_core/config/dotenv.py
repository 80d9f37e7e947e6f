"""The project's ``.env`` file: ``KEY=value`` lines, read without touching the process environment.

Accepted: blank lines and ``#`` comments; an ``export`` prefix; spaces around ``=``; unquoted values (trimmed,
a ``#`` after whitespace starts a comment); single-quoted values (literal); double-quoted values (``\\n``,
``\\t``, ``\\r``, ``\\"``, ``\\\\`` and ``\\$`` escapes); quoted values spanning lines. A later line for
the same key wins. There is no ``${VAR}`` interpolation. A line that is not ``KEY=value`` is skipped with a
warning; a quote that is never closed is an error, since the rest of the file would be swallowed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import msgspec

from .errors import ConfigError
from .errors import ConfigWarning
from .structured import read_text

__all__ = ["DotenvFile", "parse_dotenv", "read_dotenv"]

_ASSIGNMENT: Final = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.\-]*)\s*=(.*)$")
_INLINE_COMMENT: Final = re.compile(r"\s#")
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "$": "$"}


class DotenvFile(msgspec.Struct, frozen=True, kw_only=True):
    """The variables of a ``.env`` file."""

    source: str
    """The file's path, as shown in messages."""
    values: dict[str, str]
    """Each variable's value, by name, in file order."""
    lines: dict[str, int]
    """The 1-based line each variable was (last) set on."""
    warnings: tuple[ConfigWarning, ...] = ()
    """Lines that were skipped, and why."""


def read_dotenv(path: Path) -> DotenvFile | None:
    """Parse the file at ``path``; ``None`` if there is none. Raises :class:`ConfigError` naming the file."""
    text = read_text(path, error=ConfigError)
    return None if text is None else parse_dotenv(text, source=str(path))


def parse_dotenv(text: str, *, source: str = ".env") -> DotenvFile:
    """Parse the text of a ``.env`` file (``source`` names it in warnings and errors)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    values: dict[str, str] = {}
    where: dict[str, int] = {}
    warnings: list[ConfigWarning] = []
    index = 0
    while index < len(lines):
        line_number = index + 1
        line = lines[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _ASSIGNMENT.match(line)
        if match is None:
            warnings.append(
                ConfigWarning(message="not a KEY=value line; ignored", source=source, line=line_number)
            )
            continue
        name, rest = match.group(1), match.group(2)
        stripped = rest.lstrip()
        if stripped[:1] in {"'", '"'}:
            quote = stripped[0]
            column = match.start(2) + len(rest) - len(stripped) + 1
            body = stripped[1:]
            end = _closing_quote(body, quote)
            while end is None:
                if index >= len(lines):
                    raise ConfigError(
                        f"the {quote} quote opened here is never closed",
                        source=source,
                        line=line_number,
                        column=column,
                        key=name,
                    )
                body = f"{body}\n{lines[index]}"
                index += 1
                end = _closing_quote(body, quote)
            value = _unescape(body[:end]) if quote == '"' else body[:end]
            after = body[end + 1 :].strip()
            if after and not after.startswith("#"):
                warnings.append(
                    ConfigWarning(
                        message=f"text after the closing quote of {name} ignored",
                        source=source,
                        line=line_number,
                        key=name,
                    )
                )
        else:
            comment = _INLINE_COMMENT.search(rest)
            value = (rest[: comment.start()] if comment else rest).strip()
        values[name] = value
        where[name] = line_number
    return DotenvFile(source=source, values=values, lines=where, warnings=tuple(warnings))


def _closing_quote(body: str, quote: str) -> int | None:
    if quote == "'":
        found = body.find("'")
        return None if found < 0 else found
    escaped = False
    for position, char in enumerate(body):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return position
    return None


def _unescape(body: str) -> str:
    out: list[str] = []
    chars = iter(body)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        following = next(chars, "")
        out.append(_ESCAPES.get(following, f"\\{following}"))
    return "".join(out)
