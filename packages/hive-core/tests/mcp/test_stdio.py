"""MCP plugins over stdio, against the test server written with the ``mcp`` SDK (a real child process)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp_harness import SERVER_SCRIPT
from mcp_harness import WAIT
from mcp_harness import Signals
from mcp_harness import assert_cancelled_on_the_server
from mcp_harness import error_of
from mcp_harness import process_exists
from mcp_harness import stdio_plugin

from hive_core import ToolArgumentError
from hive_core import ToolContext
from hive_core import ToolOutcome
from hive_core.mcp import McpConnection
from hive_core.mcp import McpPlugins
from hive_core.mcp import McpTool
from hive_core.mcp import PluginConfig
from hive_core.mcp import PluginsConfig
from hive_core.mcp import ProtocolMode
from hive_core.messages import ToolCallPart
from hive_core.pipeline import Invocation
from hive_core.pipeline import Timeout

pytestmark = pytest.mark.anyio

_VALID_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


def context(name: str) -> ToolContext:
    return ToolContext("call_1", name, Path.cwd(), lambda event: None)


def tool(plugins: McpPlugins, name: str) -> McpTool:
    found = plugins.tool(name)
    assert found is not None, f"{name} is not offered; offered: {[t.name for t in plugins.tools]}"
    return found


async def call(plugins: McpPlugins, name: str, **arguments: object) -> ToolOutcome:
    found = tool(plugins, name)
    return await found.invoke(arguments, context(name))


async def server_pid(plugins: McpPlugins, name: str = "mcp__srv__pid") -> int:
    outcome = await call(plugins, name)
    assert outcome.success, outcome
    return int(outcome.content)


async def test_tools_are_listed_under_mcp_names_and_called() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            names = [item.name for item in plugins.tools]
            assert names == sorted(names)
            assert {"mcp__srv__echo", "mcp__srv__slow", "mcp__srv__fail", "mcp__srv__grow"} <= set(names)
            assert all(_VALID_NAME.fullmatch(name) for name in names)
            # A name the model APIs would refuse is sanitised; the server still gets its own name.
            assert "mcp__srv__dotted_name" in names
            dotted = tool(plugins, "mcp__srv__dotted_name")
            assert dotted.tool_name == "dotted.name"
            assert (await call(plugins, "mcp__srv__dotted_name")).content == "dotted"

            echo = tool(plugins, "mcp__srv__echo")
            assert echo.read_only  # from the readOnlyHint annotation
            assert not tool(plugins, "mcp__srv__slow").read_only
            assert echo.description == "Return the text unchanged."
            assert echo.parameters["type"] == "object"
            assert echo.parameters["required"] == ["text"]
            assert echo.spec.parameters is echo.parameters
            assert echo.timeout == 10.0

            outcome = await call(plugins, "mcp__srv__echo", text="hello")
            assert outcome == ToolOutcome(content="hello")


async def test_a_failing_tool_is_a_failed_outcome() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            outcome = await call(plugins, "mcp__srv__fail", message="the disk is full")
            assert not outcome.success
            assert outcome.refusal is None
            assert "the disk is full" in outcome.content
            assert outcome.error is not None
            assert outcome.error.startswith("McpToolError: ")
            assert "the disk is full" in outcome.error
            # Arguments the server rejects are its error too (isError), not a crash of the call.
            wrong = await call(plugins, "mcp__srv__echo", text=5)
            assert not wrong.success
            assert wrong.error is not None
            # A missing required argument is caught before the call, for the pipeline's recovery directive.
            with pytest.raises(ToolArgumentError) as caught:
                await call(plugins, "mcp__srv__echo")
            assert caught.value.missing == "text"


async def test_leaving_stops_the_server_process() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            pid = await server_pid(plugins)
            assert process_exists(pid)
            connection = plugins.connections["srv"]
        assert not process_exists(pid)
        assert connection.state == "closed"
        outcome = await call(plugins, "mcp__srv__echo", text="late")
        assert "not available (closed)" in error_of(outcome)


async def test_a_stopped_call_is_cancelled_on_the_server() -> None:
    """The per-call timeout is the pipeline's, so a plain cancel scope stands in for it here."""
    with anyio.fail_after(WAIT):
        async with Signals().open() as signals, McpPlugins([stdio_plugin()]) as plugins:
            slow = tool(plugins, "mcp__srv__slow")

            async def slow_call(port: int) -> object:
                return await slow.invoke({"seconds": 60, "signal_port": port}, context(slow.name))

            await assert_cancelled_on_the_server(signals, slow_call)
            # The server is fine: the next call answers.
            assert (await call(plugins, "mcp__srv__echo", text="still here")).content == "still here"


async def test_a_crashed_server_is_a_tool_error_and_is_restarted() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            connection = plugins.connections["srv"]
            first = await server_pid(plugins)
            outcome = await call(plugins, "mcp__srv__crash")
            assert error_of(outcome).startswith("McpServerError: ")
            assert "closed the connection during the call" in outcome.error
            assert "being restarted" in outcome.error
            await connection.wait_for(lambda c: c.connection_count == 2 and c.state == "ready")
            assert not process_exists(first)
            second = await server_pid(plugins)
            assert second != first
            assert (await call(plugins, "mcp__srv__echo", text="back")).content == "back"


async def test_a_crashed_server_without_auto_reconnect_stays_down() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin(auto_reconnect=False)]) as plugins:
            connection = plugins.connections["srv"]
            outcome = await call(plugins, "mcp__srv__crash")
            assert outcome.error is not None
            assert "not restarted" in outcome.error
            await connection.wait_for(lambda c: c.state == "failed")
            assert connection.error == "the server closed the connection"
            # Its tools stay offered, so the model learns why a call cannot run instead of losing the tool.
            later = await call(plugins, "mcp__srv__echo", text="anyone?")
            assert "not available (failed)" in error_of(later)


async def test_a_server_that_exits_while_idle_is_restarted_before_the_next_call() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            connection = plugins.connections["srv"]
            pid = await server_pid(plugins)
            os.kill(pid, signal.SIGKILL)
            await connection.wait_for(lambda c: c.connection_count == 2 and c.state == "ready")
            assert (await call(plugins, "mcp__srv__echo", text="fresh")).success


async def test_a_hung_server_times_out_and_is_restarted() -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin(timeout=1.0)]) as plugins:
            connection = plugins.connections["srv"]
            first = await server_pid(plugins)
            hang = tool(plugins, "mcp__srv__hang")
            invocation = Invocation(
                ToolCallPart("call_1", hang.name, "{}", {}),
                hang,
                {},
                context(hang.name),
                timeout=hang.timeout,
            )

            async def run(invocation: Invocation) -> ToolOutcome:
                assert invocation.tool is not None
                return await invocation.tool.invoke(invocation.arguments, invocation.context)

            outcome = await Timeout()(invocation, run)
            assert outcome.refusal == "timed_out"
            # Stopping the call made hive check the server; it did not answer, so it is restarted.
            await connection.wait_for(lambda c: c.state == "reconnecting")
            assert connection.error == "the server stopped answering (no answer within 1 s)"
            await connection.wait_for(lambda c: c.connection_count == 2 and c.state == "ready")
            assert connection.error is None
            assert not process_exists(first)
            assert (await call(plugins, "mcp__srv__echo", text="awake")).content == "awake"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_tool_list_is_refreshed_when_the_server_announces_a_change(mode: ProtocolMode) -> None:
    changes: list[list[str]] = []
    with anyio.fail_after(WAIT):
        async with McpPlugins(
            [stdio_plugin()], mode=mode, on_tools_changed=lambda p: changes.append([t.name for t in p.tools])
        ) as plugins:
            connection = plugins.connections["srv"]
            assert connection.protocol_version is not None
            assert connection.protocol_version.startswith("2026" if mode == "auto" else "2025")
            registry: dict[str, object] = {"read_file": object()}
            plugins.sync_tools(registry)  # pyright: ignore[reportArgumentType]
            assert plugins.tool("mcp__srv__extra") is None
            before = len(changes)
            assert (await call(plugins, "mcp__srv__grow")).content == "grown"
            await connection.wait_for(lambda c: any(info.name == "extra" for info in c.tools))
            assert len(changes) > before
            assert "mcp__srv__extra" in changes[-1]
            assert "mcp__srv__extra" in registry
            assert "read_file" in registry
            assert (await call(plugins, "mcp__srv__extra", value=21)).content == "42"


async def test_a_server_that_cannot_start_fails_without_blocking_the_others(tmp_path: Path) -> None:
    broken = PluginConfig(name="broken", command=str(tmp_path / "no-such-server"), auto_reconnect=False)
    not_mcp = PluginConfig(
        name="silent", command=sys.executable, arguments=("-c", "pass"), auto_reconnect=False
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([broken, not_mcp, stdio_plugin()]) as plugins:
            status = plugins.status()
            assert status["srv"] == "ready"
            assert status["broken"].startswith("failed: ")
            assert "no-such-server" in status["broken"]
            assert status["silent"].startswith("failed: ")
            assert "closed the connection before it was ready" in status["silent"]
            assert {t.plugin for t in plugins.tools if isinstance(t, McpTool)} == {"srv"}


async def test_auto_connect_off_waits_for_an_explicit_connect() -> None:
    config = PluginsConfig(auto_connect=False, plugins=(stdio_plugin(),))
    with anyio.fail_after(WAIT):
        async with McpPlugins(config) as plugins:
            connection: McpConnection = plugins.connections["srv"]
            assert connection.state == "idle"
            assert plugins.tools == []
            await plugins.connect("srv")
            assert connection.state == "ready"
            assert plugins.tool("mcp__srv__echo") is not None


def test_importing_hive_core_does_not_import_the_sdk() -> None:
    code = "import sys, hive_core, hive_core.mcp; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=WAIT
    )
    assert result.stdout.strip() == "[]"


async def test_a_server_that_never_answers_fails_after_the_connect_timeout() -> None:
    mute = PluginConfig(
        name="mute",
        command=sys.executable,
        arguments=("-c", "import time; time.sleep(600)"),
        auto_reconnect=False,
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([mute], connect_timeout=0.5) as plugins:
            assert plugins.status() == {
                "mute": "failed: the server did not connect and list its tools within 0.5 s"
            }


async def test_connecting_twice_at_once_starts_the_server_once() -> None:
    config = PluginsConfig(auto_connect=False, plugins=(stdio_plugin(),))
    with anyio.fail_after(WAIT):
        async with McpPlugins(config) as plugins:
            async with anyio.create_task_group() as group:
                group.start_soon(plugins.connect, "srv")
                group.start_soon(plugins.connect, "srv")
            connection = plugins.connections["srv"]
            assert (connection.state, connection.connection_count) == ("ready", 1)


async def test_a_plugins_file_starts_its_servers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".hive").mkdir(parents=True)
    (project / "work").mkdir()
    (project / ".hive" / "plugins.yaml").write_text(
        "defaultTimeoutMs: 4000\n"
        "plugins:\n"
        "  - name: notes\n"
        f"    command: {json.dumps(sys.executable)}\n"
        f"    arguments: [{json.dumps(str(SERVER_SCRIPT))}, stdio]\n"
        "    environment: {NOTES_DIR: ./notes}\n"
        "    workingDirectory: work\n",
        encoding="utf-8",
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins.load(project, home=tmp_path / "home", trusted=True) as plugins:
            assert plugins.status() == {"notes": "ready"}
            echo = tool(plugins, "mcp__notes__echo")
            assert echo.timeout == 4.0
            assert (await call(plugins, "mcp__notes__environment", key="NOTES_DIR")).content == "./notes"
            assert Path((await call(plugins, "mcp__notes__cwd")).content) == (project / "work").resolve()
