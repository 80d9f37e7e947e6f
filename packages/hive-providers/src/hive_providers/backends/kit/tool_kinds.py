"""A CLI's tools by the ACP kind whose hive tool name their ``tool_start`` carries, written by kind."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["by_kind"]


def by_kind(**tools: str) -> Mapping[str, str]:
    """Each tool named under a kind, names separated by spaces (``edit="Edit Write"``), to that kind
    (``{"Edit": "edit", "Write": "edit"}``), read-only."""
    return MappingProxyType({tool: kind for kind, names in tools.items() for tool in names.split()})
