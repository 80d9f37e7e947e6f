"""The HTTP binding of the turn-stream protocol, as the kit speaks it to a runner at a base URL.

- ``POST {base}/sessions`` with ``{"session_id", "working_directory", "settings"}`` opens a session and answers
  ``{"session_id": …}``. ``working_directory`` is the scenario's prepared project directory (the runner shares
  the machine with the kit); ``settings`` is the scenario's ``conformance.json``.
- ``GET {base}/sessions/{id}/events`` streams the session's events as Server-Sent Events: ``id:`` the event's
  1-based position, ``data:`` the canonical line without its ``\\n``. The stream ends once the session has ended
  (its input closed and every queued turn ended). ``Last-Event-ID`` resumes after that event.
- ``POST {base}/sessions/{id}/requests`` with JSON Lines (one or more request lines) feeds the session.
- ``POST {base}/sessions/{id}/close`` ends the session's input, as end of file does on stdio.

The payload bytes are the stdio bytes: a runner passes over HTTP exactly when it passes over stdio.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import anyio
import httpx2

from hive_conformance.targets import Connection, RunnerStartError
from hive_conformance.workspace import SESSION_ID, Workspace

__all__ = ["HttpTarget", "sse_payloads"]


class HttpTarget:
    """A runner listening at ``base_url``; a fresh session per scenario."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.description = self.base_url

    @asynccontextmanager
    async def connect(self, workspace: Workspace) -> AsyncGenerator[Connection]:
        """Open a session for the scenario; on leaving, close its input and stop reading."""
        settings_file = workspace.project / "conformance.json"
        settings = cast("dict[str, Any]", json.loads(settings_file.read_text(encoding="utf-8")))
        async with httpx2.AsyncClient(
            base_url=self.base_url, timeout=httpx2.Timeout(30.0, read=None)
        ) as client:
            try:
                response = await client.post(
                    "/sessions",
                    json={
                        "session_id": SESSION_ID,
                        "working_directory": str(workspace.project),
                        "settings": settings,
                    },
                )
                response.raise_for_status()
                session = str(response.json()["session_id"])
            except (httpx2.HTTPError, KeyError, ValueError) as error:
                raise RunnerStartError(f"cannot open a session at {self.base_url}: {error}") from error
            connection = _HttpConnection(client, f"/sessions/{session}")
            try:
                yield connection
            finally:
                with anyio.CancelScope(shield=True):
                    await connection.stop()


class _HttpConnection:
    def __init__(self, client: httpx2.AsyncClient, path: str) -> None:
        self.client = client
        self.path = path
        self._closed = False
        self._ended = False
        self._notes: list[str] = []

    async def send(self, data: bytes) -> None:
        response = await self.client.post(
            f"{self.path}/requests", content=data, headers={"content-type": "application/jsonl"}
        )
        if response.status_code >= 400:
            raise anyio.BrokenResourceError(f"the runner refused the request: HTTP {response.status_code}")

    async def close_input(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(httpx2.HTTPError):
            response = await self.client.post(f"{self.path}/close")
            if response.status_code >= 400:
                self._notes.append(f"closing the input answered HTTP {response.status_code}")

    async def output(self) -> AsyncIterator[bytes]:
        try:
            async with self.client.stream("GET", f"{self.path}/events") as response:
                if response.status_code != 200:
                    self._notes.append(f"the event stream answered HTTP {response.status_code}")
                    return
                async for payload in sse_payloads(response.aiter_bytes()):
                    yield payload + b"\n"
            self._ended = True
        except httpx2.HTTPError as error:
            self._notes.append(f"the event stream broke: {error!r}")

    async def wait(self) -> int | None:
        # Over HTTP a session that ended its event stream by itself has "exited" cleanly.
        return 0 if self._ended else 1

    async def stop(self) -> None:
        await self.close_input()

    def diagnostics(self) -> str:
        return "\n".join(self._notes)


async def sse_payloads(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The ``data`` of each Server-Sent Event in a byte stream (lines of one event joined with ``\\n``)."""
    buffer = b""
    data: list[bytes] = []
    async for chunk in chunks:
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for raw in lines:
            line = raw.removesuffix(b"\r")
            if not line:
                if data:
                    yield b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield b"\n".join(data)
