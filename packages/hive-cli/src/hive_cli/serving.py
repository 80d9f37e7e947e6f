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
from hive_cli.opening import open_session
from hive_core import AsyncClosable
from hive_core import SessionRunner

__all__ = ["open_server_session"]


@asynccontextmanager
async def open_server_session(
    options: HostOptions,
    session_id: str | None = None,
    *,
    clock: Callable[[], float] | None = None,
) -> AsyncGenerator[SessionRunner]:
    """Build the agent for the project at ``options.cwd`` and yield its session, MCP plugins running.

    With ``session_id`` the stored session of that id is resumed (history and a pending approval), or created;
    without, a new id is generated. ``clock`` replaces the agent's clock (a fixed one makes
    ``turn_end.duration_ms`` deterministic). Configuration faults raise one of
    :class:`~hive_core.errors.UserError` before anything is yielded.
    """
    with open_session(options, SessionChoice(session_id=session_id), prompts=None, clock=clock) as session:
        async with session.plugins():
            try:
                yield session.runner
            finally:
                # A server opens many sessions in one process: each one's model connections end with it.
                client = session.host.client
                if isinstance(client, AsyncClosable):
                    with anyio.CancelScope(shield=True):
                        await client.aclose()
