"""The in-process runner: drive a processor from Python and get event structs back."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from hive_protocol import Event
from hive_protocol import UserMessageRequest

from .feed import Feed
from .session import Processor
from .session import SessionRunner

__all__ = ["collect_turn", "open_turn"]


async def collect_turn(processor: Processor, request: UserMessageRequest | str) -> list[Event]:
    """Run one turn to its end and return its events (with every runner guarantee applied)."""
    events: list[Event] = []
    await SessionRunner(processor).run_turn(_request(request), events.append)
    return events


@asynccontextmanager
async def open_turn(
    processor: Processor, request: UserMessageRequest | str
) -> AsyncGenerator[AsyncIterator[Event]]:
    """Run one turn in the background and iterate its events as they come::

        async with open_turn(session, "hello") as events:
            async for event in events:
                ...

    Leaving the block early cancels the turn.
    """
    feed = Feed[Event]()
    runner = SessionRunner(processor)

    async def run() -> None:
        # The caller may leave the block early: the turn still closes its calls, into a feed nobody reads.
        try:
            await runner.run_turn(_request(request), feed.append)
        finally:
            feed.close()

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        yield feed.follow()
        group.cancel_scope.cancel()


def _request(request: UserMessageRequest | str) -> UserMessageRequest:
    return UserMessageRequest(content=request) if isinstance(request, str) else request
