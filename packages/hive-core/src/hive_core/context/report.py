"""What a prepared request carries: the messages to send, their estimate, and any compaction."""

from __future__ import annotations

import msgspec

from hive_core.messages import Message

from .window import ContextWindow

__all__ = ["CompactionReport", "PreparedRequest"]


class CompactionReport(msgspec.Struct, frozen=True):
    """One compaction: what it did to the request."""

    messages_before: int
    """The conversation's messages in the request before (summary and reminder not counted)."""
    messages_after: int
    """The conversation's messages left in it after."""
    tokens_before: int
    """Estimated tokens before."""
    tokens_after: int
    """Estimated tokens after."""
    summarized: bool
    """``True``: the model wrote a summary; ``False``: the ``[N earlier messages omitted]`` marker stands in."""

    @property
    def pruned(self) -> int:
        """Messages the summary (or marker) replaced."""
        return self.messages_before - self.messages_after

    def describe(self) -> str:
        """E.g. ``compacted 140 messages into a summary, 61,200 → 38,900 tokens``."""
        into = "into a summary" if self.summarized else "(no summary: omitted)"
        return (
            f"compacted {self.pruned:,} {'message' if self.pruned == 1 else 'messages'} {into}, "
            f"{self.tokens_before:,} → {self.tokens_after:,} tokens"
        )


class PreparedRequest(msgspec.Struct, frozen=True):
    """What to send for one request; the conversation itself is never modified."""

    messages: list[Message]
    """The messages to send."""
    estimated_tokens: int
    """The accounting's figure for these messages."""
    window: ContextWindow
    """The window they were prepared for."""
    compaction: CompactionReport | None = None
    """The compaction this request caused, if any."""
