"""Handing what a generating thread writes to the event loop, without waiting for the loop to take it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import anyio
from anyio.lowlevel import EventLoopToken
from anyio.streams.memory import MemoryObjectSendStream

from hive_core import ChatUpdate

__all__ = ["Done", "Emit", "poster"]


@dataclass(frozen=True)
class Done:
    """The thread finished (with ``error`` when it failed)."""

    error: BaseException | None = None
    """What it failed with."""


Emit = Callable[[list[ChatUpdate] | Done], None]
"""What the thread calls with each batch of updates, and with :class:`Done` at the end."""


def poster(
    token: EventLoopToken, send: MemoryObjectSendStream[list[ChatUpdate] | Done], cancelled: threading.Event
) -> Emit:
    """How the generating thread hands updates to the event loop without waiting for it.

    ``anyio.from_thread.run_sync`` would block generation until the loop took each piece (and on a busy machine
    the loop thread may not be scheduled for a while); the backend's ``run_sync_soon`` only queues the call.
    When the reader or the loop is gone, ``cancelled`` is set so that generation stops.
    """
    backend, loop = token.backend_class, token.native_token

    def deliver(item: list[ChatUpdate] | Done) -> None:
        try:
            send.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            cancelled.set()  # the reader is gone: stop generating

    def post(item: list[ChatUpdate] | Done) -> None:
        try:
            backend.run_sync_soon(deliver, (item,), loop)
        except Exception:
            cancelled.set()  # the event loop has ended

    return post
