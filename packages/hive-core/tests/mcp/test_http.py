"""MCP plugins over streamable HTTP, against the test server serving on 127.0.0.1 in its own process."""

from __future__ import annotations

import socket
from pathlib import Path

import anyio
import anyio.abc
import pytest
from mcp_harness import WAIT
from mcp_harness import Signals
from mcp_harness import assert_cancelled_on_the_server
from mcp_harness import error_of
from mcp_harness import http_plugin

from hive_core import ToolContext
from hive_core import ToolOutcome
from hive_core.mcp import McpPlugins
from hive_core.mcp import PluginConfig
from hive_core.mcp import ProtocolMode

pytestmark = pytest.mark.anyio

HttpServer = tuple[str, anyio.abc.Process]


async def call(plugins: McpPlugins, name: str, **arguments: object) -> ToolOutcome:
    found = plugins.tool(name)
    assert found is not None, f"{name} is not offered"
    return await found.invoke(arguments, ToolContext("call_1", name, Path.cwd(), lambda event: None))


async def test_tools_are_listed_and_called_with_the_configured_headers(http_server: HttpServer) -> None:
    url, _ = http_server
    with anyio.fail_after(WAIT):
        async with McpPlugins([http_plugin(url, Authorization="Bearer sesame")]) as plugins:
            assert plugins.status() == {"web": "ready"}
            assert {"mcp__web__echo", "mcp__web__header", "mcp__web__dotted_name"} <= {
                t.name for t in plugins.tools
            }
            assert (await call(plugins, "mcp__web__echo", text="over http")).content == "over http"
            assert (await call(plugins, "mcp__web__header", key="authorization")).content == "Bearer sesame"
            failed = await call(plugins, "mcp__web__fail", message="no such row")
            assert "no such row" in error_of(failed)


async def test_a_stopped_http_call_is_cancelled_on_the_server(http_server: HttpServer) -> None:
    url, _ = http_server
    with anyio.fail_after(WAIT):
        async with Signals().open() as signals, McpPlugins([http_plugin(url)]) as plugins:

            async def slow_call(port: int) -> object:
                return await call(plugins, "mcp__web__slow", seconds=60, signal_port=port)

            await assert_cancelled_on_the_server(signals, slow_call)
            assert (await call(plugins, "mcp__web__echo", text="still")).content == "still"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_http_server_announcing_a_change_is_listed_again(
    http_server: HttpServer, mode: ProtocolMode
) -> None:
    url, _ = http_server
    with anyio.fail_after(WAIT):
        async with McpPlugins([http_plugin(url)], mode=mode) as plugins:
            connection = plugins.connections["web"]
            assert (await call(plugins, "mcp__web__grow")).content == "grown"
            await connection.wait_for(lambda c: any(info.name == "extra" for info in c.tools))
            assert (await call(plugins, "mcp__web__extra", value=5)).content == "10"


async def test_a_crashed_http_server_is_a_tool_error(http_server: HttpServer) -> None:
    url, process = http_server
    with anyio.fail_after(WAIT):
        async with McpPlugins([http_plugin(url)]) as plugins:
            connection = plugins.connections["web"]
            outcome = await call(plugins, "mcp__web__crash")
            assert error_of(outcome).startswith("McpServerError: ")
            await process.wait()
            await connection.wait_for(lambda c: c.state == "failed")
            later = await call(plugins, "mcp__web__echo", text="gone?")
            assert later.error is not None
            assert "not available (failed)" in later.error


async def test_an_unreachable_url_fails_the_plugin() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    plugin = PluginConfig(
        name="nobody", transport="http", url=f"http://127.0.0.1:{port}/mcp", auto_reconnect=False
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([plugin]) as plugins:
            status = plugins.status()["nobody"]
            assert status.startswith("failed: ")
            assert "Connect" in status
            assert plugins.tools == []
