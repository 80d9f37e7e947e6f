"""MCP plugins: the tools of MCP servers, offered to the model as ``mcp__<plugin>__<tool>``.

The servers are configured in ``.hive/plugins.yaml`` (see :mod:`hive_core.mcp.config`) and run by
:class:`McpPlugins`, which connects them over stdio or streamable HTTP, keeps their tool lists fresh, restarts
them when they crash or hang, and stops them cleanly. Importing this package does not import the ``mcp`` SDK:
that happens when a server is first connected.
"""

from .config import (
    DEFAULT_TIMEOUT_MS,
    PLUGIN_NAME_MAX_LENGTH,
    PLUGINS_FILE_NAMES,
    PluginConfig,
    PluginConfigError,
    PluginsConfig,
    PluginTransport,
    load_plugins_config,
    parse_plugins_document,
    project_plugin_settings,
)
from .connection import CONNECT_TIMEOUT, ConnectionState, McpConnection, McpServerError, ProtocolMode
from .manager import McpPlugins
from .tools import MAX_TOOL_NAME_LENGTH, TOOL_PREFIX, McpTool, mcp_tool_names, outcome_of

__all__ = [
    "CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT_MS",
    "MAX_TOOL_NAME_LENGTH",
    "PLUGINS_FILE_NAMES",
    "PLUGIN_NAME_MAX_LENGTH",
    "TOOL_PREFIX",
    "ConnectionState",
    "McpConnection",
    "McpPlugins",
    "McpServerError",
    "McpTool",
    "PluginConfig",
    "PluginConfigError",
    "PluginTransport",
    "PluginsConfig",
    "ProtocolMode",
    "load_plugins_config",
    "mcp_tool_names",
    "outcome_of",
    "parse_plugins_document",
    "project_plugin_settings",
]
