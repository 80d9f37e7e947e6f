"""``hive serve``: the client API of the turn-stream protocol over HTTP (see :mod:`hive_cli.serve`)."""

from __future__ import annotations

import os
import re
import secrets
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Final

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.engine import EngineAddress
from hive_cli.errors import USER_ERRORS

if TYPE_CHECKING:
    from hive_cli.engine import Engine
    from hive_cli.serve.shared_log import SharedServeLog

__all__ = ["listen", "serve_main"]

_TOKEN_SHAPE: Final = re.compile(r"[A-Za-z0-9._~-]{16,256}")
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")
_FRONT_END_CONNECTIONS: Final = 16


def listen(host: str, port: int) -> socket.socket:
    """``hive serve``'s listening socket, bound to ``host``:``port`` (``0``: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # The protocol named: asyncio turns Nagle's algorithm off only on sockets that say TCP (socket.create_server's
    # say 0), and with it on, every response's body waited ~40 ms for the client's delayed ACK of its headers.
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            listener.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listener.bind((host, port))
        # uvicorn's own backlog: with the default (128) a burst of clients overflowed it, and each one refused
        # waited a second or more for its SYN to be sent again.
        listener.listen(2048)
    except OSError:
        listener.close()
        raise
    return listener


def serve_main(
    *,
    host: str,
    port: int,
    token: str | None,
    max_sessions: int | None,
    isolate: bool,
    options: HostOptions,
    engine: str | None = None,
) -> int:
    """Run ``hive serve`` until SIGINT or SIGTERM; returns the exit code."""
    address: EngineAddress | None = None
    try:
        chosen_engine = engine or _configured_engine(options.cwd)
    except USER_ERRORS as exc:
        sys.stderr.write(f"hive: {exc}\n")
        return 2
    if chosen_engine:
        from hive_cli.engine import EngineAddressError

        try:
            address = EngineAddress.parse(chosen_engine)
        except EngineAddressError as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 2
        if isolate:
            sys.stderr.write(
                "hive: --isolate and --engine do not go together: an engine runs turns on its workers\n"
            )
            return 2
    chosen = token or os.environ.get("HIVE_SERVE_TOKEN")
    if not chosen:
        try:
            chosen = _configured_token(options.cwd) or secrets.token_urlsafe(24)
        except USER_ERRORS as exc:
            sys.stderr.write(f"hive: {exc}\n")
            return 2
    if not _TOKEN_SHAPE.fullmatch(chosen):
        sys.stderr.write(
            "hive: the token must be 16 to 256 characters of letters, digits and . _ ~ - (it goes into URLs)\n"
        )
        return 2
    try:
        listener = listen(host, port)
    except OSError as exc:
        sys.stderr.write(f"hive: cannot listen on {host}:{port}: {exc.strerror or exc}\n")
        return 1
    return anyio.run(_serve, listener, host, chosen, max_sessions, isolate, options, address)


def _configured_engine(cwd: Path) -> str | None:
    """``serve.engine`` from the configuration of the folder the server starts in (a project's own value counts
    only in a trusted project: it says where the project's sessions run)."""
    return _configured(cwd, "serve.engine")


def _configured_token(cwd: Path) -> str | None:
    """``serve.token`` from the configuration of the folder the server starts in; a project's own value counts
    only in a trusted project, as every secret does."""
    return _configured(cwd, "serve.token")


def _configured(cwd: Path, key: str) -> str | None:
    from hive_cli.project_trust import load_trusted_config
    from hive_core.config import find_project_root
    from hive_providers.table import CONFIG_SCHEMA

    def say(line: str) -> None:
        sys.stderr.write(f"{line}\n")

    loaded = load_trusted_config(find_project_root(cwd), CONFIG_SCHEMA, ask=False, say=say)
    value = loaded.get(key)
    return value if isinstance(value, str) and value else None


async def _serve(
    listener: socket.socket,
    host: str,
    token: str,
    max_sessions: int | None,
    isolate: bool,
    options: HostOptions,
    address: EngineAddress | None,
) -> int:
    import uvicorn

    from hive_cli.serve.agents import AgentCommand
    from hive_cli.serve.app import ServeApp
    from hive_cli.serve.guard import Guard
    from hive_cli.serve.guard import allowed_hosts
    from hive_cli.serve.log_store import FILE_NAME as LOG_FILE_NAME
    from hive_cli.serve.log_store import ServeLogStore
    from hive_core.config.paths import hive_home

    port = int(listener.getsockname()[1])
    shown = f"[{host}]" if ":" in host else host
    on_engine = None if address is None else await _on_engine(address)
    if isinstance(on_engine, str):
        sys.stderr.write(f"hive: {on_engine}\n")
        return 1
    store = ServeLogStore(hive_home() / LOG_FILE_NAME) if on_engine is None else None
    async with anyio.create_task_group() as group:
        own = "127.0.0.1" if host in ("0.0.0.0", "localhost") else "[::1]" if host == "::" else shown
        agents = (
            AgentCommand(f"http://{own}:{port}", {**os.environ, "HIVE_SERVE_TOKEN": token})
            if isolate
            else None
        )
        served = ServeApp(
            group,
            defaults=options,
            max_sessions=max_sessions,
            isolate=agents,
            store=store,
            engine=None if on_engine is None else on_engine[0],
            shared=None if on_engine is None else on_engine[1],
        )
        await served.restore()
        flushing = anyio.CancelScope()

        async def keep_flushing() -> None:
            with flushing:
                async with anyio.create_task_group() as background:
                    background.start_soon(served.keep_flushing)
                    background.start_soon(served.follow_shared)

        group.start_soon(keep_flushing)
        app = Guard(served.app, token=token, hosts=allowed_hosts(host, port))
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=5)
        server = uvicorn.Server(config)
        if host not in _LOOPBACK:
            sys.stderr.write(
                f"hive: serving on {host}, beyond this machine, without TLS: the token and every message travel "
                "in clear text (put a TLS proxy in front)\n"
            )
        # The socket already listens: a client that connects before uvicorn runs waits in the backlog.
        sys.stdout.write(f"hive serve: http://{shown}:{port}/?token={token}\n")
        sys.stdout.flush()
        try:
            await server.serve(sockets=[listener])
        finally:
            served.stop()
            flushing.cancel()
    if store is not None:
        store.close()
    if on_engine is not None:
        await on_engine[0].aclose()
        on_engine[1].store.close()
    return 0


async def _on_engine(address: EngineAddress) -> tuple[Engine, SharedServeLog] | str:
    """The engine at ``address`` and the shared store its front ends keep sessions in; or why not."""
    from hive_cli.session_store import session_store_location
    from hive_core.sessions import is_postgres_url

    if not is_postgres_url(session_store_location()):
        return (
            "sessions on an engine need the store every front end and worker shares: give --store "
            "postgresql://… (or sessions.store)"
        )
    try:
        from hive_cli.engine.temporal import EngineUnreachable
        from hive_cli.engine.temporal import TemporalEngine
        from hive_cli.serve.shared_log import SharedServeLog
        from hive_core.sessions.postgres import PostgresSessionStore
    except ImportError as exc:
        return f"--engine needs the temporal extra ({exc}): install hive-agent-cli[temporal]"
    # Every session the front end follows reads through this pool.
    store = PostgresSessionStore(session_store_location(), pool_size=_FRONT_END_CONNECTIONS)
    try:
        await anyio.to_thread.run_sync(store.schema_version)
    except USER_ERRORS as exc:
        return str(exc)
    try:
        engine = await TemporalEngine.connect(address)
    except EngineUnreachable as exc:
        store.close()
        return str(exc)
    return engine, SharedServeLog(store)
