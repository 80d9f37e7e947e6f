"""The session pool of seeds-upstream §E.5, with tiny entries that record being closed: warm hits, fingerprint
changes, eviction at the maximum, exhaustion, idle reaping on an injected clock, faults, one execution per key,
anonymous entries and a disabled pool, with the counters checked after each step."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager

import anyio
import pytest

from hive_core.errors import UserError
from hive_providers.backends import AcpSessionPool
from hive_providers.backends import PoolSettings
from hive_providers.backends import PoolStats
from hive_providers.backends import default_pool
from hive_providers.backends.pool import PoolExhausted
from hive_providers.backends.pool import fingerprint

pytestmark = pytest.mark.anyio


class Entry:
    """What the pool keeps: a number, whether it faulted, whether it was closed."""

    made = 0

    def __init__(self) -> None:
        Entry.made += 1
        self.number = Entry.made
        self.faulted = False
        self.closed = False

    async def aclose(self) -> None:
        assert not self.closed, "closed twice"
        self.closed = True


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def make() -> Entry:
    return Entry()


async def fail_inside(pool: AcpSessionPool[Entry], held: list[Entry]) -> None:
    """Lease an entry (kept in ``held``) and fail in the block."""
    async with pool.lease("x", "s", "fp", make) as entry:
        held.append(entry)
        raise RuntimeError("turn failed")


def stats(**values: int) -> PoolStats:
    return PoolStats(**values)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def pool(clock: Clock) -> AcpSessionPool[Entry]:
    """A pool of default settings on the test's clock."""
    return AcpSessionPool[Entry](clock=clock)


@asynccontextmanager
async def leased(
    pool: AcpSessionPool[Entry], seen: list[Entry], create: Callable[[], Awaitable[Entry]] = make
) -> AsyncIterator[Entry]:
    """A lease of key ``x``, its entry appended to ``seen``."""
    async with pool.lease("x", "s", "fp", create) as entry:
        seen.append(entry)
        yield entry


async def test_warm_hit_reuses_the_entry(pool: AcpSessionPool[Entry]) -> None:
    async with pool.lease("gemini", "s1", "fp", make) as first:
        assert pool.stats == stats(misses=1, active=1, leased=1, indexed=1)
    assert pool.stats == stats(misses=1, active=1, indexed=1)
    async with pool.lease("gemini", "s1", "fp", make) as second:
        assert second is first
    assert not first.closed
    assert pool.stats == stats(hits=1, misses=1, active=1, indexed=1)
    # The same key of another backend is another entry.
    async with pool.lease("kimi", "s1", "fp", make) as other:
        assert other is not first
    assert pool.stats == stats(hits=1, misses=2, active=2, indexed=2)
    await pool.aclose()
    assert first.closed
    assert other.closed
    assert pool.stats == stats(hits=1, misses=2)


async def test_fingerprint_mismatch_closes_the_old_and_creates(pool: AcpSessionPool[Entry]) -> None:
    async with pool.lease("gemini", "s1", "model-a", make) as old:
        pass
    async with pool.lease("gemini", "s1", "model-b", make) as new:
        assert new is not old
        assert old.closed
        assert not new.closed
    assert pool.stats == stats(misses=2, evictions=1, active=1, indexed=1)
    async with pool.lease("gemini", "s1", "model-b", make) as again:
        assert again is new
    assert pool.stats == stats(hits=1, misses=2, evictions=1, active=1, indexed=1)


async def test_at_the_maximum_the_least_recently_used_idle_entry_goes(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(max_active=3), clock=clock)
    entries: dict[str, Entry] = {}
    for key in ("a", "b", "c"):
        clock.now += 1
        async with pool.lease("x", key, "fp", make) as entry:
            entries[key] = entry
    clock.now += 1
    async with pool.lease("x", "a", "fp", make):  # "a" is now the most recently used; "b" the least
        pass
    assert pool.stats == stats(hits=1, misses=3, active=3, indexed=3)
    clock.now += 1
    async with pool.lease("x", "d", "fp", make) as entries["d"]:
        assert entries["b"].closed
        assert not entries["a"].closed
        assert not entries["c"].closed
    assert pool.stats == stats(hits=1, misses=4, evictions=1, active=3, indexed=3)


async def test_an_entry_in_use_is_never_evicted_and_a_full_pool_refuses(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(max_active=2), clock=clock)
    async with pool.lease("x", "a", "fp", make) as a:
        clock.now += 1
        async with pool.lease("x", "b", "fp", make) as b:
            with pytest.raises(PoolExhausted, match="maximum of 2 sessions, all in use") as raised:
                async with pool.lease("x", "c", "fp", make):
                    pytest.fail("leased beyond the maximum")
            assert isinstance(raised.value, UserError)
            assert pool.stats == stats(misses=2, active=2, leased=2, indexed=2)
        # "b" is free again: it goes, though "a" is older, because "a" is held.
        async with pool.lease("x", "c", "fp", make):
            assert b.closed
            assert not a.closed
    assert pool.stats == stats(misses=3, evictions=1, active=2, indexed=2)


async def test_idle_entries_are_reaped_on_the_next_lease(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(idle_timeout=60), clock=clock)
    async with pool.lease("x", "old", "fp", make) as old:
        pass
    clock.now += 30
    async with pool.lease("x", "young", "fp", make) as young:
        pass
    clock.now += 30  # "old" idled 60 s, "young" 30 s
    assert not old.closed  # lazy: nothing runs until the next lease
    async with pool.lease("x", "young", "fp", make) as again:
        assert again is young
        assert old.closed
    assert pool.stats == stats(hits=1, misses=2, reaped=1, active=1, indexed=1)
    clock.now += 59
    async with pool.lease("x", "other", "fp", make):
        assert not young.closed
    assert pool.stats == stats(hits=1, misses=3, reaped=1, active=2, indexed=2)


async def test_an_entry_held_long_is_not_reaped_while_held(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(idle_timeout=60), clock=clock)
    async with pool.lease("x", "long", "fp", make) as long:
        clock.now += 600
        async with pool.lease("x", "other", "fp", make):
            assert not long.closed
    clock.now += 59  # idle counts from the lease's end
    async with pool.lease("x", "long", "fp", make) as again:
        assert again is long
    assert pool.stats.reaped == 0


async def test_a_faulted_entry_is_dropped_when_returned(pool: AcpSessionPool[Entry]) -> None:
    async with pool.lease("x", "s", "fp", make) as broken:
        broken.faulted = True
    assert broken.closed
    assert pool.stats == stats(misses=1, faults=1)
    async with pool.lease("x", "s", "fp", make) as fresh:
        assert fresh is not broken
    assert pool.stats == stats(misses=2, faults=1, active=1, indexed=1)


async def test_an_entry_that_faults_while_idle_is_not_reused(pool: AcpSessionPool[Entry]) -> None:
    async with pool.lease("x", "s", "fp", make) as died:
        pass
    died.faulted = True  # its process died between turns
    async with pool.lease("x", "s", "fp", make) as fresh:
        assert fresh is not died
        assert died.closed
    assert pool.stats == stats(misses=2, faults=1, active=1, indexed=1)


async def test_an_exception_in_the_block_drops_the_entry(pool: AcpSessionPool[Entry]) -> None:
    held: list[Entry] = []
    with pytest.raises(RuntimeError, match="turn failed"):
        await fail_inside(pool, held)
    assert held[0].closed
    assert pool.stats == stats(misses=1, faults=1)


async def test_a_cancelled_block_keeps_a_healthy_entry_and_drops_a_faulted_one(
    pool: AcpSessionPool[Entry],
) -> None:
    held: list[Entry] = []
    with anyio.move_on_after(0.01):  # a cancel the CLI honoured: the process is still good
        async with pool.lease("x", "s", "fp", make) as entry:
            held.append(entry)
            await anyio.sleep_forever()
    assert not held[0].closed
    assert pool.stats == stats(misses=1, active=1, indexed=1)

    with anyio.move_on_after(0.01):  # a cancel that ended in killing the CLI
        async with pool.lease("x", "s", "fp", make) as entry:
            assert entry is held[0]
            entry.faulted = True
            await anyio.sleep_forever()
    assert held[0].closed
    assert pool.stats == stats(hits=1, misses=1, faults=1)


async def test_a_failing_create_leaves_nothing_behind(pool: AcpSessionPool[Entry]) -> None:

    async def fail() -> Entry:
        raise OSError("no such program")

    with pytest.raises(OSError, match="no such program"):
        async with pool.lease("x", "s", "fp", fail):
            pytest.fail("leased nothing")
    assert pool.stats == stats(misses=1)
    async with pool.lease("x", "s", "fp", make):
        pass
    assert pool.stats == stats(misses=2, active=1, indexed=1)


async def test_one_execution_per_key_at_a_time(pool: AcpSessionPool[Entry]) -> None:
    order: list[str] = []
    first_in = anyio.Event()
    release_first = anyio.Event()
    seen: list[Entry] = []

    async def first() -> None:
        async with leased(pool, seen):
            order.append("first in")
            first_in.set()
            await release_first.wait()
            order.append("first out")

    async def second() -> None:
        await first_in.wait()
        async with leased(pool, seen):
            order.append("second in")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(first)
            tasks.start_soon(second)
            await first_in.wait()
            # The second lease is waiting for the entry: counted as held, and nothing new was made.
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            assert order == ["first in"]
            assert pool.stats == stats(misses=1, active=1, leased=1, indexed=1)
            release_first.set()
    assert order == ["first in", "first out", "second in"]
    assert seen[0] is seen[1]
    assert pool.stats == stats(hits=1, misses=1, active=1, indexed=1)


async def test_a_waiting_lease_creates_anew_when_the_holder_faulted(pool: AcpSessionPool[Entry]) -> None:
    first_in = anyio.Event()
    release_first = anyio.Event()
    seen: list[Entry] = []

    async def first() -> None:
        async with leased(pool, seen) as entry:
            first_in.set()
            await release_first.wait()
            entry.faulted = True

    async def second() -> None:
        async with leased(pool, seen):
            pass

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(first)
            await first_in.wait()
            tasks.start_soon(second)
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            release_first.set()
    broken, fresh = seen
    assert broken is not fresh
    assert broken.closed
    assert not fresh.closed
    assert pool.stats == stats(misses=2, faults=1, active=1, indexed=1)


async def test_a_second_lease_of_a_key_being_created_waits_for_it(pool: AcpSessionPool[Entry]) -> None:
    creating = anyio.Event()
    finish = anyio.Event()
    seen: list[Entry] = []

    async def slow() -> Entry:
        creating.set()
        await finish.wait()
        return Entry()

    async def lease(create: object) -> None:
        async with leased(pool, seen, slow if create is slow else make):
            pass

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lease, slow)
            await creating.wait()
            tasks.start_soon(lease, make)
            for _ in range(100):
                await anyio.lowlevel.checkpoint()
            assert pool.stats == stats(misses=1, active=1, leased=1, indexed=1)
            finish.set()
    assert seen[0] is seen[1]
    assert pool.stats == stats(hits=1, misses=1, active=1, indexed=1)


async def test_anonymous_entries_are_reused_by_fingerprint(pool: AcpSessionPool[Entry]) -> None:
    # The first is held when the second is leased: another one.
    async with pool.lease("x", None, "fp", make) as first, pool.lease("x", None, "fp", make) as second:
        assert second is not first
    assert pool.stats == stats(misses=2, active=2)
    async with pool.lease("x", None, "fp", make) as again:
        assert again in (first, second)
    async with pool.lease("x", None, "other", make) as different:
        assert different not in (first, second)
    assert pool.stats == stats(hits=1, misses=3, active=3)
    assert not any(entry.closed for entry in (first, second, different))


async def test_anonymous_entries_are_dropped_unless_kept(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(keep_anonymous=False), clock=clock)
    async with pool.lease("x", None, "fp", make) as anonymous:
        pass
    assert anonymous.closed
    async with pool.lease("x", "s", "fp", make) as keyed:
        pass
    assert not keyed.closed
    assert pool.stats == stats(misses=2, active=1, indexed=1)


async def test_a_disabled_pool_creates_and_closes_each_time(clock: Clock) -> None:
    pool = AcpSessionPool[Entry](PoolSettings(enabled=False), clock=clock)
    async with pool.lease("x", "s", "fp", make) as first:
        assert pool.stats == stats(misses=1)
    assert first.closed
    async with pool.lease("x", "s", "fp", make) as second:
        assert second is not first
    assert second.closed
    held: list[Entry] = []
    with pytest.raises(RuntimeError, match="turn failed"):
        await fail_inside(pool, held)
    assert held[0].closed
    assert pool.stats == stats(misses=3)


async def test_closing_the_pool_closes_held_entries_once(pool: AcpSessionPool[Entry]) -> None:
    async with pool.lease("x", "s", "fp", make) as held:
        await pool.aclose()
        assert held.closed
        assert pool.stats == stats(misses=1)
    # Returned after the pool closed: not closed twice (Entry.aclose would fail), not kept.
    assert pool.stats == stats(misses=1)
    async with pool.lease("x", "s", "fp", make) as fresh:
        assert fresh is not held


def test_settings_defaults_and_non_positive_numbers() -> None:
    assert PoolSettings() == PoolSettings(
        enabled=True, idle_timeout=600.0, max_active=50, keep_anonymous=True
    )
    pool = AcpSessionPool[Entry](PoolSettings(idle_timeout=0, max_active=-1))
    assert pool.settings.idle_timeout == 600.0
    assert pool.settings.max_active == 50
    assert default_pool() is default_pool()


def test_fingerprint_is_stable_and_sensitive() -> None:
    base = fingerprint("/usr/bin/gemini", ("--acp",), {"A": "1", "B": "2"}, "/repo", "default", None)
    assert base == fingerprint("/usr/bin/gemini", ("--acp",), {"B": "2", "A": "1"}, "/repo", "default", None)
    assert base == fingerprint("/usr/bin/gemini", ["--acp"], {"A": "1", "B": "2"}, "/repo", "default", None)
    assert base != fingerprint("/usr/bin/gemini", ("--acp",), {"A": "1", "B": "3"}, "/repo", "default", None)
    assert base != fingerprint("/usr/bin/gemini", ("--acp",), {"A": "1", "B": "2"}, "/repo", "yolo", None)
    assert len(base) == 64
