"""What goes wrong while reading configuration: errors that stop, warnings that are reported and skipped."""

from __future__ import annotations

import msgspec

__all__ = ["ConfigError", "ConfigWarning"]


def _where(source: str | None, line: int | None, column: int | None) -> str:
    if source is None:
        return ""
    if line is None:
        return source
    return f"{source}:{line}" if column is None else f"{source}:{line}:{column}"


class ConfigError(ValueError):
    """The configuration cannot be used; the message names the file, line and column, and the key if known."""

    problem: str
    """What is wrong, in words."""
    source: str | None
    """The file (or variable) the fault is in; ``None`` for a bad argument, such as a key given to ``set``."""
    line: int | None
    """The 1-based line of the fault, when known."""
    column: int | None
    """The 1-based column of the fault, when known."""
    key: str | None
    """The dotted configuration key concerned, when there is one."""

    def __init__(
        self,
        problem: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: int | None = None,
        key: str | None = None,
    ) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        self.column = column
        self.key = key
        where = _where(source, line, column)
        super().__init__(f"{where}: {problem}" if where else problem)


class ConfigWarning(msgspec.Struct, frozen=True, kw_only=True):
    """Something in the configuration that was ignored (an unknown key, an unreadable value)."""

    message: str
    """What was ignored and why."""
    source: str | None = None
    """The file or environment variable it came from."""
    line: int | None = None
    """The 1-based line, when it came from a file."""
    column: int | None = None
    """The 1-based column, when known."""
    key: str | None = None
    """The dotted key concerned, as written."""

    def __str__(self) -> str:
        where = _where(self.source, self.line, self.column)
        return f"{where}: {self.message}" if where else self.message
