"""A hard backstop against overflowing the model's context window."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence
from typing import Final
from typing import Protocol
from typing import runtime_checkable

from .chat import ChatClient
from .chat import ChatOptions
from .chat import ChatUpdate
from .chat import FinishUpdate
from .chat import TextUpdate
from .chat import WrappingChatClient
from .context.tokens import estimate_tokens
from .context.window import DEFAULT_CONTEXT_WINDOW
from .context.window import ContextWindow
from .context.window import resolve_window
from .messages import Message

__all__ = ["BUDGET_EXHAUSTED_TEXT", "RequestBudget", "TokenBudgetChatClient", "admits", "estimate_tokens"]

BUDGET_EXHAUSTED_TEXT: Final = (
    "[partial response: token budget exhausted before the assistant could finish — the conversation history "
    "reached the model's context window. Please shorten your message or start a new conversation.]"
)
"""What the model "says" instead of being sent a request that cannot fit."""


@runtime_checkable
class RequestBudget(Protocol):
    """A client that refuses requests over a budget; the loop asks it first, and compacts what it would refuse."""

    def admits(self, messages: Sequence[Message], options: ChatOptions) -> bool:
        """Whether a request of ``messages`` would be sent."""
        ...


def admits(client: ChatClient, messages: Sequence[Message], options: ChatOptions) -> bool:
    """Whether ``client`` would send the request: always, unless it is a :class:`RequestBudget` that refuses it."""
    return not isinstance(client, RequestBudget) or client.admits(messages, options)


class TokenBudgetChatClient(WrappingChatClient):
    """Wraps a client: a request estimated above ``threshold`` of the window is not sent.

    Instead the turn gets a short length-limited reply saying why, so the user sees a graceful stop rather than
    a provider's overflow error. The window is the one compaction uses
    (:func:`~hive_core.context.resolve_window`): the inner client's (:attr:`Capabilities.context_window`), else
    ``configured_window`` (``compaction.maxContextTokens``), else ``default_window``. The loop asks
    :meth:`admits` before each request and compacts the history rather than have it refused.
    """

    def __init__(
        self,
        inner: ChatClient,
        *,
        threshold: float = 0.8,
        configured_window: int | None = None,
        default_window: int = DEFAULT_CONTEXT_WINDOW,
        refuse_on_default: bool = True,
    ) -> None:
        if not 0 < threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        if default_window <= 0:
            raise ValueError(f"default_window must be positive, got {default_window}")
        if configured_window is not None and configured_window <= 0:
            raise ValueError(f"configured_window must be positive, got {configured_window}")
        super().__init__(inner)
        self.threshold = threshold
        self.configured_window = configured_window
        self.default_window = default_window
        self.refuse_on_default = refuse_on_default
        """Whether to refuse against ``default_window`` when no window is known; off, such requests go to the
        server, whose overflow the loop compacts and retries (``compaction.compactOnOverflow``)."""

    @property
    def window(self) -> ContextWindow:
        """The window the budget is measured against, and where it came from."""
        return resolve_window(self.inner.capabilities, self.configured_window, self.default_window)

    @property
    def budget(self) -> int:
        """The most tokens a request may be estimated at."""
        return int(self.window.tokens * self.threshold)

    def admits(self, messages: Sequence[Message], options: ChatOptions) -> bool:
        """Whether a request of ``messages`` fits the budget (and would be sent)."""
        if not self.refuse_on_default and self.window.source == "default":
            return True
        return estimate_tokens(messages, options) <= self.budget

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream from the inner client, or the budget reply when the request would not fit."""
        if not self.admits(messages, options):
            yield TextUpdate(BUDGET_EXHAUSTED_TEXT)
            yield FinishUpdate("length")
            return
        async for update in self.inner.stream(messages, options):
            yield update
