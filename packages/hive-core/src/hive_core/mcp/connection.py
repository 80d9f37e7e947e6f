"""One MCP server: its connection, its tool list, and its restarts.

An :class:`McpConnection` is driven by :meth:`McpConnection.run`, a supervisor task that owns the transport (the
child process or the HTTP session) for its whole life: it connects, lists the tools, keeps the list fresh when
the server announces a change, and, when the server exits, drops the connection or stops answering, tears the
connection down and (with ``auto_reconnect``) connects again. Tool calls come from other tasks through
:meth:`McpConnection.call_tool`; a call that finds the connection lost or the server failing raises
:class:`McpServerError`, which the MCP tool turns into a failed outcome.

The ``mcp`` SDK is imported only here, and only when a connection is made.
"""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from contextlib import asynccontextmanager
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import Literal
from typing import TextIO
from typing import cast

import anyio
import anyio.abc
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream
from anyio.streams.memory import MemoryObjectSendStream

from hive_core.errors import HiveError
from hive_core.tracing import mcp_span

from .config import PluginConfig

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client._transport import TransportStreams
    from mcp.client.session import IncomingMessage
    from mcp.shared._stream_protocols import ReadStream
    from mcp.shared.message import SessionMessage
    from mcp.types import CallToolResult
    from mcp.types import Tool as ToolInfo

__all__ = [
    "CONNECT_TIMEOUT",
    "ConnectionState",
    "McpConnection",
    "McpServerError",
    "ProtocolMode",
]

CONNECT_TIMEOUT: Final = 60.0
"""Seconds a server may take to start and list its tools (a first ``npx`` run downloads its package)."""

MAX_RECONNECT_ATTEMPTS: Final = 5
"""Failed attempts in a row after which a plugin with ``auto_reconnect`` is given up (state ``failed``)."""

_LIST_PAGE_CAP: Final = 100
_CLIENT_NAME: Final = "hive"

ConnectionState = Literal["idle", "connecting", "ready", "reconnecting", "failed", "closed"]
"""Where a connection stands: ``idle`` (never started), ``connecting`` (first attempt), ``ready``,
``reconnecting`` (lost, trying again), ``failed`` (given up), ``closed`` (shut down)."""

ProtocolMode = Literal["auto", "legacy"]
"""How the protocol version is chosen: ``auto`` probes for the 2026 revision and falls back to the 2025
handshake; ``legacy`` always uses the handshake."""

_log = logging.getLogger(__name__)


class McpServerError(HiveError, RuntimeError):
    """The server could not answer a call: not connected, exited, stopped answering, or a protocol error."""


class McpConnection:
    """One plugin's server. Start it with :meth:`run` (in a task group); call its tools with :meth:`call_tool`."""

    def __init__(
        self,
        config: PluginConfig,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        mode: ProtocolMode = "auto",
        errlog: TextIO | None = None,
        on_tools_changed: Callable[[McpConnection], None] | None = None,
    ) -> None:
        self.config = config
        """The plugin as configured."""
        self.state: ConnectionState = "idle"
        """Where the connection stands."""
        self.error: str | None = None
        """Why the last attempt failed or the last connection was lost; ``None`` while connected."""
        self.tools: tuple[ToolInfo, ...] = ()
        """The server's tools as it last listed them (kept while it reconnects, so calls can wait for it)."""
        self.connection_count = 0
        """How many times a connection was made: 1 after the first, 2 after the first restart, ..."""
        self.protocol_version: str | None = None
        """The protocol revision the current (or last) connection speaks."""
        self.session_id: str | None = None
        """The MCP session id the server gave the current connection (a streamable HTTP server's
        ``mcp-session-id``); ``None`` over stdio or from a server that gives none."""
        self._connect_timeout = connect_timeout
        self._mode: ProtocolMode = mode
        self._errlog = errlog
        self._on_tools_changed = on_tools_changed
        self._client: Client | None = None
        self._attempt = 0
        self._lost = anyio.Event()
        self._changed = anyio.Event()
        self._refresh: MemoryObjectSendStream[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopping = False

    def __repr__(self) -> str:
        return f"McpConnection({self.config.name!r}, state={self.state!r})"

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, and stay connected until :meth:`stop`: the supervisor task of this connection.

        ``task_status.started()`` fires once the first attempt has settled (connected, failed, or failed and
        about to retry), so ``await group.start(connection.run)`` never waits out a retry loop. Returns when
        stopped, or when the server failed and is not (or no longer) restarted.
        """
        if self._scope is not None:
            raise RuntimeError(f"the connection to {self.config.name!r} is already running")
        started = False

        def settled() -> None:
            nonlocal started
            if not started:
                started = True
                task_status.started()

        self._stopping = False
        failures = 0
        try:
            with anyio.CancelScope() as self._scope:
                while not self._stopping:
                    self._set_state("connecting" if self.connection_count == 0 else "reconnecting")
                    if await self._connect_once(settled):
                        failures = 0
                    else:
                        failures += 1
                    if self._stopping:
                        break
                    if not self.config.auto_reconnect or failures >= MAX_RECONNECT_ATTEMPTS:
                        self._set_state("failed")
                        _log.warning("MCP plugin %r failed: %s", self.config.name, self.error)
                        break
                    self._set_state("reconnecting")
                    settled()
                    _log.warning("MCP plugin %r reconnecting: %s", self.config.name, self.error)
                    # Immediately after a lost connection, then backing off while attempts keep failing.
                    await anyio.sleep(0 if failures == 0 else min(0.5 * 2 ** (failures - 1), 30.0))
        finally:
            self._scope = None
            self._client = None
            if self._stopping:
                self._set_state("closed")
            settled()

    def stop(self) -> None:
        """Stop the supervisor: the connection is closed (a child process is ended) and :meth:`run` returns."""
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()
        else:
            self._set_state("closed")

    async def wait_for(self, predicate: Callable[[McpConnection], bool]) -> None:
        """Wait until ``predicate(self)`` holds; it is checked after every change of state or of the tools."""
        while not predicate(self):
            await self._changed.wait()

    # -- calls --------------------------------------------------------------------------------------------------

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        """Call the server's tool ``name``. Waits while the server is (re)connecting.

        Raises :class:`McpServerError` when it is not available or the call could not complete. A cancelled
        call is cancelled on the server too, and the server is then checked for an answer: one that stopped
        answering is restarted (or marked failed).
        """
        with mcp_span("tools/call", name, server=self.config.name, session_id=self.session_id):
            return await self._call_tool(name, arguments)

    async def _call_tool(self, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED

        client, attempt = await self._ready_client()
        try:
            return await client.call_tool(name, dict(arguments))
        except anyio.get_cancelled_exc_class():
            self._request_refresh(attempt)
            raise
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                self._mark_lost(attempt, "the server closed the connection")
                raise McpServerError(self._lost_text("closed the connection during the call")) from error
            raise McpServerError(
                f"the MCP server of plugin {self.config.name!r} answered with an error: {error.message}"
                f" (code {error.code})"
            ) from error
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as error:
            self._mark_lost(attempt, _describe(error))
            raise McpServerError(self._lost_text(f"failed during the call ({_describe(error)})")) from error
        except Exception as error:
            raise McpServerError(
                f"the call to the MCP server of plugin {self.config.name!r} failed: {_describe(error)}"
            ) from error

    async def _ready_client(self) -> tuple[Client, int]:
        while True:
            if self.state == "ready" and self._client is not None:
                return self._client, self._attempt
            if self.state in ("idle", "failed", "closed"):
                why = f": {self.error}" if self.error else ""
                raise McpServerError(
                    f"the MCP server of plugin {self.config.name!r} is not available ({self.state}){why}"
                )
            await self._changed.wait()

    def _lost_text(self, what: str) -> str:
        if self._stopping:
            then = "the plugins are shutting down"
        elif self.config.auto_reconnect:
            then = "it is being restarted"
        else:
            then = "it is not restarted (autoReconnect is off)"
        return f"the MCP server of plugin {self.config.name!r} {what}; {then}"

    # -- one connection -----------------------------------------------------------------------------------------

    async def _connect_once(self, settled: Callable[[], None]) -> bool:
        """Make one connection and serve it until it is lost; return whether it was made."""
        self._attempt += 1
        attempt = self._attempt
        self.session_id = None
        self._lost = anyio.Event()
        refresh_send, refresh_receive = anyio.create_memory_object_stream[None](1)
        self._refresh = refresh_send
        connected = False
        try:
            with anyio.CancelScope() as deadline, refresh_send, refresh_receive:
                deadline.deadline = anyio.current_time() + self._connect_timeout
                async with self._open(attempt) as client, anyio.create_task_group() as tasks:
                    self.protocol_version = client.protocol_version
                    await self._subscribe(client, tasks, attempt)
                    if client.server_capabilities.tools is not None:
                        await self._list_tools(client)
                    else:
                        self.tools = ()  # a server of resources or prompts only: nothing to offer
                    deadline.deadline = math.inf
                    connected = True
                    self.connection_count += 1
                    self.error = None
                    self._client = client
                    self._set_state("ready")
                    self._tools_changed()
                    settled()
                    tasks.start_soon(self._refresher, client, refresh_receive, attempt)
                    await self._lost.wait()
                    # New calls wait for the next connection (or fail) instead of joining one being torn down.
                    self._client = None
                    if not self._stopping:
                        self._set_state("reconnecting" if self.config.auto_reconnect else "failed")
                    tasks.cancel_scope.cancel()
            if deadline.cancelled_caught:
                self.error = (
                    f"the server did not connect and list its tools within {self._connect_timeout:g} s"
                )
        except Exception as error:
            if not connected:
                self.error = (
                    "the server closed the connection before it was ready (is the command an MCP server?)"
                    if _closed_connection(error)
                    else _describe(error)
                )
            elif not self._lost.is_set():
                self.error = _describe(error)
        finally:
            self._client = None
            self._refresh = None
        return connected

    @asynccontextmanager
    async def _open(self, attempt: int) -> AsyncGenerator[Client]:
        from mcp import Client
        from mcp.types import Implementation

        from hive_core import __version__

        config = self.config
        info = Implementation(name=_CLIENT_NAME, version=__version__)

        async def on_message(message: IncomingMessage) -> None:
            from mcp.types import ToolListChangedNotification

            if isinstance(message, ToolListChangedNotification):
                self._request_refresh(attempt)
            await anyio.lowlevel.checkpoint()

        def on_end() -> None:
            self._mark_lost(attempt, "the server closed the connection")

        if config.transport == "stdio":
            from mcp import StdioServerParameters
            from mcp import stdio_client

            from hive_core.child_processes import OWNER_VARIABLE
            from hive_core.child_processes import child_supervisor

            if not config.command:
                raise McpServerError(f"plugin {config.name!r} has no command to run")
            # The SDK spawns the server itself, in a session of its own: the owner marker in its environment
            # is what makes it (and what it starts) die with hive.
            supervisor = child_supervisor()
            environment = supervisor.environment(config.environment)
            parameters = StdioServerParameters(
                command=config.command,
                args=list(config.arguments),
                env=environment,
                cwd=config.working_directory,
            )
            transport = _WatchedTransport(stdio_client(parameters, errlog=self._errlog or sys.stderr), on_end)
            try:
                async with Client(
                    transport, mode=self._mode, cache=None, message_handler=on_message, client_info=info
                ) as client:
                    yield client
            finally:
                # The SDK stops the server and, when it is slow to exit, its process group; what the server
                # started elsewhere (another group or session) would outlive it.
                supervisor.kill_marked(environment[OWNER_VARIABLE])
            return

        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        if not config.url:
            raise McpServerError(f"plugin {config.name!r} has no url to connect to")
        # The SDK's own defaults: a long read timeout because a response may be a long-lived event stream.
        timeout = httpx2.Timeout(30.0, read=300.0)

        async def given_session(response: httpx2.Response) -> None:
            # The SDK keeps the id to itself; traces name it (``mcp.session.id``).
            if session_id := response.headers.get("mcp-session-id"):
                self.session_id = session_id

        hooks = {"response": [given_session]}
        async with httpx2.AsyncClient(
            headers=dict(config.headers), timeout=timeout, event_hooks=hooks
        ) as http:
            transport = _WatchedTransport(streamable_http_client(config.url, http_client=http), on_end)
            async with Client(
                transport, mode=self._mode, cache=None, message_handler=on_message, client_info=info
            ) as client:
                yield client

    async def _subscribe(self, client: Client, tasks: anyio.abc.TaskGroup, attempt: int) -> None:
        """On a 2026-era connection, change notifications come only through a listen stream: open one."""
        from mcp.types.version import MODERN_PROTOCOL_VERSIONS

        capability = client.server_capabilities.tools
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS and capability and capability.list_changed:
            await tasks.start(self._listen, client, attempt)

    async def _listen(
        self,
        client: Client,
        attempt: int,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        from mcp.client.subscriptions import SubscriptionLost

        acknowledged = False
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                acknowledged = True
                task_status.started()
                async for _ in subscription:
                    self._request_refresh(attempt)
        except SubscriptionLost:
            self._mark_lost(attempt, "the server dropped its change subscription")
        except Exception as error:
            _log.warning("MCP plugin %r: no change notifications (%s)", self.config.name, _describe(error))
        finally:
            if not acknowledged:
                task_status.started()

    async def _refresher(
        self, client: Client, requests: MemoryObjectReceiveStream[None], attempt: int
    ) -> None:
        """List the tools again on request: after a change notification, and after a stopped call, when an
        answer within the timeout also shows the server is not hung."""
        async for _ in requests:
            changed = False
            with anyio.move_on_after(self.config.timeout) as scope:
                try:
                    changed = await self._list_tools(client)
                except Exception as error:
                    self._mark_lost(attempt, f"listing the tools failed ({_describe(error)})")
                    return
            if scope.cancelled_caught:
                self._mark_lost(
                    attempt, f"the server stopped answering (no answer within {self.config.timeout:g} s)"
                )
                return
            if changed:
                self._tools_changed()

    async def _list_tools(self, client: Client) -> bool:
        tools: list[ToolInfo] = []
        cursor: str | None = None
        for _ in range(_LIST_PAGE_CAP):
            page = await client.list_tools(cursor=cursor)
            tools += page.tools
            cursor = page.next_cursor
            if cursor is None:
                break
        listed = tuple(tools)
        if listed == self.tools:
            return False
        self.tools = listed
        return True

    # -- signals ------------------------------------------------------------------------------------------------

    def _request_refresh(self, attempt: int) -> None:
        if attempt != self._attempt or self._refresh is None:
            return
        # Already queued (WouldBlock), or the connection is going away: either way there is nothing to add.
        with suppress(anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._refresh.send_nowait(None)

    def _mark_lost(self, attempt: int, reason: str) -> None:
        if attempt != self._attempt or self._lost.is_set():
            return
        if not self._stopping:
            self.error = reason
        self._lost.set()

    def _set_state(self, state: ConnectionState) -> None:
        self.state = state
        self._notify()

    def _tools_changed(self) -> None:
        if self._on_tools_changed is not None:
            self._on_tools_changed(self)
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()


class _WatchedTransport:
    """A transport whose read stream reports its end: how a server that exits while idle is noticed."""

    def __init__(
        self, inner: AbstractAsyncContextManager[TransportStreams], on_end: Callable[[], None]
    ) -> None:
        self._inner = inner
        self._on_end = on_end

    async def __aenter__(self) -> TransportStreams:
        read, write = await self._inner.__aenter__()
        return _WatchedReadStream(read, self._on_end), write

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, traceback)


class _WatchedReadStream:
    """Passes a transport's read stream through, calling ``on_end`` when it ends."""

    def __init__(self, inner: ReadStream[SessionMessage | Exception], on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        """The sender's context of the last item, where the transport keeps one (streamable HTTP does)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            return await self._inner.receive()
        except anyio.EndOfStream:
            self._on_end()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _members(error: BaseException) -> tuple[BaseException, ...]:
    if isinstance(error, BaseExceptionGroup):
        return cast("BaseExceptionGroup[BaseException]", error).exceptions
    return ()


def _leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: the task groups of the SDK wrap its failures."""
    members = _members(error)
    while members:
        error = members[0]
        members = _members(error)
    return error


def _describe(error: BaseException) -> str:
    """One line for a failure, looking through exception groups to the first real cause."""
    error = _leaf(error)
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    if isinstance(error, FileNotFoundError) and error.filename:
        text = f"cannot run {error.filename!r}: {error.strerror}"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _closed_connection(error: BaseException) -> bool:
    from mcp import MCPError
    from mcp.types import CONNECTION_CLOSED

    error = _leaf(error)
    return isinstance(error, MCPError) and error.code == CONNECTION_CLOSED
