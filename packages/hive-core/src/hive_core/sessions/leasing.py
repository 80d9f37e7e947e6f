"""The part of a session store that hands out leases, the same for every store: refusing a live holder, and
keeping, renewing and giving up the leases this process took (see :mod:`hive_core.sessions.lease`)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from typing import Final

from .lease import SessionLease
from .records import SessionInUse
from .records import SessionStoreError
from .rows import holder_from_row

__all__ = ["LeasingStore", "refuse_live_holder"]

_RENEW: Final = "UPDATE leases SET renewed = ? WHERE session_id = ? AND token = ?"
_DROP: Final = "DELETE FROM leases WHERE session_id = ? AND token = ?"


def refuse_live_holder(session_id: str, row: Sequence[object] | None, now: float, expiry: float) -> None:
    """Raise :class:`SessionInUse` when ``row`` (a lease's holder columns, or ``None``) is held by a live process."""
    if row is None:
        return
    holder = holder_from_row(row)
    if holder.live(now, expiry=expiry):
        raise SessionInUse(session_id=session_id, pid=holder.pid, host=holder.host, since=holder.since)


class LeasingStore:
    """Keeps the leases a store handed out; the store runs its two statements through :meth:`_lease_write`."""

    def __init__(self) -> None:
        self._leases: list[SessionLease] = []

    def _lease_write(self, statement: str, parameters: tuple[object, ...]) -> int:
        """Run ``statement`` (``?`` marking its parameters) in its own write transaction; return the number of
        rows it changed."""
        raise NotImplementedError

    def _lease_clock(self) -> float:
        """The store's clock."""
        raise NotImplementedError

    def _hand_out(self, session_id: str, token: str, expiry: float) -> SessionLease:
        """The lease just written for ``token``, renewed and given up through the store, kept until :meth:`close`."""
        lease = SessionLease(
            session_id,
            token,
            renew=lambda: self._lease_write(_RENEW, (self._lease_clock(), session_id, token)) > 0,
            release=lambda: self._drop_lease(_DROP, session_id, token),
            expiry=expiry,
        )
        self._leases.append(lease)
        return lease

    def break_lease(self, session_id: str) -> bool:
        """Remove the session's lease whoever holds it; whether there was one. Only for a caller that knows the
        holder is gone though it may look alive: an engine that declared the holder's worker lost (its heartbeats
        stopped), or a worker that stopped the holder itself."""
        return self._lease_write("DELETE FROM leases WHERE session_id = ?", (session_id,)) > 0

    def _drop_lease(self, statement: str, session_id: str, token: str) -> None:
        self._lease_write(statement, (session_id, token))

    def _release_leases(self) -> None:
        """Give up every lease this store handed out."""
        while self._leases:
            # A lease that cannot be given up (the database went bad or away meanwhile) ends with this process.
            with suppress(SessionStoreError):
                self._leases.pop().release()
