"""A CLI's tools by the ACP kind whose hive tool name their ``tool_start`` carries, written by kind."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

__all__ = ["by_kind"]


def by_kind(**tools: Iterable[str]) -> Mapping[str, str]:
    """Each tool named under a kind (``execute=("Bash",)``) to that kind (``{"Bash": "execute"}``), read-only."""
    return MappingProxyType({tool: kind for kind, names in tools.items() for tool in names})
