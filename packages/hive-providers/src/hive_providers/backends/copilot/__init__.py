"""GitHub Copilot CLI on its own server protocol (``copilot --headless --stdio``): :class:`CopilotBackend`."""

from __future__ import annotations

from .backend import CopilotBackend

__all__ = ["CopilotBackend"]
