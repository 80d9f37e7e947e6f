"""The fixture MCP tool server, served for real and called by the ``mcp`` SDK's client over streamable HTTP."""

from __future__ import annotations

import functools
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult
from mcp.types import TextContent

from hive_conformance import tool_server
from hive_conformance.tool_server import SERVER_NAME
from hive_conformance.tool_server import TOOL_NAMES
from hive_conformance.tool_server import FixtureToolServer

WAIT = 20
"""Seconds any one test may take: generous, since a failure to answer shows as a hang."""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    root = tmp_path / "files"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("fixture text\nline two\n", encoding="utf-8")
    (root / "sub" / "deep.txt").write_text("déjà vu", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("not for tools", encoding="utf-8")
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    return root


@pytest.fixture
def server(files: Path) -> Iterator[FixtureToolServer]:
    with FixtureToolServer(files) as server:
        yield server


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def call(url: str, name: str, **arguments: Any) -> CallToolResult:
    with anyio.fail_after(WAIT):
        async with Client(url) as client:
            return await client.call_tool(name, arguments)


@pytest.mark.anyio
async def test_the_server_offers_exactly_the_six_tools_with_their_annotations(
    server: FixtureToolServer,
) -> None:
    with anyio.fail_after(WAIT):
        async with Client(server.url) as client:
            assert client.server_info is not None
            assert client.server_info.name == SERVER_NAME == "conformance"
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert tuple(sorted(tools)) == TOOL_NAMES
    for name, tool in tools.items():
        assert tool.description, name
        assert "\n" not in tool.description, name
        assert tool.annotations is not None, name
        assert tool.output_schema is None, name
    assert {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint} == {
        "add",
        "echo",
        "fail",
        "read_fixture",
        "slow",
    }
    set_value = tools["set_value"].annotations
    assert set_value is not None
    assert (set_value.read_only_hint, set_value.destructive_hint) == (False, True)
    assert tools["add"].input_schema["required"] == ["a", "b"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("echo", {"text": "héllo, world"}, "héllo, world"),
        ("add", {"a": 2, "b": 3}, "5"),
        ("add", {"a": -7, "b": 3}, "-4"),
        ("slow", {"seconds": 0}, "slept"),
        ("read_fixture", {"path": "notes.txt"}, "fixture text\nline two\n"),
        ("read_fixture", {"path": "sub/deep.txt"}, "déjà vu"),
        ("read_fixture", {"path": "sub/../notes.txt"}, "fixture text\nline two\n"),
        ("set_value", {"key": "colour", "value": "blue"}, "colour=blue"),
    ],
)
async def test_each_tool_answers_with_one_text_block(
    server: FixtureToolServer, name: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(server.url, name, **arguments)
    assert not result.is_error
    assert text_of(result) == expected
    assert result.structured_content is None


@pytest.mark.anyio
async def test_fail_is_a_tool_error_whose_text_is_the_message(server: FixtureToolServer) -> None:
    result = await call(server.url, "fail", message="the disk is on fire")
    assert result.is_error
    assert text_of(result) == "the disk is on fire"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../secret.txt", "path is outside the fixture files: ../secret.txt"),
        ("sub/../../secret.txt", "path is outside the fixture files: sub/../../secret.txt"),
        ("escape.txt", "path is outside the fixture files: escape.txt"),
        ("missing.txt", "no such fixture file: missing.txt"),
        ("sub", "cannot read fixture file: sub"),
        ("bad\0name", "invalid fixture path: bad\0name"),
    ],
)
async def test_read_fixture_reads_nothing_outside_the_files_directory(
    server: FixtureToolServer, path: str, message: str
) -> None:
    result = await call(server.url, "read_fixture", path=path)
    assert result.is_error
    assert text_of(result) == message


@pytest.mark.anyio
async def test_an_absolute_path_is_outside_the_files_directory(
    server: FixtureToolServer, tmp_path: Path
) -> None:
    secret = str(tmp_path / "secret.txt")
    result = await call(server.url, "read_fixture", path=secret)
    assert result.is_error
    assert text_of(result) == f"path is outside the fixture files: {secret}"


@pytest.mark.anyio
async def test_close_is_prompt_while_a_slow_call_is_still_sleeping(files: Path) -> None:
    server = FixtureToolServer(files).start()
    outcome: list[BaseException | CallToolResult] = []
    try:
        with anyio.fail_after(WAIT):
            async with Client(server.url) as client:
                assert text_of(await client.call_tool("echo", {"text": "ready"})) == "ready"

                async def sleep_a_minute() -> None:
                    try:
                        outcome.append(await client.call_tool("slow", {"seconds": 60}))
                    except MCPError as error:
                        outcome.append(error)

                async with anyio.create_task_group() as group:
                    group.start_soon(sleep_a_minute)
                    # Every task here waits on the network: the call has been sent.
                    await anyio.wait_all_tasks_blocked()
                    with anyio.fail_after(5):
                        await anyio.to_thread.run_sync(server.close)
    finally:
        server.close()
    # The call ended with the server instead of sleeping on: as an error, never as "slept".
    [ended] = outcome
    assert isinstance(ended, MCPError)


@pytest.mark.anyio
async def test_it_serves_as_an_async_context_manager(files: Path) -> None:
    with anyio.fail_after(WAIT):
        async with FixtureToolServer(files) as server:
            assert text_of(await call(server.url, "echo", text="async")) == "async"


def test_the_port_is_free_and_the_url_is_the_mcp_endpoint(files: Path) -> None:
    with FixtureToolServer(files) as first, FixtureToolServer(files) as second:
        assert first.port != second.port
        assert first.url == f"http://127.0.0.1:{first.port}/mcp"
        with pytest.raises(RuntimeError, match="already started"):
            first.start()
    with pytest.raises(RuntimeError, match="not started"):
        _ = first.port
    first.close()


def test_a_closed_server_can_start_again(files: Path) -> None:
    server = FixtureToolServer(files)
    with server:
        pass
    with server:
        assert text_of(anyio.run(functools.partial(call, server.url, "add", a=1, b=1))) == "2"


def test_all_is_sorted_and_complete() -> None:
    names = tool_server.__all__
    assert names == sorted(names, key=lambda n: (not n.isupper(), n))
    assert all(hasattr(tool_server, name) for name in names)
    assert sorted(TOOL_NAMES) == list(TOOL_NAMES)


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_command_prints_a_url_that_answers_and_stops_on_sigterm(files: Path) -> None:
    command = [sys.executable, "-m", "hive_conformance.tool_server", "--files", str(files)]
    process = await anyio.open_process(command)
    try:
        assert process.stdout is not None
        with anyio.fail_after(WAIT):
            first = b""
            while not first.endswith(b"\n"):
                first += await process.stdout.receive(1)
            url = first.decode().strip()
            assert url.startswith("http://127.0.0.1:")
            assert url.endswith("/mcp")
            async with Client(url) as client:
                names = sorted(tool.name for tool in (await client.list_tools()).tools)
                assert tuple(names) == TOOL_NAMES
                assert text_of(await client.call_tool("read_fixture", {"path": "notes.txt"})).startswith(
                    "fixture"
                )
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True), anyio.fail_after(WAIT):
            await process.wait()
        await process.aclose()


def test_the_command_refuses_a_files_directory_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tool_server.main(["--files", str(tmp_path / "nowhere")]) == 2
    assert "is not a directory" in capsys.readouterr().err
