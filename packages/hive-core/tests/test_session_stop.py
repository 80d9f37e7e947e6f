"""``SessionRunner.stop``: what a signal does to a served session. The running turn ends cancelled with its
``turn_end``, queued turns never start, no more requests are read, and ``serve`` returns."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from hive_core import SessionRunner
from hive_core.runners.session import Incoming
from hive_core.tools import EventSink
from hive_protocol import Event
from hive_protocol import SessionStartedEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio

WAIT = 10.0


async def test_stop_ends_the_running_turn_drops_the_queue_and_stops_reading() -> None:
    started = anyio.Event()
    processed: list[str] = []
    events: list[Event] = []
    read_after_stop = False

    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        processed.append(request.content)
        started.set()
        await anyio.sleep_forever()

    runner = SessionRunner(processor, session_id="stop-1")

    async def incoming() -> AsyncIterator[Incoming]:
        nonlocal read_after_stop
        yield UserMessageRequest(content="first")
        yield UserMessageRequest(content="queued")
        await started.wait()
        runner.stop()
        await anyio.sleep_forever()  # the client keeps its end open: only stop() ends the reading
        read_after_stop = True
        yield UserMessageRequest(content="never read")

    with anyio.fail_after(WAIT):
        await runner.serve(incoming(), events.append)
    assert processed == ["first"]
    assert not read_after_stop
    assert [type(event) for event in events] == [SessionStartedEvent, TurnEndEvent]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "cancelled"


async def test_stop_before_any_turn_returns_at_once() -> None:
    events: list[Event] = []

    async def processor(request: UserMessageRequest, emit: EventSink) -> None:
        raise AssertionError("no turn runs after stop")

    runner = SessionRunner(processor, session_id="stop-2")
    runner.stop()

    async def incoming() -> AsyncIterator[Incoming]:
        await anyio.sleep_forever()
        yield UserMessageRequest(content="never read")

    with anyio.fail_after(WAIT):
        await runner.serve(incoming(), events.append)
    assert [type(event) for event in events] == [SessionStartedEvent]
