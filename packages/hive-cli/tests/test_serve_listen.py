"""``hive serve``'s listening socket: what the connections uvicorn accepts on it are like."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import pytest
import uvicorn

from hive_cli.commands.serve import listen

pytestmark = pytest.mark.anyio


async def _empty(scope: dict[str, Any], receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 204, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def test_uvicorn_sends_small_writes_of_accepted_connections_at_once() -> None:
    # With Nagle's algorithm on, a response's body waited for the client's (delayed, ~40 ms) ACK of its headers,
    # on every request: the event loop turns it off only on a socket that says it is TCP.
    listener = listen("127.0.0.1", 0)
    port = int(listener.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(_empty, log_level="warning", lifespan="off"))
    nodelay: list[int] = []
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [listener])
            # The socket already listens: the connection waits in its backlog until uvicorn accepts it.
            async with await anyio.connect_tcp("127.0.0.1", port) as client:
                await client.send(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
                await client.receive()  # answered: the connection is the server's
                for connection in server.server_state.connections:
                    accepted: socket.socket = connection.transport.get_extra_info("socket")
                    nodelay.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            server.should_exit = True
    assert nodelay == [1]
