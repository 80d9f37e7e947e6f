"""A small, independent host of the seed's agent endpoints, for testing the HTTP agent runner.

Written from the contract alone (nothing of hive's own server): ``POST /api/agent/{id}/ready``, the inbox of
requests as Server-Sent Events (``id:`` the request's 1-based position; ``Last-Event-ID`` resumes after it) and
``POST /api/agent/{id}/events`` taking JSON Lines whose first line is at the ``Hive-Event-Position`` header's
position (counted from 1 after each ``ready``); a line it already holds is kept once. An inbox connection without
``Last-Event-ID`` starts after the last request the host sent to any earlier connection (a new agent process for
the session does not get the old one's requests again). It runs on 127.0.0.1 in the
test's own event loop and can be stopped and started again on the same port, its state kept (a host restarting).
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncGenerator
from collections.abc import Callable
from contextlib import asynccontextmanager

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Route

WAIT = 20.0


class AgentHost:
    """The host's state: what it queued for the agent, what it received, how it should misbehave."""

    def __init__(self, agent_id: str = "agent-1") -> None:
        self.agent_id = agent_id
        self.inbox: list[bytes] = []
        """Request lines for the agent, in order (the SSE id of each is its 1-based position)."""
        self.events: list[bytes] = []
        """Event lines received, each once."""
        self.ready: list[object] = []
        """The bodies of the ``ready`` posts."""
        self.last_event_ids: list[str | None] = []
        """The ``Last-Event-ID`` of each inbox connection (``None`` when it sent none)."""
        self.authorizations: list[str | None] = []
        """The ``Authorization`` header of every request."""
        self.lose_answers = 0
        """How many more event posts to take but answer 503 (an answer lost on the way back)."""
        self.refuse: int | None = None
        """A status to answer every request with (a host that refuses the agent)."""
        self.end_inbox_after: int | None = None
        """End the inbox stream once it has sent this many requests (the connection breaks)."""
        self._base = 0
        self._delivered = 0
        """How many requests the host has sent on any inbox connection."""
        self._serving = False
        self._changed = anyio.Event()
        self.port = _free_port()

    def send(self, request: dict[str, object]) -> None:
        """Queue one request for the agent."""
        self.inbox.append(json.dumps(request).encode())
        self._notify()

    def decoded(self) -> list[dict[str, object]]:
        """The events received, decoded."""
        return [json.loads(line) for line in self.events]

    def kinds(self) -> list[str]:
        return [str(event["type"]) for event in self.decoded()]

    async def wait_until(self, condition: Callable[[AgentHost], bool]) -> None:
        with anyio.fail_after(WAIT):
            while not condition(self):
                changed = self._changed
                await changed.wait()

    async def wait_for_event(self, kind: str, count: int = 1) -> dict[str, object]:
        await self.wait_until(lambda host: host.kinds().count(kind) >= count)
        return [event for event in self.decoded() if event["type"] == kind][count - 1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def _refused(self, request: Request) -> Response | None:
        self.authorizations.append(request.headers.get("authorization"))
        if request.path_params["agent"] != self.agent_id:
            return JSONResponse({"error": "no such agent"}, status_code=404)
        if self.refuse is not None:
            return JSONResponse({"error": "refused"}, status_code=self.refuse)
        return None

    async def _ready(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        self.ready.append(await request.json())
        self._base = len(self.events)
        self._notify()
        return Response(status_code=204)

    async def _events(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        first = int(request.headers["hive-event-position"])
        for offset, line in enumerate((await request.body()).splitlines()):
            position = self._base + first + offset
            if position == len(self.events) + 1:
                self.events.append(line)
            elif position > len(self.events) + 1:
                return JSONResponse({"error": f"gap before event {position}"}, status_code=409)
        self._notify()
        if self.lose_answers:
            self.lose_answers -= 1
            return Response(status_code=503)
        return Response(status_code=204)

    async def _inbox(self, request: Request) -> Response:
        if (refused := self._refused(request)) is not None:
            return refused
        last = request.headers.get("last-event-id")
        self.last_event_ids.append(last)
        self._notify()

        async def stream() -> AsyncGenerator[bytes]:
            sent = int(last) if last else self._delivered
            yield b": connected\n\n"
            while self._serving:
                while sent < len(self.inbox):
                    if self.end_inbox_after is not None and sent >= self.end_inbox_after:
                        self.end_inbox_after = None
                        return
                    sent += 1
                    self._delivered = max(self._delivered, sent)
                    yield b"id: %d\ndata: %s\n\n" % (sent, self.inbox[sent - 1])
                changed = self._changed
                await changed.wait()

        return StreamingResponse(stream(), media_type="text/event-stream")

    def app(self) -> Starlette:
        path = "/api/agent/{agent}"
        return Starlette(
            routes=[
                Route(f"{path}/ready", self._ready, methods=["POST"]),
                Route(f"{path}/events", self._events, methods=["POST"]),
                Route(f"{path}/inbox", self._inbox, methods=["GET"]),
            ]
        )

    @asynccontextmanager
    async def serving(self) -> AsyncGenerator[AgentHost]:
        """Serve until the block ends (then every connection is cut, as when a host process dies)."""
        config = uvicorn.Config(self.app(), log_level="critical", lifespan="off", timeout_graceful_shutdown=0)
        server = uvicorn.Server(config)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(64)  # connections wait in the backlog until uvicorn accepts them: no need to wait for it
        self._serving = True
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve, [sock])
            try:
                yield self
            finally:
                self._serving = False
                server.should_exit = True
                server.force_exit = True
                self._notify()  # wake the inbox streams, so they end with the server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
