"""MCP plugins: the tools of MCP servers, offered to the model as ``mcp__<plugin>__<tool>``.

The servers are configured in ``.hive/plugins.yaml`` (see :mod:`hive_core.mcp.config`) and run by
:class:`McpPlugins`, which connects them over stdio or streamable HTTP, keeps their tool lists fresh, restarts
them when they crash or hang, and stops them cleanly. Importing this package does not import the ``mcp`` SDK:
that happens when a server is first connected.
"""

from .config import DEFAULT_TIMEOUT_MS
from .config import PLUGIN_NAME_MAX_LENGTH
from .config import PLUGINS_FILE_NAMES
from .config import PluginConfig
from .config import PluginConfigError
from .config import PluginsConfig
from .config import PluginTransport
from .config import load_plugins_config
from .config import parse_plugins_document
from .config import project_plugin_settings
from .connection import CONNECT_TIMEOUT
from .connection import ConnectionState
from .connection import McpConnection
from .connection import McpServerError
from .connection import ProtocolMode
from .manager import McpPlugins
from .tools import MAX_TOOL_NAME_LENGTH
from .tools import TOOL_PREFIX
from .tools import McpTool
from .tools import mcp_tool_names
from .tools import outcome_of

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
