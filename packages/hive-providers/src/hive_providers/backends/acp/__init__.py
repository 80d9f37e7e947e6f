"""The Agent Client Protocol client: one client for every CLI that speaks ACP.

:class:`~.backend.AcpBackend` runs turns over an :class:`~.connection.AcpConnection` (one CLI process and its
JSON-RPC connection, on :class:`~.transport.ProcessTransport`); :class:`~.updates.TurnMapper` turns
``session/update`` into hive events, :class:`~.tool_calls.ToolCallTracker` keeps tool-call identity, and
:class:`~.services.AcpClientServices` answers the agent's requests under hive's rules.
"""

from .backend import AcpBackend
from .connection import AcpConnection
from .services import AcpClientServices
from .tool_calls import ToolCallTracker
from .transport import ProcessTransport
from .updates import TurnMapper

__all__ = [
    "AcpBackend",
    "AcpClientServices",
    "AcpConnection",
    "ProcessTransport",
    "ToolCallTracker",
    "TurnMapper",
]
