"""Bad input from a CLI: every failure ends the turn with a classified ``error`` and a ``turn_end``, never a hang."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import pytest
from acp_fake_agent import marked_processes
from backend_harness import SPEC
from backend_harness import clean
from backend_harness import options
from backend_harness import text_of

from hive_core.child_processes import child_supervisor
from hive_core.child_processes import open_child
from hive_core.runners import collect_turn
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TurnEndEvent
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.transport import ProcessTransport

pytestmark = pytest.mark.anyio

WAIT = 20.0


def failure(events: list[Event]) -> ErrorEvent:
    """The turn's one ``error``, asserted to come right before a ``turn_end`` without stop reason."""
    clean(events)
    assert len(events) >= 2
    error, end = events[-2], events[-1]
    assert isinstance(error, ErrorEvent), events
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason is None
    return error


async def run_failing(tmp_path: Path, transcript: str, **more: object) -> tuple[ErrorEvent, float]:
    backend = AcpBackend(SPEC, options(tmp_path, transcript, **more))  # pyright: ignore[reportArgumentType]
    started = time.monotonic()
    try:
        with anyio.fail_after(WAIT):
            events = await collect_turn(backend, "hello")
    finally:
        await backend.aclose()
    took = time.monotonic() - started
    assert not marked_processes(child_supervisor().marker), "a child outlived the failure"
    return failure(events), took


async def test_a_cli_that_exits_at_start_is_an_error_quoting_its_stderr(tmp_path: Path) -> None:
    error, took = await run_failing(tmp_path, "exit-at-start")
    assert error.code == "internal"
    assert "exited with code 3" in error.message
    assert "no configuration found" in error.message
    assert took < 5.0


async def test_a_cli_that_prints_only_non_json_is_an_error_counting_the_lines(tmp_path: Path) -> None:
    error, _ = await run_failing(tmp_path, "non-json")
    assert error.code == "internal"
    assert "3 line(s) on stdout were not JSON-RPC" in error.message
    assert "Welcome to FakeCLI" in error.message or "[1, 2, 3]" in error.message


async def test_a_cli_that_dies_mid_turn_is_an_error_and_closes_the_started_tool(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "dies-mid-turn"))
    try:
        with anyio.fail_after(WAIT):
            events = await collect_turn(backend, "do it")
    finally:
        await backend.aclose()
    error = failure(events)
    assert error.code == "internal"
    assert "exited with code 2 during the turn" in error.message
    assert "panic: index out of range" in error.message
    assert text_of(events) == "Working on "
    assert not marked_processes(child_supervisor().marker)


@pytest.mark.parametrize(
    ("transcript", "method", "hint"),
    [("hang-at-start", "initialize", "Please log in"), ("hang-at-session", "session/new", "model catalog")],
    ids=["initialize", "session"],
)
async def test_a_cli_that_never_answers_a_start_request_times_out(
    tmp_path: Path, transcript: str, method: str, hint: str
) -> None:
    """A CLI silent at ``initialize`` or at ``session/new`` times out, saying which request and what to check."""
    error, took = await run_failing(tmp_path, transcript, startup_timeout=0.5)
    assert error.code == "timeout"
    assert f"did not answer {method} within 0.5 s" in error.message
    assert hint in error.message
    assert took < 5.0


async def test_a_missing_program_is_a_clear_error_with_the_install_command(tmp_path: Path) -> None:
    backend = AcpBackend(
        SPEC.__class__(
            name="fake", title="Fake", executables=("no-such-acp-cli-h1a",), install_hint="npm i -g fake"
        ),
        BackendOptions(cwd=tmp_path),
    )
    with anyio.fail_after(WAIT):
        events = await collect_turn(backend, "hello")
    error = failure(events)
    assert "no-such-acp-cli-h1a" in error.message
    assert "npm i -g fake" in error.message
    with pytest.raises(BackendNotInstalled):
        await backend(__import__("hive_protocol").UserMessageRequest(content="x"), lambda event: None)


async def test_noise_before_and_between_messages_and_json_rpc_dialects_are_tolerated(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "noisy-start"))
    try:
        with anyio.fail_after(WAIT):
            events = clean(await collect_turn(backend, "hello"))
        connection = backend.last_connection
        assert connection is not None
        assert connection.transport is not None
        assert connection.transport.invalid_lines == 2
    finally:
        await backend.aclose()
    assert text_of(events) == "Fine."


async def read_all(cap: int | None) -> tuple[list[dict[str, object]], ProcessTransport]:
    """Every message a child printing a 20 MiB line, a 5000-byte junk line and a small line yields."""
    script = (
        "import json, sys\n"
        "sys.stdout.write(json.dumps({'id': 1, 'result': {'text': 'x' * (20 * 1024 * 1024)}}) + '\\n')\n"
        "sys.stdout.write('y' * 5000 + '\\n')\n"
        "sys.stdout.write(json.dumps({'id': 2, 'result': None}) + '\\n')\n"
    )
    return await read_child(script, cap)


async def read_child(script: str, cap: int | None = None) -> tuple[list[dict[str, object]], ProcessTransport]:
    """Every message the transport yields from a child running ``script``, read to its end."""
    process = await open_child([sys.executable, "-c", script])
    transport = ProcessTransport(process) if cap is None else ProcessTransport(process, max_line_bytes=cap)
    messages: list[dict[str, object]] = []
    try:
        with anyio.fail_after(WAIT):
            while (message := await transport.receive()) is not None:
                messages.append(message)
    finally:
        process.kill_tree()
        await process.aclose()
    return messages, transport


async def test_the_transport_reads_huge_lines_and_counts_the_ones_past_its_cap() -> None:
    # Above the 16 MiB default of hive's own protocol lines: some CLIs send a whole file in one message.
    messages, transport = await read_all(None)
    assert [message["id"] for message in messages] == [1, 2]
    assert transport.invalid_lines == 1  # the junk line
    messages, transport = await read_all(4096)
    assert messages == [{"id": 2, "result": None}]
    assert transport.invalid_lines == 2
    assert "exceeds the limit of 4096 bytes" in transport.last_invalid[0]


async def test_a_line_nested_past_the_decoders_depth_is_an_invalid_line_not_a_crash() -> None:
    script = (
        "import sys\n"
        "sys.stdout.write('[' * 200000 + ']' * 200000 + '\\n')\n"
        'sys.stdout.write(\'{"id": 3, "result": null}\\n\')\n'
    )
    messages, transport = await read_child(script)
    assert messages == [{"id": 3, "result": None}]
    assert transport.invalid_lines == 1
