"""Claude Code on its own stream-json interface and control channel (see :mod:`.backend`)."""

from .backend import ClaudeCodeBackend
from .stream import StreamMapper

__all__ = ["ClaudeCodeBackend", "StreamMapper"]
