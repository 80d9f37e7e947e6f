"""No process is left behind: after a cancel, a timeout, a crash or closing the backend, walking ``/proc`` finds
no process carrying the CLI's ``HIVE_OWNER`` mark, grandchildren included (one of them left the process group)."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest
from acp_fake_agent import marked_processes
from backend_harness import SPEC
from backend_harness import clean
from backend_harness import end_of
from backend_harness import options
from backend_harness import run_and_cancel
from backend_harness import text_of

from hive_core.runners import SessionRunner
from hive_core.runners import collect_turn
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.acp.connection import AcpConnection

pytestmark = pytest.mark.anyio

WAIT = 20.0
GRACE = 1.0


def mark_of(connection: AcpConnection | None) -> str:
    assert connection is not None
    assert connection.process is not None
    return connection.process.mark


async def wait_for_descendants(mark: str, count: int) -> list[int]:
    """The processes carrying ``mark`` once there are ``count`` of them (the agent and its grandchildren)."""
    with anyio.fail_after(WAIT):
        # /proc sends no notification: polling it, bounded, is the only way to see a process appear.
        while len(found := marked_processes(mark)) < count:  # noqa: ASYNC110
            await anyio.sleep(0.01)
    return found


async def test_a_cancel_the_agent_ignores_escalates_to_killing_its_group(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "cancel-ignored", cancel_grace=GRACE))
    try:
        with anyio.fail_after(WAIT):
            events, took, _ = await run_and_cancel(
                backend, when=lambda event: isinstance(event, TextDeltaEvent)
            )
        mark = mark_of(backend.last_connection)
        assert backend.last_connection is not None
        assert backend.last_connection.faulted
        # Already gone before the backend is closed: the cancel itself killed the group.
        assert not marked_processes(mark)
    finally:
        await backend.aclose()
    clean(events)
    assert end_of(events).stop_reason == "cancelled"
    # session/cancel ignored for one grace period, SIGINT ignored for another, then SIGKILL.
    assert 2 * GRACE - 0.2 < took < 2 * GRACE + 2.0


async def test_cancel_kills_the_grandchildren_too_including_one_that_left_the_group(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "grandchild", cancel_grace=GRACE))
    runner = SessionRunner(backend)
    events: list[Event] = []
    mark: list[str] = []
    streaming = anyio.Event()

    def sink(event: Event) -> None:
        events.append(event)
        if isinstance(event, TextDeltaEvent):
            streaming.set()

    async def watch() -> None:
        with anyio.fail_after(WAIT):
            await streaming.wait()
        mark.append(mark_of(backend.last_connection))
        assert len(await wait_for_descendants(mark[0], 3)) == 3  # the agent and two sleeps
        runner.cancel()

    try:
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(watch)
                await runner.run_turn(UserMessageRequest(content="run the server"), sink)
    finally:
        await backend.aclose()
    clean(events)
    assert text_of(events) == "Started."
    assert end_of(events).stop_reason == "cancelled"
    assert not marked_processes(mark[0])


async def test_a_turn_timeout_is_an_error_and_leaves_nothing(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "cancel-ignored", cancel_grace=0.3))
    events: list[Event] = []
    try:
        with anyio.fail_after(WAIT):
            await SessionRunner(backend).run_turn(
                UserMessageRequest(content="go"), events.append, timeout=0.5
            )
        mark = mark_of(backend.last_connection)
    finally:
        await backend.aclose()
    clean(events)
    error = events[-2]
    assert isinstance(error, ErrorEvent)
    assert error.code == "timeout"
    assert end_of(events).stop_reason is None
    assert not marked_processes(mark)


async def test_a_crash_leaves_nothing(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "dies-mid-turn"))
    try:
        with anyio.fail_after(WAIT):
            events = clean(await collect_turn(backend, "do it"))
        mark = mark_of(backend.last_connection)
        assert not marked_processes(mark)  # closed with the turn that saw it die, not at aclose
    finally:
        await backend.aclose()
    assert isinstance(events[-2], ErrorEvent)


@pytest.mark.parametrize("transcript", ["basic-turn", "grandchild-idle"])
async def test_closing_the_backend_stops_the_warm_process_and_its_descendants(
    tmp_path: Path, transcript: str
) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, transcript, cancel_grace=GRACE))
    with anyio.fail_after(WAIT):
        events = clean(await collect_turn(backend, "hello"))
    assert end_of(events).stop_reason == "completed"
    connection = backend.last_connection
    mark = mark_of(connection)
    assert connection is not None
    assert not connection.faulted
    assert marked_processes(mark)  # warm: kept running between turns
    started = time.monotonic()
    with anyio.fail_after(WAIT):
        await backend.aclose()
    took = time.monotonic() - started
    assert not marked_processes(mark)
    assert connection.faulted
    assert took < GRACE + 1.0
