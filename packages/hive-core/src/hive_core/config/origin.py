"""Where a configuration value came from."""

from __future__ import annotations

from typing import Final
from typing import Literal

import msgspec

__all__ = ["DEFAULT_ORIGIN", "LayerName", "Origin"]

LayerName = Literal["default", "global", "project", "env", "dotenv"]
"""The layers, lowest first: built-in defaults, ``~/.hive/config.yaml``, ``.hive/config.yaml``, the process
environment, the project's ``.env``."""


class Origin(msgspec.Struct, frozen=True, kw_only=True):
    """The layer (and file, line or variable) a value was taken from."""

    layer: LayerName
    """The layer that set the value."""
    source: str | None = None
    """The file it was read from (``None`` for defaults and the process environment)."""
    line: int | None = None
    """The 1-based line in that file."""
    variable: str | None = None
    """The environment variable it was read from (process environment or ``.env``)."""

    def __str__(self) -> str:
        if self.layer == "default":
            return "default"
        if self.layer == "env":
            return f"environment {self.variable}"
        where = self.source or self.layer
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where} ({self.variable})" if self.variable else where


DEFAULT_ORIGIN: Final = Origin(layer="default")
"""The origin of a value no layer set."""
