"""Generated session ids: ``<unix milliseconds in hex>-<8 random hex digits>``, so they sort by creation."""

from __future__ import annotations

import secrets
import time

__all__ = ["new_session_id"]


def new_session_id(now: float | None = None) -> str:
    """A fresh id for a session created at ``now`` (Unix seconds; the current time when ``None``)."""
    millis = int((time.time() if now is None else now) * 1000)
    return f"{millis:x}-{secrets.token_hex(4)}"
