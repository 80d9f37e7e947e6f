"""Retry and provider fallback around chat clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence

import anyio

from hive_protocol import FallbackCategory
from hive_protocol import FallbackEvent
from hive_protocol import FallbackKind

from .chat import AsyncClosable
from .chat import Capabilities
from .chat import ChatClient
from .chat import ChatOptions
from .chat import ChatUpdate
from .chat import NoticeUpdate
from .chat import WrappingChatClient
from .chat import probed_capabilities
from .failures import ChatError
from .failures import classify
from .failures import fallback_category
from .messages import Message

__all__ = ["FallbackChatClient", "LazyChatClient", "RetryingChatClient"]

_RETRIED: tuple[type[BaseException], ...] = (ChatError, TimeoutError, ConnectionError)
"""The failures a retry or a fallback considers; any other exception fails the request at once."""


def _category(exc: BaseException) -> FallbackCategory:
    return fallback_category(classify(exc))


def _retryable(category: FallbackCategory) -> bool:
    """Whether a failure of ``category`` may pass on a second try: a transient one or a rate limit."""
    return category in ("transient", "rate_limit")


def _delay(exc: BaseException, attempt: int, base_delay: float, max_delay: float) -> float:
    """How long to wait before try ``attempt + 1``: the provider's ``retry_after`` when it gave one, else an
    exponential backoff; never more than ``max_delay``."""
    if isinstance(exc, ChatError) and exc.retry_after is not None:
        return min(exc.retry_after, max_delay)
    return min(base_delay * 2 ** (attempt - 1), max_delay)


class FallbackChatClient:
    """Tries each provider in order, retrying classified failures, and reports each step as a ``fallback`` event.

    A transient or rate-limit failure is retried on the same provider up to ``max_attempts`` times (waiting the
    provider's ``retry_after`` when it gave one, else an exponential backoff); an auth failure, or a provider out
    of attempts, moves to the next provider; a fatal failure (a rejected request, a context overflow) is raised
    at once, since another provider would reject it too. Only a request that has not streamed anything yet is
    retried: a stream that fails midway fails the turn, because the client has already shown part of it.

    A provider the chain moved past (its ``fallback`` event) is dead for the rest of the client's life: later
    requests skip it without asking it again and without a further event, so one session does not pay a dead
    provider's failures on every turn. The last provider is never skipped (there is nothing after it).
    """

    def __init__(
        self,
        clients: Sequence[ChatClient],
        *,
        max_attempts: int = 3,
        base_delay: float = 1.0,
        max_delay: float = 30.0,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        if not clients:
            raise ValueError("FallbackChatClient needs at least one client")
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        self.clients = list(clients)
        self.max_attempts = max_attempts
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep
        self.dead: set[int] = set()
        """The indexes of the providers found dead (skipped by every later request)."""

    @property
    def capabilities(self) -> Capabilities:
        """What every provider not found dead can do (any of them may answer): tools and streamed calls only when
        all take them, thinking when any returns it, and the smallest window."""
        return _combined([client.capabilities for client in self._alive()])

    async def probe_capabilities(self) -> Capabilities:
        """Let every provider not found dead that can ask its server do so, then combine what they report."""
        return _combined([await probed_capabilities(client) for client in self._alive()])

    def _alive(self) -> list[ChatClient]:
        return [client for index, client in enumerate(self.clients) if index not in self.dead]

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream from the first provider that answers."""
        total = len(self.clients)
        for index, client in enumerate(self.clients):
            if index in self.dead:
                continue
            attempt = 0
            while True:
                attempt += 1
                started = False
                try:
                    async for update in client.stream(messages, options):
                        started = True
                        yield update
                    return
                except _RETRIED as exc:
                    if started:
                        raise
                    category = _category(exc)
                    last_provider = index == total - 1
                    retry = _retryable(category) and attempt < self.max_attempts
                    if category == "fatal" or (not retry and last_provider):
                        yield NoticeUpdate(self._event("exhausted", index, category, exc, attempt))
                        raise
                    if retry:
                        yield NoticeUpdate(self._event("retry", index, category, exc, attempt))
                        await self._sleep(_delay(exc, attempt, self.base_delay, self.max_delay))
                        continue
                    self.dead.add(index)
                    yield NoticeUpdate(self._event("fallback", index, category, exc, attempt))
                    break

    async def aclose(self) -> None:
        """Close every provider's client that holds connections."""
        for client in self.clients:
            if isinstance(client, AsyncClosable):
                await client.aclose()

    def _event(
        self, kind: FallbackKind, index: int, category: FallbackCategory, exc: BaseException, attempt: int
    ) -> FallbackEvent:
        return FallbackEvent(
            kind=kind,
            provider_index=index,
            total_providers=len(self.clients),
            category=category,
            message=str(exc) or type(exc).__name__,
            attempt=attempt,
            max_attempts=self.max_attempts,
        )


class RetryingChatClient(WrappingChatClient):
    """Retries a request of one client that failed before it streamed anything, quietly (no event): up to
    ``retries`` more times for a transient failure or a rate limit, waiting the provider's ``retry_after`` when
    it gave one (at most ``max_delay``), else a backoff from ``base_delay``. Each try is a request of the inner
    client of its own, so a traced client under it records one ``chat`` span per HTTP request."""

    def __init__(
        self,
        inner: ChatClient,
        *,
        retries: int,
        base_delay: float = 0.5,
        max_delay: float = 60.0,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        super().__init__(inner)
        self.retries = max(retries, 0)
        """Tries after the first (none for a negative ``retries``)."""
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._sleep = sleep

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Stream from the inner client, trying again while nothing was streamed and the failure may pass."""
        attempt = 0
        while True:
            attempt += 1
            started = False
            try:
                async for update in self.inner.stream(messages, options):
                    started = True
                    yield update
                return
            except _RETRIED as exc:
                if started or attempt > self.retries or not _retryable(_category(exc)):
                    raise
                await self._sleep(_delay(exc, attempt, self.base_delay, self.max_delay))


class LazyChatClient:
    """A client built by ``connect`` only when its first request is streamed: a fallback provider that is never
    needed costs no import and no connection.

    Until then it reports ``assumed`` capabilities (by default none that would narrow a
    :class:`FallbackChatClient`'s: tools taken, no window known), and probing does not build it.
    """

    def __init__(self, connect: Callable[[], ChatClient], *, assumed: Capabilities | None = None) -> None:
        self._connect = connect
        self._assumed = assumed or Capabilities()
        self.client: ChatClient | None = None
        """The client, once a request built it."""

    @property
    def capabilities(self) -> Capabilities:
        """The built client's, else the assumed ones."""
        return self.client.capabilities if self.client is not None else self._assumed

    async def probe_capabilities(self) -> Capabilities:
        """The built client's after it asked its server; the assumed ones while it is not built."""
        return await probed_capabilities(self.client) if self.client is not None else self._assumed

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        """Build the client if needed, then stream from it."""
        if self.client is None:
            self.client = self._connect()
        async for update in self.client.stream(messages, options):
            yield update

    async def aclose(self) -> None:
        """Close the client if it was built and holds connections."""
        if isinstance(self.client, AsyncClosable):
            await self.client.aclose()


def _combined(each: Sequence[Capabilities]) -> Capabilities:
    """What every provider can do (any of them may answer): tools and streamed calls only when all take them,
    thinking when any returns it, and the smallest known window with its source."""
    sized = [c for c in each if c.context_window]
    smallest = min(sized, key=lambda c: c.context_window or 0) if sized else None
    return Capabilities(
        tools=all(c.tools for c in each),
        streamed_tool_calls=all(c.streamed_tool_calls for c in each),
        thinking=any(c.thinking for c in each),
        context_window=smallest.context_window if smallest else None,
        context_window_source=smallest.context_window_source if smallest else None,
    )
