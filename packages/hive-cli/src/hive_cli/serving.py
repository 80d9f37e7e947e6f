"""The session ``hive run --server`` serves, apart from the transport that carries it.

The stdio server wraps it in a :class:`~hive_core.StdioRunner`; the conformance tests drive the very same
session in process, which is how they show both transports write the same bytes.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import Callable
from contextlib import asynccontextmanager

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.conversation import SessionChoice
from hive_cli.opening import OpenSession
from hive_cli.opening import open_session
from hive_core import AsyncClosable
from hive_core import SessionRunner
from hive_core.sessions import SharedSessionStore

__all__ = ["open_served", "open_server_session"]


@asynccontextmanager
async def open_server_session(
    options: HostOptions,
    session_id: str | None = None,
    *,
    clock: Callable[[], float] | None = None,
    store: SharedSessionStore | None = None,
) -> AsyncGenerator[SessionRunner]:
    """Build the agent for the project at ``options.cwd`` and yield its session, MCP plugins running.

    With ``session_id`` the stored session of that id is resumed (history and a pending approval), or created;
    without, a new id is generated. ``clock`` replaces the agent's clock (a fixed one makes
    ``turn_end.duration_ms`` deterministic). Configuration faults raise one of
    :class:`~hive_core.errors.UserError` before anything is yielded.
    """
    async with open_served(options, session_id, clock=clock, store=store) as session:
        yield session.runner


@asynccontextmanager
async def open_served(
    options: HostOptions,
    session_id: str | None = None,
    *,
    clock: Callable[[], float] | None = None,
    store: SharedSessionStore | None = None,
) -> AsyncGenerator[OpenSession]:
    """:func:`open_server_session`, yielding the whole :class:`~hive_cli.opening.OpenSession` (its host and
    backend too) for a server that changes the session while it runs (``hive acp``'s modes). ``store``: the
    session store to use (closed with the session) instead of the configured one."""
    choice = SessionChoice(session_id=session_id)
    with open_session(options, choice, prompts=None, clock=clock, store=store) as session:
        async with session.plugins():
            try:
                yield session
            finally:
                # A server opens many sessions in one process: each one's model connections end with it.
                client = session.host.client
                if isinstance(client, AsyncClosable):
                    with anyio.CancelScope(shield=True):
                        await client.aclose()
