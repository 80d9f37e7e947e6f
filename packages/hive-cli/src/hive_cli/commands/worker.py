"""``hive worker``: run the turns of sessions kept on an engine (see :mod:`hive_cli.engine`)."""

from __future__ import annotations

import os
import signal
import sys

import anyio

from hive_cli.errors import USER_ERRORS

__all__ = ["worker_main"]

DEFAULT_MAX_TURNS = 16
"""Turns a worker runs at once unless ``--max-turns`` says otherwise; the engine queues the rest for any worker."""
_SPARE_CONNECTIONS = 4


def worker_main(*, engine: str, max_turns: int = DEFAULT_MAX_TURNS) -> int:
    """Run ``hive worker`` until SIGINT or SIGTERM; returns the exit code."""
    from hive_cli.engine import EngineAddress
    from hive_cli.engine import EngineAddressError
    from hive_cli.session_store import session_store_location
    from hive_core.redaction import mask_url
    from hive_core.sessions import is_postgres_url

    try:
        address = EngineAddress.parse(engine)
    except EngineAddressError as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 2
    location = session_store_location()
    if not is_postgres_url(location):
        sys.stderr.write(
            "hive: a worker needs the store every front end and worker shares: give --store postgresql://… "
            "(or sessions.store)\n"
        )
        return 2
    try:
        from hive_cli.engine.temporal import EngineUnreachable
        from hive_cli.engine.temporal import connect
        from hive_cli.engine.temporal import run_worker
        from hive_cli.engine.turns import TurnActivities
        from hive_cli.serve.shared_log import SharedServeLog
        from hive_core.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        sys.stderr.write(
            f"hive: the worker needs the temporal extra ({exc}): install hive-agent-cli[temporal]\n"
        )
        return 2
    # Every turn the worker runs at once shares this pool, and a turn records synchronously: a connection each,
    # and a few for the heartbeats' event writes and the leases' renewals.
    store = PostgresSessionStore(location, pool_size=max_turns + _SPARE_CONNECTIONS)
    try:
        store.schema_version()
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    activities = TurnActivities(store, SharedServeLog(store))

    def ready() -> None:
        sys.stdout.write(
            f"hive worker: ready (engine {address}, task queue hive, store {mask_url(location)}, "
            f"pid {os.getpid()})\n"
        )
        sys.stdout.flush()

    async def main() -> None:
        client = await connect(address)
        async with anyio.create_task_group() as group:

            async def stop_on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

            group.start_soon(stop_on_signal)
            await run_worker(client, activities, ready=ready, max_turns=max_turns)
            group.cancel_scope.cancel()

    try:
        anyio.run(main)
    except EngineUnreachable as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 1
    finally:
        store.close()
    return 0
