"""One ``opencode serve`` on a loopback port, and the HTTP routes hive uses of it (OpenCode 1.18).

The server is started through :func:`~hive_core.child_processes.open_child` with ``--port 0 --hostname
127.0.0.1``: OpenCode tries its default port, then a free one, and prints the URL it listens on (``opencode
server listening on http://127.0.0.1:PORT``). Its output goes to a log file in the private home, read for that
line and quoted when the server fails; ``GET /global/health`` answering ``{"healthy": true}`` ends the start.
One :class:`httpx2.AsyncClient` serves every route; the SSE stream (``GET /event``) is opened per turn.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
from collections.abc import AsyncGenerator
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import httpx2

from hive_core.child_processes import SupervisedProcess
from hive_core.child_processes import open_child
from hive_protocol import excerpt
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.json_values import as_object

__all__ = ["OpenCodeServer", "ServerGone", "ServerReply"]

_LISTENING: Final = re.compile(r"listening on (http://[0-9.:\[\]a-z]+)")
_POLL: Final = 0.05
_LOG_QUOTED: Final = 2000
_REQUEST_TIMEOUT: Final = 30.0


class ServerGone(Exception):
    """The server exited, or stopped answering: the message quotes the end of its log."""


class ServerReply:
    """A route's answer: its status and its JSON body (``None`` when it had none or it was not JSON)."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        """The HTTP status."""
        self.body = body
        """The decoded JSON body."""

    @property
    def ok(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status < 300


class OpenCodeServer:
    """A running ``opencode serve`` (see the module); :meth:`start` it, :meth:`stop` it."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        log: Path,
        password: str | None = None,
    ) -> None:
        self.command = list(command)
        """The command line that starts it."""
        self.cwd = cwd
        """The project directory it serves."""
        self.env = dict(env)
        """Its environment."""
        self.log = log
        """The file its stdout and stderr go to."""
        self.url: str | None = None
        """The base URL it listens on, once started."""
        self.process: SupervisedProcess | None = None
        """Its process (the leader of its process group)."""
        self.cli: CliProcess | None = None
        """Its process's life: how it is settled and stopped (its output goes to :attr:`log`, not a pipe)."""
        self.password = password
        """The server's ``OPENCODE_SERVER_PASSWORD`` (HTTP basic auth as ``opencode``), if it has one."""
        self._client: httpx2.AsyncClient | None = None

    @property
    def running(self) -> bool:
        """Started and not exited."""
        return self.process is not None and self.process.returncode is None and self._client is not None

    async def start(self, timeout: float) -> None:
        """Start the server and wait (at most ``timeout`` seconds) until it is healthy; raises
        :class:`ServerGone` (it exited) or :class:`TimeoutError`."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as sink:
            self.process = await open_child(
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
            )
        self.cli = CliProcess("opencode serve", self.process)
        with anyio.fail_after(timeout):
            while self.url is None:
                self._check_alive("at start")
                found = _LISTENING.search(self.log_text())
                if found is not None:
                    self.url = found.group(1)
                else:
                    await anyio.sleep(_POLL)
            auth = ("opencode", self.password) if self.password else None
            self._client = httpx2.AsyncClient(
                base_url=self.url, timeout=_REQUEST_TIMEOUT, trust_env=False, auth=auth
            )
            while True:
                self._check_alive("at start")
                with contextlib.suppress(httpx2.HTTPError):
                    reply = await self._client.get("/global/health")
                    if reply.status_code == 200 and _json(reply.content, {}).get("healthy") is True:
                        return
                await anyio.sleep(_POLL)

    def log_text(self) -> str:
        """What the server printed so far."""
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def describe(self, what: str) -> str:
        """``what``, the exit status and the end of the server's log."""
        parts = [what]
        code = self.process.returncode if self.process is not None else None
        if code is not None:
            parts.append(f"exit status {code}" if code >= 0 else f"killed by signal {-code}")
        tail = self.log_text().strip()
        if tail:
            parts.append(f"output: {excerpt(tail[-_LOG_QUOTED:], _LOG_QUOTED)}")
        return "; ".join(parts)

    def _check_alive(self, when: str) -> None:
        if self.process is None or self.process.returncode is not None:
            raise ServerGone(self.describe(f"opencode serve exited {when}"))

    async def request(self, method: str, path: str, body: object = None) -> ServerReply:
        """Call one route; raises :class:`ServerGone` when the server cannot be reached."""
        client = self._client
        if client is None:
            raise ServerGone(self.describe("opencode serve is not running"))
        try:
            reply = (
                await client.request(method, path, json=body)
                if body is not None
                else await client.request(method, path)
            )
        except httpx2.HTTPError as exc:
            raise ServerGone(self.describe(f"opencode serve did not answer {method} {path}: {exc}")) from exc
        return ServerReply(reply.status_code, _json(reply.content, None))

    async def events(self) -> AsyncGenerator[dict[str, Any]]:
        """The server's SSE event stream (``GET /event``), one decoded ``data:`` object at a time; lines that
        are not JSON objects are skipped. Ends (raising :class:`ServerGone`) when the stream breaks."""
        client = self._client
        if client is None:
            raise ServerGone(self.describe("opencode serve is not running"))
        try:
            async with client.stream("GET", "/event", timeout=httpx2.Timeout(None)) as response:
                async for line in response.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    event = as_object(_json(line[5:].encode(), None))
                    if event is not None:
                        yield event
        except httpx2.HTTPError as exc:
            await self._settle()
            raise ServerGone(self.describe(f"the event stream of opencode serve broke: {exc}")) from exc
        await self._settle()
        raise ServerGone(self.describe("the event stream of opencode serve ended"))

    async def _settle(self) -> None:
        """After the stream ended: give a dying server a moment to exit, so the message has its status."""
        if self.cli is not None:
            await self.cli.settle(stderr_wait=0.0)

    async def stop(self, grace: float) -> None:
        """Close the client, SIGINT the process group, wait ``grace`` seconds, kill the group and every process
        carrying the child's mark. Leaves no process behind."""
        with anyio.CancelScope(shield=True):
            if self._client is not None:
                with contextlib.suppress(Exception):
                    await self._client.aclose()
                self._client = None
            if self.cli is not None:
                await self.cli.stop(grace)


def _json(content: bytes, default: Any) -> Any:
    try:
        return json.loads(content) if content else default
    except ValueError:
        return default
