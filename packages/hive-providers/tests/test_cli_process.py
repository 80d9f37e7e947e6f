"""kit's CLI process: how its end is told, and the one stop ladder every backend uses (real ``sh`` processes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest

from hive_core.backends import BackendProbe
from hive_providers.backends.kit.backend_shell import TurnProcessBackend
from hive_providers.backends.kit.cli_process import CliProcess
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups and signals")


async def start(tmp_path: Path, script: str) -> CliProcess:
    return await CliProcess.start("fake", ["sh", "-c", script], cwd=tmp_path, env=dict(os.environ))


async def ended(cli: CliProcess, timeout: float = 10.0) -> None:
    """Read its output to the end and let it exit."""
    async with anyio.create_task_group() as group:
        group.start_soon(cli.transport.drain_stderr)
        with anyio.fail_after(timeout):
            while await cli.transport.receive() is not None:
                pass
            await cli.process.wait()
            await cli.transport.stderr_closed.wait()


async def first_line(cli: CliProcess) -> bytes:
    """Its first line on stdout, read raw (it says the script is ready)."""
    stdout = cli.process.stdout
    assert stdout is not None
    line = b""
    with anyio.fail_after(5):
        while not line.endswith(b"\n"):
            line += await stdout.receive()
    return line


async def gone(pid: int) -> bool:
    """Whether no process ``pid`` is left within 5 s (a zombie is one)."""
    with anyio.move_on_after(5):
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            await anyio.sleep(0.02)
    return False


@pytest.mark.anyio
async def test_an_exit_code_is_told_with_the_end_of_stderr_and_the_noise(tmp_path: Path) -> None:
    cli = await start(tmp_path, 'echo "not json"; echo \'{"ok": 1}\'; echo "it broke" >&2; exit 3')
    try:
        await ended(cli)
        assert cli.process.returncode == 3
        assert cli.describe(cli.describe_exit("at start"), "more") == (
            "fake exited with code 3 at start; more; 1 line(s) on stdout were not JSON-RPC "
            "(last: 'not json'); stderr: it broke"
        )
    finally:
        await cli.stop(0.0)


@pytest.mark.anyio
async def test_a_signal_and_a_closed_output_are_told_apart(tmp_path: Path) -> None:
    cli = await start(tmp_path, "kill -TERM $$")
    try:
        await ended(cli)
        assert cli.describe_exit("during the turn") == "fake was killed by signal 15 during the turn"
        assert cli.describe_exit("x", who="fake exec").startswith("fake exec was killed")
    finally:
        await cli.stop(0.0)
    running = await start(tmp_path, "exec >&-; sleep 30")
    try:
        assert running.describe_exit("during the turn") == "fake closed its output during the turn"
    finally:
        await running.stop(0.0)


@pytest.mark.anyio
async def test_the_stream_format_names_the_noise(tmp_path: Path) -> None:
    cli = CliProcess("fake", (await start(tmp_path, "echo noise")).process, stream_format="stream-json")
    try:
        await ended(cli)
        assert "1 line(s) on stdout were not stream-json" in cli.describe("failed")
    finally:
        await cli.stop(0.0)


@pytest.mark.anyio
async def test_a_cli_that_exits_at_the_end_of_stdin_is_let_exit(tmp_path: Path) -> None:
    cli = await start(tmp_path, "cat >/dev/null; exit 4")
    with anyio.fail_after(10):
        await cli.stop(5.0, exit_wait=5.0)
    assert cli.process.returncode == 4  # it exited of itself: neither SIGINT nor the kill reached it


@pytest.mark.anyio
async def test_the_ladder_interrupts_before_it_kills(tmp_path: Path) -> None:
    cli = await start(tmp_path, "trap 'exit 7' INT; echo ready; while :; do sleep 0.05; done")
    assert await first_line(cli) == b"ready\n"  # the trap is set
    with anyio.fail_after(10):
        await cli.stop(5.0)
    assert cli.process.returncode == 7


@pytest.mark.anyio
async def test_the_ladder_kills_what_ignores_sigint_and_its_group(tmp_path: Path) -> None:
    cli = await start(tmp_path, "trap '' INT; sleep 30 & echo $!; while :; do sleep 0.05; done")
    child = int(await first_line(cli))
    with anyio.fail_after(10):
        await cli.stop(0.2)
    assert cli.process.returncode is not None
    assert cli.process.returncode < 0
    assert await gone(child)  # its sleep, killed with the group, is reaped by whoever adopted it


@pytest.mark.anyio
async def test_a_missing_program_is_a_start_error(tmp_path: Path) -> None:
    with pytest.raises(BackendStartError, match=r"cannot start fake \(.*no-such-program"):
        await CliProcess.start("fake", [str(tmp_path / "no-such-program")], cwd=tmp_path, env={})


class _Backend(TurnProcessBackend):
    pass


@pytest.mark.anyio
async def test_the_turn_process_shell_remembers_the_last_process(tmp_path: Path) -> None:
    spec = LaunchSpec(name="fake", title="Fake", executables=("sh",), install_hint="")
    backend = _Backend(spec, BackendOptions(cwd=tmp_path, resume="s1"))
    assert (backend.name, backend.session_id, backend.last_pid) == ("fake", "s1", None)
    assert [backend.next_request_id("a"), backend.next_request_id("b")] == ["hive_a_1", "hive_b_2"]
    process = await backend.open_process(["sh", "-c", "exit 0"], dict(os.environ))
    try:
        assert (backend.last_pid, backend.last_command) == (process.pid, ["sh", "-c", "exit 0"])
    finally:
        await CliProcess("fake", process).stop(0.0)
    assert isinstance(await backend.probe(), BackendProbe)


@pytest.mark.anyio
async def test_a_cancelled_stderr_drain_is_taken_up_by_the_next(tmp_path: Path) -> None:
    # Codex's app-server drains stderr only while a step reads: the next step's drain reads on.
    cli = await start(tmp_path, "echo first >&2; read line; echo last >&2")
    try:
        with anyio.move_on_after(0.5):
            await cli.transport.drain_stderr()
        assert not cli.transport.stderr_closed.is_set()
        assert cli.transport.stderr_tail() == "first"
        await cli.transport.send({})
        with anyio.fail_after(5):
            await cli.transport.drain_stderr()
        assert cli.transport.stderr_closed.is_set()
        assert cli.transport.stderr_tail() == "first\nlast"
    finally:
        await cli.stop(0.0)
