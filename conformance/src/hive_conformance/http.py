"""The HTTP binding of the turn-stream protocol, as the kit speaks it to a runner at a base URL.

- ``POST {base}/sessions`` with ``{"session_id", "working_directory", "settings"}`` opens a session and answers
  ``{"session_id": …}``. ``working_directory`` is the scenario's prepared project directory (the runner shares
  the machine with the kit); ``settings`` is the scenario's ``conformance.json``.
- ``GET {base}/sessions/{id}/events`` streams the session's events as Server-Sent Events: ``id:`` the event's
  1-based position, ``data:`` the canonical line without its ``\\n``. The stream ends once the session has ended
  (its input closed and every queued turn ended). ``Last-Event-ID`` resumes after that event.
- ``POST {base}/sessions/{id}/requests`` with JSON Lines (one or more request lines) feeds the session. A runner
  may refuse a body holding a line it cannot read with ``400``, passing none of its lines on; its stream still
  carries the ``error`` event stdio answers such a line with (the kit compares the stream, not the answer).
  Any other status of 400 or above is a runner that stopped reading its input.
- ``POST {base}/sessions/{id}/close`` ends the session's input, as end of file does on stdio.
- ``DELETE {base}/sessions/{id}``, once the scenario is over, forgets the ended session, so that the next
  scenario, opened with the same id (``conformance``, which ``session_started`` announces), starts afresh. A
  runner that opens a fresh session for an id it has seen anyway need not have it: any answer is accepted.

With a token (``--token``), every request carries ``Authorization: Bearer TOKEN``.

The payload bytes are the stdio bytes: a runner passes over HTTP exactly when it passes over stdio.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from typing import cast
from urllib.parse import quote

import anyio
import httpx2

from hive_conformance.targets import Connection
from hive_conformance.targets import RunnerStartError
from hive_conformance.workspace import SESSION_ID
from hive_conformance.workspace import SETTINGS_FILE_NAME
from hive_conformance.workspace import Workspace

__all__ = ["HttpTarget", "sse_payloads"]


class HttpTarget:
    """A runner listening at ``base_url``; a fresh session per scenario."""

    def __init__(self, base_url: str, *, token: str | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.description = self.base_url
        self._headers = {} if token is None else {"authorization": f"Bearer {token}"}

    @asynccontextmanager
    async def connect(self, workspace: Workspace) -> AsyncGenerator[Connection]:
        """Open a session for the scenario; on leaving, close its input and stop reading."""
        settings_file = workspace.project / SETTINGS_FILE_NAME
        settings = cast("dict[str, Any]", json.loads(settings_file.read_text(encoding="utf-8")))
        try:
            client = httpx2.AsyncClient(
                base_url=self.base_url, headers=self._headers, timeout=httpx2.Timeout(30.0, read=None)
            )
        except httpx2.InvalidURL as error:
            raise RunnerStartError(f"not a runner's URL: {self.base_url!r} ({error})") from error
        async with client:
            try:
                response = await client.post(
                    "/sessions",
                    json={
                        "session_id": SESSION_ID,
                        "working_directory": str(workspace.project),
                        "settings": settings,
                    },
                )
                if response.status_code in (401, 403):
                    given = "the token given" if "authorization" in self._headers else "no token"
                    raise RunnerStartError(
                        f"the runner at {self.base_url} refused the request with {given} "
                        f"(HTTP {response.status_code}: {response.text[:200]}); pass its token with --token"
                    )
                response.raise_for_status()
                session = str(response.json()["session_id"])
            except (httpx2.HTTPError, httpx2.InvalidURL, KeyError, TypeError, ValueError) as error:
                raise RunnerStartError(f"cannot open a session at {self.base_url}: {error}") from error
            connection = _HttpConnection(client, f"/sessions/{quote(session, safe='')}")
            try:
                yield connection
            finally:
                with anyio.CancelScope(shield=True):
                    await connection.stop()
                    await connection.forget()


class _HttpConnection:
    def __init__(self, client: httpx2.AsyncClient, path: str) -> None:
        self.client = client
        self.path = path
        self._closed = False
        self._ended = False
        self._notes: list[str] = []

    async def send(self, data: bytes) -> None:
        try:
            response = await self.client.post(
                f"{self.path}/requests", content=data, headers={"content-type": "application/jsonl"}
            )
        except httpx2.HTTPError as error:
            # As a broken pipe on stdio: the harness reports it as a runner that stopped reading.
            raise anyio.BrokenResourceError(f"the request did not reach the runner: {error!r}") from error
        if response.status_code == 400:
            # A line it cannot read, refused whole: the stream shows what the runner made of it.
            self._notes.append(f"a request was refused: HTTP 400 {response.text[:200]}")
        elif response.status_code >= 400:
            raise anyio.BrokenResourceError(f"the runner refused the request: HTTP {response.status_code}")

    async def close_input(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(httpx2.HTTPError):
            response = await self.client.post(f"{self.path}/close")
            if response.status_code >= 400:
                self._notes.append(f"closing the input answered HTTP {response.status_code}")

    async def forget(self) -> None:
        """Ask the runner to forget the session (its id comes again with the next scenario)."""
        with contextlib.suppress(httpx2.HTTPError):
            response = await self.client.delete(self.path)
            if response.status_code >= 400 and response.status_code not in (404, 405):
                self._notes.append(f"forgetting the session answered HTTP {response.status_code}")

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
    """The ``data`` of each Server-Sent Event in a byte stream, as the SSE standard reads it.

    Lines end in ``\\r\\n``, ``\\n`` or ``\\r`` (also split across chunks); the ``data`` lines of one event
    are joined with ``\\n``; comments, the other fields and one leading byte order mark are ignored. An event
    is dispatched by the blank line after it: one cut off by the end of the stream is dropped. Bytes are kept
    as they are (no decoding), so a line that is not UTF-8 reaches the comparison unchanged.
    """
    buffer = bytearray()
    scanned = 0  # buffer[:scanned] holds no line end
    data: list[bytes] = []
    started = False
    async for chunk in chunks:
        buffer += chunk
        if not started:
            if len(buffer) < len(_BOM) and _BOM.startswith(bytes(buffer)):
                continue
            started = True
            if buffer.startswith(_BOM):
                del buffer[: len(_BOM)]
        start = 0
        for match in _LINE_END.finditer(buffer, scanned):
            if match.end() == len(buffer) and match.group() == b"\r":
                break  # maybe the first half of a "\r\n" split across chunks
            if (payload := _sse_line(bytes(buffer[start : match.start()]), data)) is not None:
                yield payload
            start = match.end()
        del buffer[:start]
        scanned = len(buffer) - 1 if buffer.endswith(b"\r") else len(buffer)
    if buffer.endswith(b"\r") and (payload := _sse_line(bytes(buffer[:-1]), data)) is not None:
        yield payload


_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _sse_line(line: bytes, data: list[bytes]) -> bytes | None:
    """Take one line of an event stream; returns the event's data when the line dispatches one."""
    if not line:
        if not data:
            return None
        payload = b"\n".join(data)
        data.clear()
        return payload
    field, colon, value = line.partition(b":")
    if field == b"data":
        data.append(value[1:] if colon and value.startswith(b" ") else value)
    return None
