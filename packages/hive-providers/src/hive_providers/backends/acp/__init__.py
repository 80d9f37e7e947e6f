"""The Agent Client Protocol client: one client for every CLI that speaks ACP.

:class:`~.backend.AcpBackend` runs turns over an :class:`~.connection.AcpConnection` (one CLI process and its
JSON-RPC connection, on :class:`~.transport.ProcessTransport`); :class:`~.updates.TurnMapper` turns
``session/update`` into hive events, :class:`~.tool_calls.ToolCallTracker` keeps tool-call identity, and
:class:`~.services.AcpClientServices` answers the agent's requests under hive's rules. Importing this package
imports none of them: the adapters of other wires reuse the tracker and the transport without loading the ``acp``
library, which only the connection needs.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
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

_HOMES = {
    "AcpBackend": ".backend",
    "AcpConnection": ".connection",
    "AcpClientServices": ".services",
    "ToolCallTracker": ".tool_calls",
    "ProcessTransport": ".transport",
    "TurnMapper": ".updates",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
