"""What ``hive serve`` needs of an engine that runs its sessions elsewhere."""

from __future__ import annotations

from typing import Protocol

from .wire import SessionSpec

__all__ = ["Engine"]


class Engine(Protocol):
    """Sessions run by an engine: the front end opens them and passes their requests on; the events come back
    through the shared store, not through the engine."""

    async def open(self, spec: SessionSpec) -> None:
        """Make sure the session runs (a session already running is left as it is)."""
        ...

    async def send(self, spec: SessionSpec, line: bytes) -> None:
        """Pass one request line on to the session (starting it again if it had ended)."""
        ...

    async def check(self) -> str:
        """Reach the engine; a line saying what answered, or an exception saying why it cannot be reached."""
        ...

    async def aclose(self) -> None:
        """Let go of the engine's connection."""
        ...
