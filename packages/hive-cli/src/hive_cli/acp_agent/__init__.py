"""``hive acp``: hive, or any backend behind it, as an Agent Client Protocol agent on stdio (see :mod:`.agent`)."""

from __future__ import annotations

from .agent import MODES
from .agent import HiveAcpAgent

__all__ = ["MODES", "HiveAcpAgent"]
