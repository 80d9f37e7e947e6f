"""kit's handshake (a CLI's bounded first request, its failures said as start errors) and the look at a kept
connection before a turn (:func:`~hive_providers.backends.kit.kept_connection.usable`)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from acp.exceptions import RequestError

from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.errors import AgentProcessError
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.handshake import handshake
from hive_providers.backends.kit.kept_connection import usable

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and signals"),
]


class Unavailable(BackendStartError):
    """A backend's own start error (Codex's: its app-server is unavailable)."""


@pytest.fixture
async def cli(tmp_path: Path) -> AsyncGenerator[CliProcess]:
    started = await CliProcess.start(
        "fake", ["sh", "-c", "echo 'no config here' >&2; sleep 30"], cwd=tmp_path, env=dict(os.environ)
    )
    async with anyio.create_task_group() as group:
        group.start_soon(started.transport.drain_stderr)
        try:
            yield started
        finally:
            await started.stop(0.0)
            group.cancel_scope.cancel()


async def shake(
    cli: CliProcess, block: Callable[[], Awaitable[None]], timeout: float = 5.0, what: str = "initialize"
) -> None:
    async with handshake(
        cli, timeout, ended=AgentProcessError, rejected=RequestError, failure=Unavailable, what=what
    ):
        await block()


async def test_no_answer_in_time_is_a_timeout_quoting_stderr(cli: CliProcess) -> None:
    with pytest.raises(BackendStartError) as failed:
        await shake(cli, lambda: anyio.sleep(10), timeout=0.2)
    assert type(failed.value) is BackendStartError  # a CLI that hangs is not "unavailable"
    assert failed.value.code == "timeout"
    assert str(failed.value) == "fake did not answer initialize within 0.2 s; stderr: no config here"


async def test_a_cli_that_ended_is_the_failure_with_its_own_text_and_code(cli: CliProcess) -> None:
    async def ended() -> None:
        raise AgentProcessError("fake exited with code 3 during initialize", code="auth")

    with pytest.raises(Unavailable) as failed:
        await shake(cli, ended)
    assert (str(failed.value), failed.value.code) == ("fake exited with code 3 during initialize", "auth")


async def test_an_error_answer_is_the_failure_saying_what_failed(cli: CliProcess) -> None:
    async def rejected() -> None:
        raise RequestError(-32600, "nope")

    with pytest.raises(Unavailable) as failed:
        await shake(cli, rejected, what="connect")
    assert str(failed.value).startswith("fake failed connect: nope")
    assert failed.value.code == "internal"


class Kept:
    def __init__(self, *, faulted: bool) -> None:
        self.faulted = faulted
        self.closed_with: list[float] = []

    async def aclose(self, grace: float) -> None:
        self.closed_with.append(grace)


async def test_a_faulted_kept_connection_is_stopped_at_once_and_not_used() -> None:
    healthy, faulted = Kept(faulted=False), Kept(faulted=True)
    assert await usable(healthy) is healthy
    assert await usable(faulted) is None
    assert await usable(None) is None
    assert (healthy.closed_with, faulted.closed_with) == ([], [0.0])
