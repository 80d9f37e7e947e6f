"""The context size local inference uses on a machine of a given memory, as the seed sizes it."""

from __future__ import annotations

import os

__all__ = ["context_length_for_memory", "total_memory"]


def context_length_for_memory(total_bytes: int | None) -> int:
    """The seed's context size for a machine with ``total_bytes`` of memory (16384 when unknown)."""
    if not total_bytes or total_bytes <= 0:
        return 16384
    gib = total_bytes / 1024**3
    for floor, size in ((32, 131072), (16, 65536), (8, 32768), (4, 16384)):
        if gib >= floor:
            return size
    return 8192


def total_memory() -> int | None:
    """The machine's physical memory in bytes, or ``None`` when it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None
