"""Text cut to a terminal's width, counted in cells (a CJK character takes two), so nothing wraps."""

from __future__ import annotations

from rich.cells import cell_len
from rich.cells import set_cell_size

__all__ = ["clip"]


def clip(text: str, cells: int) -> str:
    """``text`` cut to ``cells`` terminal cells, ``…`` marking the cut."""
    if cell_len(text) <= cells:
        return text
    return set_cell_size(text, max(0, cells - 1)).rstrip() + "…"
