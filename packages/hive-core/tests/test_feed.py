"""The feed a runner's events go through to in-process readers (``open_turn``, ``hive serve``'s streams)."""

from __future__ import annotations

import anyio
import pytest
from core_harness import WAIT

from hive_core.runners import Feed

pytestmark = pytest.mark.anyio


async def _read_all(feed: Feed[int], after: int, into: list[int]) -> None:
    async for item in feed.follow(after):
        into.append(item)


async def test_readers_from_any_position_get_every_later_item_once_and_end_when_it_closes() -> None:
    feed = Feed[int]()
    feed.append(1)
    feed.append(2)
    whole: list[int] = []
    resumed: list[int] = []
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(_read_all, feed, 0, whole)
            group.start_soon(_read_all, feed, 1, resumed)
            await anyio.wait_all_tasks_blocked()
            feed.append(3)
            await anyio.wait_all_tasks_blocked()
            feed.append(4)
            feed.append(5)
            feed.close()
    assert whole == [1, 2, 3, 4, 5]
    assert resumed == [2, 3, 4, 5]


async def test_a_reader_past_the_end_of_a_closed_feed_reads_nothing() -> None:
    feed = Feed[int]()
    feed.append(1)
    feed.close()
    late: list[int] = []
    with anyio.fail_after(WAIT):
        await _read_all(feed, 5, late)
    assert late == []


async def test_notify_wakes_a_waiting_reader_without_an_item() -> None:
    feed = Feed[int]()
    woken: list[bool] = []

    async def wait() -> None:
        await feed.changed()
        woken.append(True)

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            assert woken == []
            feed.notify()
    assert woken == [True]
    assert feed.items == []
