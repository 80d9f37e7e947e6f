"""The session ``hive run --server`` serves, apart from the transport that carries it.

The stdio server wraps it in a :class:`~hive_core.StdioRunner`; the conformance tests drive the very same
session in process, which is how they show both transports write the same bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from functools import partial

from hive_cli.assemble import HostOptions, build_host, plugins_for
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
    without, a new 32-hex id is made. ``clock`` replaces the agent's clock (a fixed one makes
    ``turn_end.duration_ms`` deterministic). Configuration faults raise one of
    :data:`~hive_cli.errors.USER_ERRORS` before anything is yielded.
    """
    from hive_core.sessions import (
        DurableHitlBridge,
        SuspendedTurn,
        TranscriptRecorder,
        default_store,
        validate_session_id,
    )

    store = default_store()
    with store:
        sid = validate_session_id(session_id) if session_id else uuid.uuid4().hex
        bridge = DurableHitlBridge(store, sid)
        host = build_host(options, approvals=bridge)
        if clock is not None:
            host.agent.clock = clock
        bridge.timeout = host.config.approval_timeout_seconds
        store.create(
            project_path=str(host.project_root),
            model=host.settings.model,
            provider=host.settings.provider,
            session_id=sid,
            exist_ok=True,
        )
        recorder = TranscriptRecorder(host.agent.session(store.restore(sid)), store, sid)
        suspended = SuspendedTurn.load(store, sid) if session_id else None
        resume = partial(suspended.resume, recorder, bridge) if suspended is not None else None
        async with plugins_for(host):
            yield SessionRunner(recorder, session_id=sid, bridge=bridge, resume=resume)
