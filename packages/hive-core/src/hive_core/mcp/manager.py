"""All the MCP plugins of a project, as one async context manager that offers their tools."""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import MutableMapping
from pathlib import Path
from types import TracebackType
from typing import TextIO

import anyio
import anyio.abc

from hive_core.tools import Tool

from .config import PluginConfig
from .config import PluginsConfig
from .config import load_plugins_config
from .connection import CONNECT_TIMEOUT
from .connection import McpConnection
from .connection import ProtocolMode
from .tools import McpTool
from .tools import mcp_tool_names

__all__ = ["McpPlugins"]

_log = logging.getLogger(__name__)


class McpPlugins:
    """The MCP servers of a configuration, connected for as long as the context is open::

        async with McpPlugins.load(project_dir) as plugins:
            agent = Agent(client, tools=builtin_tools())
            plugins.sync_tools(agent.tools)  # adds the MCP tools, and keeps them current

    Entering starts every server when ``auto_connect`` is on and returns once each has connected or failed;
    leaving stops them all, child processes included. A server that never connected offers no tools; one that
    dropped keeps its tools offered while it is restarted (a call waits for it) or after it failed (a call
    reports why it cannot run). Tools are named ``mcp__<plugin>__<tool>`` (see
    :func:`~hive_core.mcp.tools.mcp_tool_names`).
    """

    def __init__(
        self,
        config: PluginsConfig | Iterable[PluginConfig],
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        mode: ProtocolMode = "auto",
        errlog: TextIO | None = None,
        on_tools_changed: Callable[[McpPlugins], None] | None = None,
    ) -> None:
        self.config = config if isinstance(config, PluginsConfig) else PluginsConfig(plugins=tuple(config))
        """The plugins configuration."""
        self.on_tools_changed = on_tools_changed
        """Called (synchronously) whenever :attr:`tools` changes: a server connected, reconnected, or announced
        a changed tool list."""
        self.connections: dict[str, McpConnection] = {}
        """Each plugin's connection, by plugin name, in configuration order."""
        for plugin in self.config.plugins:
            if plugin.name in self.connections:
                raise ValueError(f"two MCP plugins are named {plugin.name!r}")
            self.connections[plugin.name] = McpConnection(
                plugin,
                connect_timeout=connect_timeout,
                mode=mode,
                errlog=errlog,
                on_tools_changed=self._connection_changed,
            )
        self._tools: dict[str, McpTool] = {}
        self._synced: dict[int, tuple[MutableMapping[str, Tool], set[str]]] = {}
        self._group: anyio.abc.TaskGroup | None = None
        self._starting: dict[str, anyio.Event] = {}

    @classmethod
    def load(
        cls,
        project_dir: Path,
        *,
        home: Path | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        mode: ProtocolMode = "auto",
        errlog: TextIO | None = None,
        on_tools_changed: Callable[[McpPlugins], None] | None = None,
        trusted: bool | None = None,
    ) -> McpPlugins:
        """The plugins of the project in ``project_dir`` (see :func:`~hive_core.mcp.config.load_plugins_config`;
        the project's own file only when it is ``trusted``)."""
        return cls(
            load_plugins_config(project_dir, home=home, trusted=trusted),
            connect_timeout=connect_timeout,
            mode=mode,
            errlog=errlog,
            on_tools_changed=on_tools_changed,
        )

    @property
    def tools(self) -> list[Tool]:
        """Every connected server's tools, sorted by name."""
        return [self._tools[name] for name in sorted(self._tools)]

    def tool(self, name: str) -> McpTool | None:
        """The tool offered as ``name``, if there is one."""
        return self._tools.get(name)

    def sync_tools(self, registry: MutableMapping[str, Tool]) -> None:
        """Make ``registry`` (an agent's ``tools``, say) hold the current MCP tools, and keep it so.

        Adds new tools, replaces changed ones and removes the ones that went away, now and after every later
        change. Entries this object did not put there are left alone (a name held by another tool is not
        taken over).
        """
        key = id(registry)
        _, owned = self._synced.get(key, (registry, set[str]()))
        for name in list(owned):
            if name not in self._tools:
                if isinstance(registry.get(name), McpTool):
                    del registry[name]
                owned.discard(name)
        for name, item in self._tools.items():
            current = registry.get(name)
            if current is None or name in owned:
                registry[name] = item
                owned.add(name)
        self._synced[key] = (registry, owned)

    # -- lifecycle ----------------------------------------------------------------------------------------------

    async def __aenter__(self) -> McpPlugins:
        if self._group is not None:
            raise RuntimeError("the MCP plugins are already open")
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        if self.config.auto_connect:
            try:
                await self.connect_all()
            except BaseException as error:
                await self._close(type(error), error, error.__traceback__)
                raise
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool | None:
        return await self._close(exc_type, exc, traceback)

    async def _close(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> bool | None:
        group, self._group = self._group, None
        for connection in self.connections.values():
            connection.stop()
        if group is None:
            return None
        return await group.__aexit__(exc_type, exc, traceback)

    async def connect(self, name: str) -> McpConnection:
        """Start plugin ``name``'s server unless it is running; return once its first attempt has settled."""
        if self._group is None:
            raise RuntimeError("open the MCP plugins (async with) before connecting")
        connection = self.connections[name]
        starting = self._starting.get(name)
        if starting is not None:
            await starting.wait()
        elif connection.state in ("idle", "failed", "closed"):
            self._starting[name] = started = anyio.Event()
            try:
                await self._group.start(connection.run)
            finally:
                del self._starting[name]
                started.set()
        return connection

    async def connect_all(self) -> None:
        """Start every server that is not running, in parallel; return once each first attempt has settled."""
        async with anyio.create_task_group() as starting:
            for name in self.connections:
                starting.start_soon(self.connect, name)

    def status(self) -> Mapping[str, str]:
        """Each plugin's state, with the reason when it is not ready (for a doctor command or a status line)."""
        return {
            name: connection.state + (f": {connection.error}" if connection.error else "")
            for name, connection in self.connections.items()
        }

    # -- tools --------------------------------------------------------------------------------------------------

    def _connection_changed(self, connection: McpConnection) -> None:
        listed = [(c, info) for c in self.connections.values() if c.connection_count for info in c.tools]
        names = mcp_tool_names((c.config.name, info.name) for c, info in listed)
        previous = self._tools
        tools: dict[str, McpTool] = {}
        for c, info in listed:
            name = names[c.config.name, info.name]
            old = previous.get(name)
            tools[name] = (
                old
                if old is not None and old.connection is c and old.info == info
                else McpTool(c, info, name)
            )
        self._tools = tools
        for registry, _ in list(self._synced.values()):
            self.sync_tools(registry)
        if self.on_tools_changed is not None:
            try:
                self.on_tools_changed(self)
            except Exception:
                # The host's callback must not take a server connection down with it.
                _log.exception("the on_tools_changed callback of the MCP plugins failed")
