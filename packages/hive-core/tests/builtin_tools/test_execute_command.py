from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import pytest

from hive_core.builtin_tools import execute_command
from hive_core.builtin_tools import execute_command_tool
from hive_core.sandbox import SandboxSettings

if TYPE_CHECKING:
    from .conftest import Project

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not hasattr(os, "pidfd_open"), reason="the checks watch processes through Linux pidfds"
    ),
]

unconfined = execute_command_tool(SandboxSettings(mode="off"))
"""The tool without the sandbox: these checks watch the command's processes by the pids it reports, which inside
the sandbox's pid namespace are not the host's (test_sandbox.py checks the sandboxed tree)."""

_MARKER = re.compile(r"\[\.\.\. ([\d,]+) characters omitted \.\.\.\]\n")


async def assert_ends(*pids: int) -> None:
    """Wait, with a bound, until every process in ``pids`` has exited (killed ones take a moment to die)."""
    with anyio.fail_after(5):
        for pid in pids:
            try:
                handle = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            try:
                # A process's pidfd turns readable when it exits, whether or not anyone reaps it.
                await anyio.wait_readable(handle)
            finally:
                os.close(handle)


async def wait_for_fifo(path: Path) -> None:
    """Wait until a command writes to the FIFO at ``path`` (created beforehand with ``os.mkfifo``)."""
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with anyio.fail_after(10):
            await anyio.wait_readable(handle)
    finally:
        os.close(handle)


def pids(project: Project, *names: str) -> list[int]:
    return [int((project.root / f"{name}.pid").read_text()) for name in names]


async def test_reports_exit_code_and_output(project: Project) -> None:
    assert await project.call(execute_command, command="echo hello") == "Exit code: 0\nOutput:\nhello"


async def test_reports_stderr_and_failures(project: Project) -> None:
    reply = await project.call(execute_command, command="echo out; echo err >&2; exit 3")
    assert reply == "Exit code: 3\nOutput:\nout\nStderr:\nerr"


async def test_no_output_is_just_the_exit_code(project: Project) -> None:
    assert await project.call(execute_command, command="true") == "Exit code: 0"


async def test_a_signal_is_named(project: Project) -> None:
    assert await project.call(unconfined, command="kill -TERM $$") == "Exit code: -15 (killed by SIGTERM)"


async def test_runs_in_the_working_directory_with_bash_and_no_input(project: Project) -> None:
    reply = await project.call(execute_command, command='pwd; echo "${BASH_VERSION:+bash}"; cat; echo done')
    assert reply == f"Exit code: 0\nOutput:\n{project.root.resolve()}\nbash\ndone"


async def test_output_over_the_cap_keeps_head_and_tail(project: Project) -> None:
    numbers = "".join(f"{n}\n" for n in range(1, 30_001))
    reply = await project.call(execute_command, command="seq 1 30000")
    output = reply.removeprefix("Exit code: 0\nOutput:\n")
    head, tail = _MARKER.split(output)[0::2]
    omitted = int(_MARKER.search(output).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert head.startswith("1\n2\n3\n")
    assert numbers.startswith(head)
    assert numbers.rstrip("\n").endswith(tail)
    assert tail.endswith("29999\n30000")
    assert len(head) + omitted + len(tail) + 1 == len(numbers)
    assert 19_000 < len(head) <= 20_000
    assert 29_000 < len(tail) <= 30_000


async def test_each_stream_is_capped_on_its_own(project: Project) -> None:
    reply = await project.call(execute_command, command="seq 1 30000 >&2; echo small")
    assert reply.startswith("Exit code: 0\nOutput:\nsmall\nStderr:\n1\n2\n")
    assert len(_MARKER.findall(reply)) == 1
    assert reply.endswith("\n30000")


async def test_a_timeout_kills_the_whole_tree_and_keeps_the_partial_output(project: Project) -> None:
    command = (
        "echo started; echo $$ > shell.pid; sleep 30 & echo $! > background.pid; "
        "sh -c 'echo $$ > child.pid; exec sleep 30'"
    )
    with anyio.fail_after(10), pytest.raises(TimeoutError) as caught:
        await project.call(unconfined, command=command, timeout_ms=1500)
    message = str(caught.value)
    assert message.startswith("the command was still running after 1500 ms")
    assert message.endswith("\nOutput so far:\nstarted")
    await assert_ends(*pids(project, "shell", "background", "child"))


async def test_a_silent_timeout_says_only_that(project: Project) -> None:
    with anyio.fail_after(10), pytest.raises(TimeoutError) as caught:
        await project.call(execute_command, command="sleep 30", timeout_ms=100)
    assert str(caught.value) == (
        "the command was still running after 100 ms, so it was stopped together with every process it started"
    )


async def test_background_processes_do_not_outlive_the_call(project: Project) -> None:
    command = "sleep 30 & echo $! > background.pid; echo back"
    with anyio.fail_after(10):
        assert await project.call(unconfined, command=command) == "Exit code: 0\nOutput:\nback"
    await assert_ends(*pids(project, "background"))


async def test_cancelling_the_call_kills_the_tree(project: Project) -> None:
    os.mkfifo(project.root / "ready")
    command = "echo $$ > shell.pid; sleep 30 & echo $! > background.pid; echo go > ready; wait"
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: project.call(unconfined, command=command, timeout_ms=60_000))
            await wait_for_fifo(project.root / "ready")
            tasks.cancel_scope.cancel()
    await assert_ends(*pids(project, "shell", "background"))


async def test_output_is_decoded_as_utf8_with_replacement(project: Project) -> None:
    reply = await project.call(execute_command, command=r"printf 'caf\xc3\xa9 \xff\n'")
    assert reply == "Exit code: 0\nOutput:\ncafé \ufffd"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [({"command": "  "}, "empty"), ({"command": "true", "timeout_ms": 0}, "positive")],
)
async def test_bad_arguments(project: Project, arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        await project.call(execute_command, **arguments)
