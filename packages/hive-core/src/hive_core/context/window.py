"""The model's context window and where the number came from."""

from __future__ import annotations

from typing import Final
from typing import Literal

import msgspec

from hive_core.chat import Capabilities

__all__ = ["DEFAULT_CONTEXT_WINDOW", "ContextWindow", "ContextWindowSource", "resolve_window"]

DEFAULT_CONTEXT_WINDOW: Final = 8192
"""The window assumed when nothing better is known (upstream's default too)."""

ContextWindowSource = Literal["server", "catalog", "configured", "default"]
"""Where a window came from: the server's metadata, the model catalog, a configured window (the client's own or
``compaction.maxContextTokens``), or the stated default."""

_SOURCE_WORDS: Final[dict[ContextWindowSource, str]] = {
    "server": "from the server",
    "catalog": "from the catalog",
    "configured": "configured",
    "default": "the default",
}


class ContextWindow(msgspec.Struct, frozen=True):
    """A context window in tokens, with its source."""

    tokens: int
    """The window's size."""
    source: ContextWindowSource
    """Where the number came from."""

    def describe(self) -> str:
        """E.g. ``131,072 tokens (from the catalog)``."""
        return f"{self.tokens:,} tokens ({_SOURCE_WORDS[self.source]})"


def resolve_window(
    capabilities: Capabilities, configured: int | None = None, default: int = DEFAULT_CONTEXT_WINDOW
) -> ContextWindow:
    """The best window there is: the client's own (server metadata or catalog), then ``configured``, then
    ``default``."""
    if capabilities.context_window:
        return ContextWindow(capabilities.context_window, capabilities.context_window_source or "catalog")
    if configured:
        return ContextWindow(configured, "configured")
    return ContextWindow(default, "default")
