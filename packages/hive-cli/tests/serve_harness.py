"""``hive serve`` for the tests: started with a known token, and a client of its HTTP API."""

from __future__ import annotations

import json
import re
from collections.abc import Generator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx2
from cli_harness import TIMEOUT
from cli_harness import Proc
from cli_harness import Workspace

from hive_protocol import ServerSentEvent
from hive_protocol import SseDecoder

__all__ = ["READY", "TOKEN", "Served", "read_sse", "serving"]

TOKEN = "test-token-0123456789"
READY = re.compile(r"^hive serve: (http://127\.0\.0\.1:(\d+))/\?token=(\S+)$")


class Served:
    """A running ``hive serve`` and a client that presents the token."""

    def __init__(self, proc: Proc, url: str) -> None:
        self.proc = proc
        self.url = url
        self.client = httpx2.Client(
            base_url=url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(TIMEOUT)
        )

    def tokenless(self) -> httpx2.Client:
        """A client of the server that presents no token (close it, or use it as a context manager)."""
        return httpx2.Client(base_url=self.url, timeout=TIMEOUT)

    def open(self, **body: Any) -> str:
        response = self.client.post("/api/sessions", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["session_id"])

    def send(self, session: str, *requests: dict[str, Any]) -> httpx2.Response:
        body = b"".join(json.dumps(request).encode() + b"\n" for request in requests)
        return self.client.post(f"/api/sessions/{session}/requests", content=body)

    def events(self, session: str, *, after: int | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
        """The session's events as (position, event), read from its SSE stream."""
        headers = {} if after is None else {"last-event-id": str(after)}
        with self.client.stream("GET", f"/api/sessions/{session}/events", headers=headers) as response:
            yield from read_sse(response)

    def turn(
        self, session: str, content: str, *, after: int | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """Send one message and read the stream (from ``after``) up to its ``turn_end``."""
        assert self.send(session, {"type": "user_message", "content": content}).status_code == 202
        return self.until(session, "turn_end", after=after)

    def until(self, session: str, kind: str, *, after: int | None = None) -> list[tuple[int, dict[str, Any]]]:
        """Read the stream from ``after`` up to and including the first event of ``kind``."""
        seen: list[tuple[int, dict[str, Any]]] = []
        for position, event in self.events(session, after=after):
            seen.append((position, event))
            if event["type"] == kind:
                return seen
        raise AssertionError(f"the stream ended before a {kind}: {seen}")


def read_sse(response: httpx2.Response) -> Iterator[tuple[int, dict[str, Any]]]:
    """A 200 event stream's events as (``id``, JSON data), every one numbered."""
    assert response.status_code == 200, response.read()
    assert response.headers["content-type"].startswith("text/event-stream")
    decoder = SseDecoder()
    for chunk in response.iter_bytes():
        for item in decoder.feed(chunk):
            assert isinstance(item, ServerSentEvent)
            assert item.id is not None
            yield int(item.id), json.loads(item.data)


@contextmanager
def serving(ws: Workspace, *args: str, token: str | None = TOKEN) -> Generator[Served]:
    """``hive serve`` with ``args``, given ``--token TOKEN`` unless ``token`` is ``None`` (then the server must
    take its token from the configuration or the environment, and that one must be ``TOKEN``)."""
    with ws.start("serve", *(("--token", token) if token else ()), *args) as proc:
        line = proc.next_line()
        assert line is not None, proc.stderr
        match = READY.match(line.decode().strip())
        assert match is not None, line
        assert match.group(3) == TOKEN
        served = Served(proc, match.group(1))
        try:
            yield served
        finally:
            served.client.close()
