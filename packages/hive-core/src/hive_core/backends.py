"""The agent backend contract: what runs a turn, whether hive's own loop or a coding-agent CLI.

An :class:`AgentBackend` is a processor like :class:`~hive_core.loop.AgentSession` (a ``user_message`` in, hive
events out, ending with exactly one ``turn_end``), so every runner serves one exactly as it serves the built-in
loop, and :func:`hive_protocol.verify` and the conformance kit judge its stream. Beside the processor it can say
whether it can run at all (:meth:`~AgentBackend.probe`) and which session of its own it is in
(:attr:`~AgentBackend.session_id`), so a hive session resumes the CLI's session. The built-in loop is the backend
named ``hive`` (:class:`HiveBackend`).
"""

from __future__ import annotations

from typing import Protocol
from typing import runtime_checkable

import msgspec

from hive_protocol import UserMessageRequest

from .loop import AgentSession
from .tools import EventSink

__all__ = ["HIVE_BACKEND", "AgentBackend", "BackendProbe", "HiveBackend"]

HIVE_BACKEND = "hive"
"""The name of the built-in loop as a backend."""


class BackendProbe(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What a backend found out about itself without running a turn."""

    name: str
    """The backend's canonical name (``gemini``, ``claude-code``, ``hive``)."""
    installed: bool
    """Whether its program was found (always true for ``hive``)."""
    executable: str | None = None
    """The program that would run, as found on ``PATH`` or configured."""
    version: str | None = None
    """The version it reported; ``None`` when it could not be read."""
    speaks_acp: bool | None = None
    """Whether it speaks the Agent Client Protocol; ``None`` when that was not checked."""
    offline: bool = False
    """Whether hive can run it against a local model endpoint with no vendor login."""
    install_hint: str | None = None
    """The command that installs it, for an error or a listing when it is missing."""
    problem: str | None = None
    """Why it cannot run, in words fit for the user; ``None`` when it can."""


@runtime_checkable
class AgentBackend(Protocol):
    """Runs turns: the built-in loop, or a coding-agent CLI driven over its own protocol.

    Calling it runs one turn: events go to ``emit`` and end with exactly one ``turn_end`` (a runner adds what a
    failing or cancelled backend leaves out). Approvals the backend needs go through the approval service it was
    built with, questions through its question service: the same paths hive's own tools use.
    """

    name: str
    """The canonical name of the backend."""

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run the turn of ``request``, writing its events to ``emit``."""
        ...

    async def probe(self) -> BackendProbe:
        """Whether the backend can run here, and what it is; never raises for a missing program."""
        ...

    @property
    def session_id(self) -> str | None:
        """The backend's own session id once a turn started one (the CLI's session); ``None`` before."""
        ...

    async def aclose(self) -> None:
        """Stop whatever the backend keeps running between turns (warm CLI processes)."""
        ...


class HiveBackend:
    """hive's own agent loop as a backend: an :class:`~hive_core.loop.AgentSession` under the name ``hive``."""

    name = HIVE_BACKEND

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        """The conversation the turns run in."""

    async def __call__(self, request: UserMessageRequest, emit: EventSink) -> None:
        """Run one turn of the built-in loop."""
        await self.session(request, emit)

    async def probe(self) -> BackendProbe:
        """Always installed: it is hive itself."""
        from importlib.metadata import PackageNotFoundError  # 15 ms of import, for this call alone
        from importlib.metadata import version  # 15 ms of import, for this call alone

        try:
            found = version("hive-core")
        except PackageNotFoundError:  # running from a source tree that was never installed
            found = None
        return BackendProbe(name=HIVE_BACKEND, installed=True, version=found, offline=True)

    @property
    def session_id(self) -> str | None:
        """The built-in loop keeps its history in hive's own session: it has no session id of its own."""
        return None

    async def aclose(self) -> None:
        """Nothing runs between turns."""
