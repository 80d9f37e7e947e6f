"""A feed of a turn's events: appended by the runner's sink, followed by any number of readers.

The one path from a runner to whoever reads its events in the same process: :func:`~hive_core.runners.open_turn`
iterates one, ``hive serve`` fans one out as Server-Sent Events. Appending costs a list append; a reader that
finds items waiting takes them without a pass through the event loop, and only a reader that waits makes the
feed allocate something to wake it with, so a burst of events costs what the sink costs, not an event-loop
round trip per event (``benchmarks/serve_load.py`` prints both).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Generic
from typing import TypeVar

import anyio

__all__ = ["Feed"]

T = TypeVar("T")


class Feed(Generic[T]):
    """An append-only sequence of items that readers follow from any position, until it is closed."""

    def __init__(self, items: list[T] | None = None) -> None:
        self.items: list[T] = [] if items is None else items
        """Every item appended, in order (readers index it: the item at ``items[i]`` is the ``i + 1``-th)."""
        self.closed = False
        """Whether nothing more will be appended."""
        self._wake: anyio.Event | None = None

    def append(self, item: T) -> None:
        """Add ``item`` and wake the readers that wait."""
        self.items.append(item)
        if self._wake is not None:  # only a waiting reader costs a wake-up
            self.notify()

    def close(self) -> None:
        """Say that nothing more will be appended: readers end once they have read everything."""
        self.closed = True
        self.notify()

    def notify(self) -> None:
        """Wake every reader waiting in :meth:`changed` (something happened, appended or not)."""
        wake, self._wake = self._wake, None
        if wake is not None:
            wake.set()

    async def changed(self) -> None:
        """Wait until the next :meth:`append`, :meth:`close` or :meth:`notify`."""
        if self._wake is None:
            self._wake = anyio.Event()
        await self._wake.wait()

    def follow(self, after: int = 0) -> AsyncIterator[T]:
        """The items after the first ``after``, each as it is appended, until the feed is closed."""
        return _Follower(self, after)


class _Follower(Generic[T]):
    """An iterator over a feed that awaits only when it has read everything appended so far."""

    def __init__(self, feed: Feed[T], after: int) -> None:
        self._feed = feed
        self._position = max(0, after)

    def __aiter__(self) -> _Follower[T]:
        return self

    async def __anext__(self) -> T:
        position = self._position
        items = self._feed.items
        if position < len(items):
            self._position = position + 1
            return items[position]
        return await self._next_appended()

    async def _next_appended(self) -> T:
        feed = self._feed
        while self._position >= len(feed.items):
            if feed.closed:
                raise StopAsyncIteration
            await feed.changed()
        self._position += 1
        return feed.items[self._position - 1]
