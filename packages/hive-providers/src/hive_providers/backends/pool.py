"""Warm sessions kept between turns: a pool of leased entries by logical key and compatibility fingerprint.

The pool knows nothing of ACP: an entry is anything with ``aclose()`` and a ``faulted`` flag (a running CLI and
its open session, for :class:`~hive_providers.backends.acp.backend.AcpBackend`). The rules are seeds-upstream
§E.5's:

- A lease names the backend, a logical key (hive's session id; ``None`` for an anonymous run) and a fingerprint
  of everything that makes an entry fit (program, arguments, environment, directory, mode, model, endpoint).
- The entry indexed under (backend, key) is reused (a *hit*) when its fingerprint is the same and it has not
  faulted; otherwise it is closed and replaced (an *eviction*). An anonymous lease reuses an idle anonymous entry
  of the same backend and fingerprint.
- One execution per entry at a time: a second lease of a key waits for the first to end.
- At the maximum, the least recently used entry nobody holds is closed to make room; when every entry is held,
  the lease fails with :class:`PoolExhausted`.
- When a lease ends, an entry that faulted, or out of whose block an exception escaped, is closed and dropped
  (a cancelled block keeps its entry unless it faulted); so is an anonymous one when
  :attr:`PoolSettings.keep_anonymous` is off.
- Idle entries (nobody holds them for :attr:`PoolSettings.idle_timeout` seconds) are closed lazily, whenever a
  lease starts or ends: no timer runs in the background.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import Final
from typing import Generic
from typing import Protocol
from typing import TypeVar

import anyio
import msgspec

from hive_core.errors import UserError

__all__ = [
    "AcpSessionPool",
    "PoolExhausted",
    "PoolSettings",
    "PoolStats",
    "Pooled",
    "default_pool",
    "fingerprint",
]


class Pooled(Protocol):
    """What the pool keeps: something that can be closed, and says when it broke."""

    @property
    def faulted(self) -> bool:
        """Whether it broke (its process died, its protocol failed) and must not be reused."""
        ...

    async def aclose(self) -> None:
        """Stop it and everything it runs."""
        ...


T = TypeVar("T", bound=Pooled)


class PoolSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How many warm sessions are kept, and for how long (the seed's defaults)."""

    enabled: bool = True
    """Whether entries are kept at all; off, every lease creates an entry and closes it at the end."""
    idle_timeout: float = 600.0
    """Seconds an entry nobody holds is kept; a value that is not positive means the default."""
    max_active: int = 50
    """The most entries kept at once, held or not; a value that is not positive means the default."""
    keep_anonymous: bool = True
    """Whether an entry leased without a key is kept for the next anonymous lease of the same fingerprint."""


class PoolStats(msgspec.Struct, frozen=True, kw_only=True):
    """The pool's counters since it was made, and its gauges now."""

    hits: int = 0
    """Leases that reused a warm entry."""
    misses: int = 0
    """Leases that created an entry."""
    evictions: int = 0
    """Entries closed to make room, or because a lease of their key came with another fingerprint."""
    faults: int = 0
    """Entries dropped because they faulted or a lease's block raised."""
    reaped: int = 0
    """Entries closed after idling for the idle timeout."""
    active: int = 0
    """Entries kept now (held, idle, or being created)."""
    leased: int = 0
    """Entries held (or waited for) by a lease now."""
    indexed: int = 0
    """Entries kept under a logical key now."""


class PoolExhausted(UserError, RuntimeError):
    """Every entry of the pool is held and it is at its maximum: no session can start until one ends."""


def fingerprint(*parts: object) -> str:
    """A stable digest of ``parts`` (program, arguments, environment, directory, mode, model, endpoint...): equal
    parts give equal digests in every process. Mappings are compared by content, whatever their order; paths and
    other values JSON has no form for count by their ``str()``."""
    plain = msgspec.to_builtins(parts, enc_hook=str, order="sorted")
    encoded = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(encoded.encode()).hexdigest()


@dataclass(eq=False)
class _Entry(Generic[T]):
    backend: str
    key: str | None
    fingerprint: str
    last_used: float
    value: T | None = None
    """``None`` while it is being created."""
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0
    """Leases holding it or waiting for it: while there is one, it is neither evicted nor reaped."""
    closed: bool = False
    """Out of the pool (its value may still be in use by the lease that holds it)."""
    shut: bool = False
    """Its value was closed."""


_DEFAULTS: Final = PoolSettings()


class AcpSessionPool(Generic[T]):
    """Warm entries by (backend, logical key) and fingerprint; see the module's docstring for the rules.

    Lease an entry with ``async with pool.lease(backend, key, fingerprint, create) as entry:``, where
    ``create()`` makes a new one when no warm one fits. ``clock`` (seconds, monotonic) is replaceable for tests.
    """

    def __init__(
        self, settings: PoolSettings | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        given = settings if settings is not None else _DEFAULTS
        self.settings: Final = msgspec.structs.replace(
            given,
            idle_timeout=given.idle_timeout if given.idle_timeout > 0 else _DEFAULTS.idle_timeout,
            max_active=given.max_active if given.max_active > 0 else _DEFAULTS.max_active,
        )
        """The settings in force (non-positive numbers replaced by the defaults)."""
        self._clock = clock
        self._entries: list[_Entry[T]] = []
        self._index: dict[tuple[str, str], _Entry[T]] = {}
        self._hits = self._misses = self._evictions = self._faults = self._reaped = 0

    @property
    def stats(self) -> PoolStats:
        """The counters and gauges now."""
        return PoolStats(
            hits=self._hits,
            misses=self._misses,
            evictions=self._evictions,
            faults=self._faults,
            reaped=self._reaped,
            active=len(self._entries),
            leased=sum(1 for entry in self._entries if entry.users),
            indexed=len(self._index),
        )

    @asynccontextmanager
    async def lease(
        self, backend: str, key: str | None, fingerprint: str, create: Callable[[], Awaitable[T]]
    ) -> AsyncGenerator[T]:
        """Hold a warm entry that fits, or a new one from ``create()``, for the block; see the module's rules.

        Raises :class:`PoolExhausted` when the pool is full of held entries, and whatever ``create`` raises.
        """
        if not self.settings.enabled:
            self._misses += 1
            value = await create()
            try:
                yield value
            finally:
                with anyio.CancelScope(shield=True):
                    await value.aclose()
            return
        entry = await self._acquire(backend, key, fingerprint, create)
        value = entry.value
        assert value is not None
        failed = False
        try:
            yield value
        except Exception:
            # A failed turn may have left the entry in any state; a cancelled one tells by ``faulted`` (a CLI
            # that honoured the cancel stays warm, one that had to be killed is faulted).
            failed = True
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await self._release(entry, failed=failed)

    async def aclose(self) -> None:
        """Close every entry, held or not (a lease still running finds its entry closed when it ends)."""
        entries = list(self._entries)
        for entry in entries:
            self._forget(entry)
        with anyio.CancelScope(shield=True):
            for entry in entries:
                await self._close(entry)

    # -- leasing --------------------------------------------------------------------------------------------------
    # What runs between two awaits runs alone, so each decision (which entry, which slot) is taken and recorded
    # before the next await: no lock guards the pool itself.

    async def _acquire(
        self, backend: str, key: str | None, fingerprint: str, create: Callable[[], Awaitable[T]]
    ) -> _Entry[T]:
        while True:
            await self._reap()
            if key is None:
                warm = self._idle_anonymous(backend, fingerprint)
                if warm is None:
                    return await self._create(backend, None, fingerprint, create)
                warm.users += 1
                warm.lock.acquire_nowait()  # nobody holds it
                self._hits += 1
                return warm
            entry = self._index.get((backend, key))
            if entry is None:
                return await self._create(backend, key, fingerprint, create)
            entry.users += 1
            try:
                await entry.lock.acquire()  # one execution per entry: wait for the lease that holds it
            except BaseException:
                entry.users -= 1
                raise
            if entry.closed:  # dropped while this lease waited: look again
                entry.users -= 1
                entry.lock.release()
                continue
            assert entry.value is not None
            if entry.fingerprint == fingerprint and not entry.value.faulted:
                self._hits += 1
                return entry
            if entry.value.faulted:
                self._faults += 1
            else:
                self._evictions += 1
            entry.users -= 1
            self._forget(entry)
            entry.lock.release()
            await self._close(entry)

    def _idle_anonymous(self, backend: str, fingerprint: str) -> _Entry[T] | None:
        candidates = [
            entry
            for entry in self._entries
            if entry.key is None
            and entry.backend == backend
            and entry.fingerprint == fingerprint
            and not entry.users
            and entry.value is not None
            and not entry.value.faulted
        ]
        return max(candidates, key=lambda entry: entry.last_used, default=None)

    async def _create(
        self, backend: str, key: str | None, fingerprint: str, create: Callable[[], Awaitable[T]]
    ) -> _Entry[T]:
        victim: _Entry[T] | None = None
        if len(self._entries) >= self.settings.max_active:
            idle = [entry for entry in self._entries if not entry.users]
            if not idle:
                raise PoolExhausted(
                    f"the agent session pool is at its maximum of {self.settings.max_active} sessions, all in "
                    "use; wait for one to finish, or raise the maximum"
                )
            victim = min(idle, key=lambda entry: entry.last_used)
            self._evictions += 1
            self._forget(victim)
        # Reserved before ``create`` runs, so that a second lease of the key waits for this one instead of
        # creating a second entry, and the slot counts against the maximum.
        entry = _Entry[T](backend=backend, key=key, fingerprint=fingerprint, last_used=self._clock(), users=1)
        entry.lock.acquire_nowait()
        self._entries.append(entry)
        if key is not None:
            self._index[(backend, key)] = entry
        self._misses += 1
        try:
            if victim is not None:
                await self._close(victim)
            entry.value = await create()
        except BaseException:
            entry.users -= 1
            self._forget(entry)
            entry.lock.release()
            raise
        return entry

    async def _release(self, entry: _Entry[T], *, failed: bool) -> None:
        entry.users -= 1
        entry.last_used = self._clock()
        value = entry.value
        assert value is not None
        faulted = failed or value.faulted
        if entry.closed:  # the pool was closed meanwhile
            entry.lock.release()
            await self._close(entry)
        elif faulted or (entry.key is None and not self.settings.keep_anonymous):
            if faulted:
                self._faults += 1
            self._forget(entry)
            entry.lock.release()
            await self._close(entry)
        else:
            entry.lock.release()
        await self._reap()

    async def _reap(self) -> None:
        now = self._clock()
        victims: list[_Entry[T]] = []
        for entry in self._entries:
            if entry.users or entry.value is None:
                continue
            if entry.value.faulted:
                self._faults += 1
            elif now - entry.last_used >= self.settings.idle_timeout:
                self._reaped += 1
            else:
                continue
            victims.append(entry)
        for entry in victims:
            self._forget(entry)
        for entry in victims:
            await self._close(entry)

    def _forget(self, entry: _Entry[T]) -> None:
        """Take ``entry`` out of the pool: a lease that waits for it looks again."""
        entry.closed = True
        if entry in self._entries:
            self._entries.remove(entry)
        if entry.key is not None and self._index.get((entry.backend, entry.key)) is entry:
            del self._index[(entry.backend, entry.key)]

    async def _close(self, entry: _Entry[T]) -> None:
        """Close ``entry``'s value, once."""
        entry.closed = True
        if entry.value is None or entry.shut:
            return
        entry.shut = True
        with anyio.CancelScope(shield=True):
            await entry.value.aclose()


_default: AcpSessionPool[Any] | None = None
_default_lock = threading.Lock()


def default_pool() -> AcpSessionPool[Any]:
    """The process's pool, with the default settings (made on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = AcpSessionPool()
        return _default
