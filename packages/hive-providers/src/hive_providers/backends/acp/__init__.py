"""The Agent Client Protocol client: one client for every CLI that speaks ACP.

:class:`~.backend.AcpBackend` runs turns over an :class:`~.connection.AcpConnection` (one CLI process and its
JSON-RPC connection, on the kit's :class:`~hive_providers.backends.kit.transport.ProcessTransport`);
:class:`~.updates.TurnMapper` turns ``session/update`` into hive events, and :class:`~.services.AcpClientServices`
answers the agent's requests under hive's rules. Importing this package imports none of them: only the connection
loads the ``acp`` library.
"""

from __future__ import annotations

import importlib
import typing

if typing.TYPE_CHECKING:
    from .backend import AcpBackend
    from .connection import AcpConnection
    from .services import AcpClientServices
    from .updates import TurnMapper

__all__ = [
    "AcpBackend",
    "AcpClientServices",
    "AcpConnection",
    "TurnMapper",
]

_HOMES = {
    "AcpBackend": ".backend",
    "AcpConnection": ".connection",
    "AcpClientServices": ".services",
    "TurnMapper": ".updates",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home, __name__), name)
