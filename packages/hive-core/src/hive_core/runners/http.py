"""The HTTP agent runner: a session served to a host over HTTP, the host's endpoints named by the session id.

The host keeps three endpoints per agent, under ``{base_url}/api/agent/{session_id}/``:

- ``ready`` (POST ``{"session_id": …}``): the agent is up; sent once when the runner starts.
- ``inbox`` (GET, Server-Sent Events): the requests for the agent, each event's ``data`` one request line. The
  runner sends back the last ``id:`` it read as ``Last-Event-ID`` when it reconnects, so the host replays only
  what the agent has not read. A new agent process starts without one: the host sends it what it has not sent
  an earlier agent of the session (a request in flight when an agent died is not sent twice; a pending approval
  is asked again by the new agent, so its answer is not lost).
- ``events`` (POST, ``application/jsonl``): the agent's events, in batches of canonical lines, the same bytes as on
  stdio. The ``Hive-Event-Position`` header gives the position of the batch's first event (1 for the first event
  after ``ready``): a batch is sent again until the host answers it, and a host that already holds some of its
  events keeps them once, so a batch whose answer was lost is neither lost nor doubled.

When the host goes away (a connection error, a 5xx, 408 or 429, an inbox stream that ends without ``shutdown``) the
runner tries again with backoff (1 s doubling to 30 s by default); the attempt count resets once the host answers.
After ``max_failures`` attempts in a row it gives up: the session stops as on a signal (a turn waiting for approval
in a durable session is suspended, to be asked again by the next agent with the same session id) and :meth:`run`
returns 1. Any other 4xx fails at once: the host refused the agent. A turn in progress keeps running across
reconnects; its events wait in memory until the host takes them.

:meth:`HttpRunner.publish` sends an event out of band (a fallback notice while no turn is asking), in order with
the rest.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import aclosing
from functools import partial
from typing import TYPE_CHECKING
from typing import Final
from urllib.parse import quote

import anyio
import msgspec

from hive_core.errors import HiveError
from hive_protocol import DEFAULT_MAX_LINE_BYTES
from hive_protocol import Event
from hive_protocol import LineTooLong
from hive_protocol import SseDecoder
from hive_protocol import encode

from .session import SessionRunner

if TYPE_CHECKING:
    import httpx2

    from hive_core.hitl import HitlBridge

    from .session import Processor

__all__ = ["EVENT_POSITION_HEADER", "HttpRunner", "HttpRunnerError", "run_http"]

EVENT_POSITION_HEADER: Final = "Hive-Event-Position"
"""The header that gives the position of a batch's first event (1 for the first after ``ready``)."""

MAX_BATCH_EVENTS: Final = 512
MAX_BATCH_BYTES: Final = 1024 * 1024
_RETRIED_STATUSES: Final = frozenset({408, 429})


class HttpRunnerError(HiveError):
    """The host refused the agent (a 4xx other than 408 and 429), or did not answer ``max_failures`` times."""


class _TryAgain(Exception):
    """An attempt failed in a way worth trying again (the host is away, restarting or busy)."""


class HttpRunner:
    """Serves a :class:`SessionRunner` to a host at ``base_url`` (see the module's documentation)."""

    def __init__(
        self,
        session: SessionRunner,
        base_url: str,
        *,
        token: str | None = None,
        max_failures: int | None = 10,
        backoff: tuple[float, float] = (1.0, 30.0),
        client: httpx2.AsyncClient | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.session = session
        self.base_url = base_url.rstrip("/")
        self.max_failures = max_failures
        """Attempts in a row before giving up (``None``: try forever)."""
        self.backoff = backoff
        """The first wait between attempts and the longest (it doubles in between), in seconds."""
        self.failure: HttpRunnerError | None = None
        """Why the runner gave up, once it has."""
        self._token = token
        self._own_client = client is None
        self._http = client or _client()
        self._max_line_bytes = max_line_bytes
        self._path = f"{self.base_url}/api/agent/{quote(session.session_id, safe='')}"
        self._outbox: deque[bytes] = deque()
        self._ended = False
        self._wakeup = anyio.Event()

    def write(self, event: Event | msgspec.Struct) -> None:
        """Queue one event for the host (the session's sink); once the runner gave up, events are dropped."""
        if self.failure is not None:
            return
        self._outbox.append(encode(event))
        self._wakeup.set()

    def publish(self, event: Event) -> None:
        """Send ``event`` out of band (not part of a turn: a fallback notice), in order with the others."""
        self.write(event)

    async def run(self) -> int:
        """Announce the agent, serve the session until ``shutdown`` (or giving up), deliver every event; returns
        0, or 1 when the runner gave up (:attr:`failure` says why, and it was written to standard error)."""
        client = self._http
        try:
            await self._ready()
            async with anyio.create_task_group() as group:
                group.start_soon(self._deliver)
                async with aclosing(self._inbox()) as requests:
                    await self.session.serve(requests, self.write)
                self._ended = True
                self._wakeup.set()
        except HttpRunnerError as exc:
            self._give_up(exc)
        finally:
            if self._own_client:
                with anyio.CancelScope(shield=True):
                    await client.aclose()
        return 0 if self.failure is None else 1

    def _headers(self) -> dict[str, str]:
        return {} if self._token is None else {"authorization": f"Bearer {self._token}"}

    async def _ready(self) -> None:
        body = {"session_id": self.session.session_id}
        await self._attempts("announcing the agent", lambda: self._post("ready", json=body))

    async def _post(
        self,
        endpoint: str,
        *,
        json: object = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            response = await self._http.post(
                f"{self._path}/{endpoint}",
                json=json,
                content=content,
                headers={**self._headers(), **(headers or {})},
            )
        except _transport_errors() as exc:
            raise _TryAgain(f"{type(exc).__name__}: {exc}") from exc
        self._check(response, endpoint)

    def _check(self, response: httpx2.Response, endpoint: str) -> None:
        status = response.status_code
        if status < 300:
            return
        if status >= 500 or status in _RETRIED_STATUSES:
            raise _TryAgain(f"HTTP {status}")
        raise HttpRunnerError(
            f"the host at {self.base_url} refused the agent's {endpoint}: HTTP {status} {response.text[:200]}"
        )

    async def _attempts(self, what: str, attempt: Callable[[], Awaitable[None]]) -> None:
        """Run ``attempt`` until it succeeds, waiting with backoff after each failure worth trying again."""
        failures = 0
        while True:
            try:
                await attempt()
                return
            except _TryAgain as exc:
                failures += 1
                await self._pause(what, failures, exc)

    async def _pause(self, what: str, failures: int, problem: Exception) -> None:
        if self.max_failures is not None and failures >= self.max_failures:
            raise HttpRunnerError(
                f"the host at {self.base_url} did not answer {what} after {failures} attempts: {problem}"
            )
        first, longest = self.backoff
        await anyio.sleep(min(longest, first * 2 ** (failures - 1)))

    async def _inbox(self) -> AsyncGenerator[bytes | LineTooLong]:
        """The request lines of the host's inbox, across reconnects; ends when the runner gives up."""
        decoder = SseDecoder(self._max_line_bytes)
        failures = 0
        while True:
            headers = {**self._headers(), "accept": "text/event-stream"}
            if decoder.last_id is not None:
                headers["last-event-id"] = decoder.last_id
            try:
                async with self._http.stream("GET", f"{self._path}/inbox", headers=headers) as response:
                    self._check(response, "inbox")
                    # A new connection: what a broken one left half read is not an event.
                    decoder = SseDecoder(self._max_line_bytes, decoder.last_id)
                    async for chunk in response.aiter_bytes():
                        for item in decoder.feed(chunk):
                            failures = 0
                            yield item if isinstance(item, LineTooLong) else item.data
                raise _TryAgain("the inbox stream ended")
            except _transport_errors() as exc:
                problem: Exception = _TryAgain(f"{type(exc).__name__}: {exc}")
            except _TryAgain as exc:
                problem = exc
            except HttpRunnerError as exc:
                self._give_up(exc)
                return
            failures += 1
            try:
                await self._pause("the inbox", failures, problem)
            except HttpRunnerError as exc:
                self._give_up(exc)
                return

    async def _deliver(self) -> None:
        """Post the queued events in batches until the session ended and every event was taken."""
        delivered = 0
        """The position of the last event the host took."""
        while True:
            while not self._outbox:
                if self._ended or self.failure is not None:
                    return
                self._wakeup = anyio.Event()
                await self._wakeup.wait()
            batch: list[bytes] = []
            size = 0
            for line in self._outbox:
                if batch and (len(batch) >= MAX_BATCH_EVENTS or size + len(line) > MAX_BATCH_BYTES):
                    break
                batch.append(line)
                size += len(line)
            position = delivered + 1
            headers = {EVENT_POSITION_HEADER: str(position), "content-type": "application/jsonl"}
            try:
                await self._attempts(
                    f"events from {position}",
                    partial(self._post, "events", content=b"".join(batch), headers=headers),
                )
            except HttpRunnerError as exc:
                self._give_up(exc)
                return
            for _ in batch:
                self._outbox.popleft()
            delivered += len(batch)

    def _give_up(self, error: HttpRunnerError) -> None:
        if self.failure is not None:
            return
        self.failure = error
        sys.stderr.write(f"hive: {error}\n")
        self._outbox.clear()
        self._wakeup.set()
        self.session.stop()


# httpx2 is imported when a runner is made, not with hive_core: a process that never serves over HTTP does not pay it.
def _client() -> httpx2.AsyncClient:
    import httpx2

    return httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=None))


def _transport_errors() -> type[httpx2.TransportError]:
    import httpx2

    return httpx2.TransportError


def run_http(
    processor: Processor,
    base_url: str,
    session_id: str,
    *,
    token: str | None = None,
    bridge: HitlBridge | None = None,
) -> int:
    """Serve ``processor`` to the host at ``base_url`` as agent ``session_id`` until ``shutdown``; returns the
    exit code (1 when the host refused the agent or stopped answering).

    ``bridge`` carries approvals over the wire (it must be the agent's approval service too). For the other
    settings, build the runner: ``anyio.run(HttpRunner(SessionRunner(...), base_url).run)``.
    """
    runner = HttpRunner(SessionRunner(processor, session_id=session_id, bridge=bridge), base_url, token=token)
    return anyio.run(runner.run)
