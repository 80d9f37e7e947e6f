"""Turning a tool's path argument into the file it names, and sizes into words."""

from __future__ import annotations

from pathlib import Path

from hive_core.permissions import resolve_path
from hive_core.tools import ToolContext

__all__ = ["format_size", "resolve"]


def resolve(ctx: ToolContext, path: str) -> Path:
    """The file ``path`` names for a call in ``ctx``: relative paths start at the working directory.

    The permission engine resolves paths with the same function (``..`` and symbolic links included). The searches
    start their walks here; what a tool reads or writes it opens through :mod:`._open`, which judges the object
    opened, not this name.
    """
    if not path.strip():
        raise ValueError("the path is empty")
    return resolve_path(ctx.working_dir, path)


def format_size(size: int) -> str:
    """A byte count for people: ``512 B``, ``1.5 KB``, ``2.0 MB``."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"
