"""Codex CLI on its app-server (JSON-RPC over stdio): :class:`~.backend.CodexBackend`.

:class:`~.app_server.AppServerConnection` is one running ``codex app-server`` and its JSON-RPC connection,
:class:`~.items.TurnItems` maps a turn's notifications onto hive events;
:func:`~hive_providers.backends.offline.codex_recipe` writes the private ``config.toml`` for a local endpoint.
"""

from .app_server import AppServerConnection, AppServerError, RpcError
from .backend import CodexBackend
from .items import TurnItems

__all__ = ["AppServerConnection", "AppServerError", "CodexBackend", "RpcError", "TurnItems"]
