"""OpenCode over ``opencode serve``: its HTTP routes and SSE events, questions, permissions and subagents."""

from .backend import OpenCodeServeBackend

__all__ = ["OpenCodeServeBackend"]
