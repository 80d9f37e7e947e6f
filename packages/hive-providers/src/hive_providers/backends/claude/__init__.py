"""Claude Code on its own stream-json interface and control channel (see :mod:`.backend`)."""

from .backend import STREAM_ARGUMENTS, ClaudeCodeBackend
from .stream import StreamMapper

__all__ = ["STREAM_ARGUMENTS", "ClaudeCodeBackend", "StreamMapper"]
