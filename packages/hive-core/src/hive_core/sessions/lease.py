"""Session leases: one process serves a session id at a time.

A lease is a row of the store (``leases``): the holder's process id, host name, the machine it runs on, when it
took the lease and when it last renewed it. A process that dies without giving its lease up (``kill -9``, a power
cut) must not keep the session forever, so a lease is *live* only while its holder can be shown to run:

- on this machine (same host name, same boot, same process namespace): while the process of that id runs and
  started when the holder did, so a reused process id does not count as the holder;
- anywhere else (another container sharing the hive home, a home copied from another machine): while the holder
  keeps renewing it, every :data:`LEASE_EXPIRY` / 3 seconds.

The store takes and checks leases in one write transaction, so two processes racing for a session cannot both win.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Final

import msgspec

__all__ = ["LEASE_EXPIRY", "LeaseHolder", "SessionLease"]

LEASE_EXPIRY: Final = 90.0
"""Seconds after its last renewal that a lease of a holder on another machine counts as abandoned."""


class LeaseHolder(msgspec.Struct, frozen=True, kw_only=True):
    """Who holds a lease."""

    pid: int
    """The holder's process id."""
    host: str
    """The host name of its machine."""
    machine: str
    """Host name, boot and process namespace: where :attr:`pid` means that process."""
    started: str
    """When that process started (an opaque token; empty where the system does not tell)."""
    since: float
    """When the lease was taken (Unix seconds)."""
    renewed: float
    """When it was last renewed (Unix seconds)."""

    @classmethod
    def current(cls, now: float) -> LeaseHolder:
        """This process, taking a lease at ``now``."""
        pid = os.getpid()
        return cls(
            pid=pid,
            host=socket.gethostname(),
            machine=this_machine(),
            started=start_token(pid),
            since=now,
            renewed=now,
        )

    def live(self, now: float, *, expiry: float = LEASE_EXPIRY) -> bool:
        """Whether the holder still runs (see the module's rules)."""
        if self.machine != this_machine():
            return now - self.renewed < expiry
        return _running(self.pid) and (not self.started or start_token(self.pid) == self.started)


class SessionLease:
    """A lease this process holds; :meth:`release` gives it up (closing the store does too).

    While held, a daemon thread renews it every ``expiry / 3`` seconds through ``renew``, which answers whether
    the lease was still this process's.
    """

    def __init__(
        self,
        session_id: str,
        token: str,
        renew: Callable[[], bool],
        release: Callable[[], None],
        *,
        expiry: float,
    ) -> None:
        self.session_id = session_id
        """The session leased."""
        self.token = token
        """This lease's own id in the store."""
        self.lost = False
        """Whether a renewal found the lease taken by another process (it had stopped renewing too long)."""
        self._renew = renew
        self._release = release
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._keep, args=(expiry / 3,), name=f"hive-lease-{session_id}", daemon=True
        )
        self._thread.start()

    def _keep(self, interval: float) -> None:
        while not self._stop.wait(interval):
            try:
                held = self._renew()
            except Exception:  # a busy or vanished database: try again at the next interval
                continue
            if not held:
                self.lost = True
                return

    def release(self) -> None:
        """Give the lease up (once; later calls do nothing)."""
        if self._stop.is_set():
            return
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        self._release()

    @property
    def released(self) -> bool:
        """Whether :meth:`release` was called."""
        return self._stop.is_set()

    def __enter__(self) -> SessionLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@cache
def this_machine() -> str:
    """Host name, boot id and process namespace of this process: equal exactly where process ids are shared."""
    parts = [socket.gethostname(), _read("/proc/sys/kernel/random/boot_id")]
    try:
        parts.append(os.readlink("/proc/self/ns/pid"))
    except OSError:
        parts.append("")
    return "/".join(parts)


def start_token(pid: int) -> str:
    """When process ``pid`` started, as the kernel counts it (empty where there is no ``/proc``)."""
    stat = _read(f"/proc/{pid}/stat")
    # The command name (field 2) is in parentheses and may hold spaces; the start time is field 22.
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else ""


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user
        return True
    return _read(f"/proc/{pid}/stat").rpartition(")")[2].split()[:1] != ["Z"]


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ""
