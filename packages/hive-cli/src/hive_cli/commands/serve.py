"""``hive serve``: the client API of the turn-stream protocol over HTTP (see :mod:`hive_cli.serve`)."""

from __future__ import annotations

import os
import re
import secrets
import socket
import sys
from pathlib import Path
from typing import Final

import anyio

from hive_cli.assemble import HostOptions
from hive_cli.errors import USER_ERRORS

__all__ = ["listen", "serve_main"]

_TOKEN_SHAPE: Final = re.compile(r"[A-Za-z0-9._~-]{16,256}")
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


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
    *, host: str, port: int, token: str | None, max_sessions: int | None, isolate: bool, options: HostOptions
) -> int:
    """Run ``hive serve`` until SIGINT or SIGTERM; returns the exit code."""
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
    return anyio.run(_serve, listener, host, chosen, max_sessions, isolate, options)


def _configured_token(cwd: Path) -> str | None:
    """``serve.token`` from the configuration of the folder the server starts in; a project's own value counts
    only in a trusted project, as every secret does."""
    from hive_cli.project_trust import load_trusted_config
    from hive_core.config import find_project_root
    from hive_providers.table import CONFIG_SCHEMA

    def say(line: str) -> None:
        sys.stderr.write(f"{line}\n")

    loaded = load_trusted_config(find_project_root(cwd), CONFIG_SCHEMA, ask=False, say=say)
    value = loaded.get("serve.token")
    return value if isinstance(value, str) and value else None


async def _serve(
    listener: socket.socket,
    host: str,
    token: str,
    max_sessions: int | None,
    isolate: bool,
    options: HostOptions,
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
    store = ServeLogStore(hive_home() / LOG_FILE_NAME)
    async with anyio.create_task_group() as group:
        own = "127.0.0.1" if host in ("0.0.0.0", "localhost") else "[::1]" if host == "::" else shown
        agents = (
            AgentCommand(f"http://{own}:{port}", {**os.environ, "HIVE_SERVE_TOKEN": token})
            if isolate
            else None
        )
        served = ServeApp(group, defaults=options, max_sessions=max_sessions, isolate=agents, store=store)
        await served.restore()
        flushing = anyio.CancelScope()

        async def keep_flushing() -> None:
            with flushing:
                await served.keep_flushing()

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
    store.close()
    return 0
