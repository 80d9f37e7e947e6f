"""Codex CLI on its app-server (JSON-RPC over stdio), or ``codex exec --json`` where that is unavailable:
:class:`~.backend.CodexBackend`.

:class:`~.app_server.AppServerConnection` is one running ``codex app-server`` and its JSON-RPC connection (acp's
``Connection``, as for ACP and Copilot),
:class:`~.items.TurnItems` maps a turn's notifications onto hive events, :class:`~.exec_events.ExecTurn` the
lines of one ``codex exec --json`` run (:mod:`.exec_mode` starts it), :class:`~.subagents.SubThreads` the
sub-agents of a thread onto ``agent_work`` snapshots; :func:`~hive_providers.backends.offline.codex_recipe`
writes the private ``config.toml`` for a local endpoint.
"""

from .app_server import AppServerConnection
from .app_server import AppServerError
from .app_server import AppServerUnavailable
from .app_server import RpcError
from .backend import CodexBackend
from .exec_events import ExecTurn
from .items import TurnItems
from .subagents import SubThreads

__all__ = [
    "AppServerConnection",
    "AppServerError",
    "AppServerUnavailable",
    "CodexBackend",
    "ExecTurn",
    "RpcError",
    "SubThreads",
    "TurnItems",
]
