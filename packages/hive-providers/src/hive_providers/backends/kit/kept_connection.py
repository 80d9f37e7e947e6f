"""The connection to a CLI that a backend keeps between turns, and the look at it before each turn."""

from __future__ import annotations

from typing import Protocol
from typing import TypeVar

__all__ = ["KeptConnection", "usable"]


class KeptConnection(Protocol):
    """A running CLI a backend keeps: whether it may be used again, and how it is stopped."""

    @property
    def faulted(self) -> bool:
        """Whether the CLI died, closed its output, was killed, or broke its protocol."""
        ...

    async def aclose(self, grace: float) -> None:
        """Stop the CLI, ``grace`` seconds after asking it to end; leaves no process behind."""
        ...


_Kept = TypeVar("_Kept", bound=KeptConnection)


async def usable(connection: _Kept | None) -> _Kept | None:
    """``connection`` if it can serve another turn; a faulted one is stopped at once and ``None`` returned (the
    caller starts a new CLI)."""
    if connection is not None and connection.faulted:
        await connection.aclose(0.0)
        return None
    return connection
