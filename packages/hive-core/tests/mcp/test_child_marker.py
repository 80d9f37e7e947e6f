"""An MCP stdio server is a supervised child: it carries hive's owner marker, so it dies with hive, and what it
leaves running outside its process group dies when it is stopped."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Final

import anyio
import pytest
from mcp_harness import WAIT
from mcp_harness import stdio_plugin

from hive_core import ToolContext
from hive_core.child_processes import OWNER_VARIABLE
from hive_core.child_processes import child_supervisor
from hive_core.child_processes._watchdog import marked_processes  # pyright: ignore[reportPrivateUsage]
from hive_core.mcp import McpPlugins
from hive_core.mcp import PluginConfig

pytestmark = pytest.mark.anyio

LEAVER: Final = textwrap.dedent(
    """
    import subprocess, sys
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("leaver", log_level="WARNING")

    @server.tool()
    def leave() -> int:
        \"\"\"Start a process in a session of its own and return its pid.\"\"\"
        return subprocess.Popen(["sleep", "305"], start_new_session=True).pid

    server.run("stdio")
    """
)


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_gone(pid: int) -> None:
    """Poll until ``pid`` is dead (everything else has ended by then: nothing waits on the event loop)."""
    deadline = time.monotonic() + WAIT
    while running(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs after {WAIT:g} s"
        time.sleep(0.01)


async def test_a_stdio_server_carries_the_owner_marker() -> None:
    supervisor = child_supervisor()
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            tools = {item.name: item for item in plugins.tools}
            context = ToolContext("call_1", "mcp__srv__environment", Path.cwd(), lambda event: None)
            outcome = await tools["mcp__srv__environment"].invoke({"key": OWNER_VARIABLE}, context)
            assert outcome.content.startswith(f"{supervisor.marker}.")
            pid = int((await tools["mcp__srv__pid"].invoke({}, context)).content)
            # What the watchdog looks for once hive is gone.
            assert pid in set(marked_processes(f"{OWNER_VARIABLE}={supervisor.marker}".encode()))
            assert supervisor.watchdog_pid is not None


@pytest.mark.skipif(not Path("/proc/self").exists(), reason="marks are found in /proc")
async def test_what_a_stopped_server_left_running_is_killed(tmp_path: Path) -> None:
    script = tmp_path / "leaver.py"
    script.write_text(LEAVER, encoding="utf-8")
    plugin = PluginConfig(name="leaver", command=sys.executable, arguments=(str(script),), timeout=WAIT)
    left = 0
    try:
        with anyio.fail_after(WAIT):
            async with McpPlugins([plugin]) as plugins:
                [leave] = [item for item in plugins.tools if item.name == "mcp__leaver__leave"]
                context = ToolContext("call_1", leave.name, Path.cwd(), lambda event: None)
                left = int((await leave.invoke({}, context)).content)
                assert running(left)
        wait_gone(left)  # the SDK stopped the server; the plugin's end killed what it left
    finally:
        if left and running(left):
            os.kill(left, signal.SIGKILL)
