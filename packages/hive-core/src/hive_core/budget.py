"""A hard backstop against overflowing the model's context window."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Final

from .chat import Capabilities, ChatClient, ChatOptions, ChatUpdate, FinishUpdate, TextUpdate
from .messages import Message, TextPart, ThinkingPart, ToolCallPart

__all__ = ["BUDGET_EXHAUSTED_TEXT", "TokenBudgetChatClient", "estimate_tokens"]

BUDGET_EXHAUSTED_TEXT: Final = (
    "[partial response: token budget exhausted before the assistant could finish — the conversation history "
    "reached the model's context window. Please shorten your message or start a new conversation.]"
)
"""What the model "says" instead of being sent a request that cannot fit."""


def estimate_tokens(messages: Sequence[Message], options: ChatOptions | None = None) -> int:
    """A cheap, provider-independent estimate: characters / 4, over everything that would be sent."""
    chars = 0
    for message in messages:
        for part in message.parts:
            if isinstance(part, TextPart | ThinkingPart):
                chars += len(part.text)
            elif isinstance(part, ToolCallPart):
                chars += len(part.name) + len(part.arguments_text) + 4 * len(part.arguments or {})
            else:
                chars += len(part.content)
    if options is not None and options.instructions:
        chars += len(options.instructions)
    return chars // 4


class TokenBudgetChatClient:
    """Wraps a client: a request estimated above ``threshold`` of the window is not sent.

    Instead the turn gets a short length-limited reply saying why, so the user sees a graceful stop rather than
    a provider's overflow error. The window is the inner client's (:attr:`Capabilities.context_window`), else
    ``default_window``.
    """

    def __init__(self, inner: ChatClient, *, threshold: float = 0.8, default_window: int = 4096) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if default_window <= 0:
            raise ValueError(f"default_window must be positive, got {default_window}")
        self.inner = inner
        self.threshold = threshold
        self.default_window = default_window

    @property
    def capabilities(self) -> Capabilities:
        """The inner client's."""
        return self.inner.capabilities

    @property
    def window(self) -> int:
        """The window the budget is measured against."""
        return self.inner.capabilities.context_window or self.default_window

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream from the inner client, or the budget reply when the request would not fit."""
        if estimate_tokens(messages, options) > self.window * self.threshold:
            yield TextUpdate(BUDGET_EXHAUSTED_TEXT)
            yield FinishUpdate("length")
            return
        async for update in self.inner.stream(messages, options):
            yield update
