"""The ACP-shaped pieces a backend builds for :class:`~hive_providers.backends.kit.tool_calls.ToolCallTracker`
from a CLI's own tool events (Codex's items, Copilot's and OpenCode's tool events)."""

from __future__ import annotations

from typing import Any

__all__ = ["text_content"]


def text_content(text: str) -> list[dict[str, Any]]:
    """A tool call's ``content``: one text block."""
    return [{"type": "content", "content": {"type": "text", "text": text}}]
