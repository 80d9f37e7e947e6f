"""What goes wrong while reading configuration: errors that stop, warnings that are reported and skipped."""

from __future__ import annotations

from typing import Unpack

import msgspec

from hive_core.errors import ErrorPosition
from hive_core.errors import UserError
from hive_core.errors import where

__all__ = ["ConfigError", "ConfigWarning"]


class ConfigError(UserError, ValueError):
    """The configuration cannot be used; the message names the file, line and column, and the key if known."""

    key: str | None
    """The dotted configuration key concerned, when there is one."""

    def __init__(self, problem: str, *, key: str | None = None, **position: Unpack[ErrorPosition]) -> None:
        super().__init__(problem, **position)
        self.key = key


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
        position = where(self.source, self.line, self.column)
        return f"{position}: {self.message}" if position else self.message
