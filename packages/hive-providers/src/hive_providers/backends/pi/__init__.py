"""Pi on its own JSON and RPC streams, with hive's ``ask_user_question`` extension (see :mod:`.backend`)."""

from .backend import PiBackend
from .events import PiEventMapper

__all__ = ["PiBackend", "PiEventMapper"]
