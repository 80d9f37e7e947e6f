"""Running ``hive serve``'s sessions on a distributed engine, so that any number of workers on any machines serve them.

Without an engine ``hive serve`` runs each session in its own process (see :mod:`hive_cli.serve`). With one, the
server only takes requests and writes them on: the engine keeps each session as a durable workflow whose turns
run on whichever ``hive worker`` is free, and the events every turn writes go to the PostgreSQL store, where every
front end reads them. :class:`Engine` is what the server needs of an engine; Temporal
(:mod:`hive_cli.engine.temporal`) is the one hive ships.
"""

from __future__ import annotations

from .address import EngineAddress
from .address import EngineAddressError
from .contract import Engine
from .wire import SessionSpec

__all__ = ["Engine", "EngineAddress", "EngineAddressError", "SessionSpec"]
