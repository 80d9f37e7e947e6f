"""A published third-party MCP server: the reference filesystem server from npm, driven through hive's loop.

The server is looked for as ``$HIVE_TEST_MCP_NPM_PREFIX/node_modules/.bin/mcp-server-filesystem`` (the prefix
defaults to ``/tmp/mcp-npm``); install it with
``npm install --prefix /tmp/mcp-npm @modelcontextprotocol/server-filesystem``. Without node or the package the
tests are skipped, saying which is missing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from core_harness import assert_verified
from core_harness import of_type
from mcp_harness import WAIT

from hive_core import Agent
from hive_core import ChatOptions
from hive_core import Message
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.mcp import McpPlugins
from hive_core.mcp import PluginConfig
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import ToolEndEvent

NPM_PREFIX_VAR = "HIVE_TEST_MCP_NPM_PREFIX"
SERVER = (
    Path(os.environ.get(NPM_PREFIX_VAR) or "/tmp/mcp-npm") / "node_modules" / ".bin" / "mcp-server-filesystem"
)


def _missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not on PATH"
    if not SERVER.exists():
        return (
            f"{SERVER} is missing: npm install --prefix {SERVER.parents[2]} @modelcontextprotocol/server-filesystem"
            f" (or set {NPM_PREFIX_VAR})"
        )
    return None


pytestmark = [pytest.mark.anyio, pytest.mark.skipif(_missing() is not None, reason=_missing() or "")]


def filesystem(root: Path) -> PluginConfig:
    return PluginConfig(name="fs", command=str(SERVER), arguments=(str(root),), timeout=20.0)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = (tmp_path / "files").resolve()
    directory.mkdir()
    (directory / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    (directory / "sub").mkdir()
    return directory


async def test_the_filesystem_server_tools_are_offered_with_their_annotations(root: Path) -> None:
    with anyio.fail_after(WAIT):
        async with McpPlugins([filesystem(root)]) as plugins:
            connection = plugins.connections["fs"]
            assert connection.state == "ready"
            assert connection.protocol_version is not None
            read = plugins.tool("mcp__fs__read_text_file")
            write = plugins.tool("mcp__fs__write_file")
            assert read is not None
            assert write is not None
            assert read.read_only
            assert not write.read_only
            assert "path" in read.parameters["properties"]


async def test_a_turn_reads_a_file_and_is_refused_outside_the_root(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("top secret\n", encoding="utf-8")

    def saw_the_file(messages: Sequence[Message], options: ChatOptions) -> None:
        contents = {r.call_id: (r.content, r.is_error) for r in messages[-1].tool_results}
        assert contents["r1"] == ("remember the milk\n", False)
        assert contents["r2"][1] is True

    model = ScriptedChatClient(
        [
            call(
                ("mcp__fs__read_text_file", {"path": str(root / "notes.txt")}, "r1"),
                ("mcp__fs__read_text_file", {"path": str(outside)}, "r2"),
            ),
            ScriptedRound(reply("The note says to remember the milk.").updates, check=saw_the_file),
        ]
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([filesystem(root)]) as plugins:
            agent = Agent(model, tools=plugins.tools, working_dir=root, policy=ALLOW_ALL)
            events = await collect_turn(agent.session(), "what does my note say?")
    model.assert_consumed()
    assert_verified(events)
    ends = {event.call_id: event for event in of_type(events, ToolEndEvent)}
    assert (ends["r1"].success, ends["r1"].output) == (True, "remember the milk\n")
    assert not ends["r2"].success
    assert ends["r2"].refusal is None
    assert ends["r2"].output is not None
    assert "outside allowed directories" in ends["r2"].output


async def test_the_permission_rules_keep_the_model_from_writing(root: Path) -> None:
    rules = PermissionRules(
        mcp_tools=(
            PermissionRule(pattern="mcp__fs__*", action="allow"),
            PermissionRule(
                pattern="mcp__fs__write_file", action="deny", priority=10, reason="Read-only session"
            ),
        ),
        default_action="deny",
    )
    target = root / "new.txt"
    model = ScriptedChatClient(
        [
            call(
                ("mcp__fs__write_file", {"path": str(target), "content": "x"}, "w1"),
                ("mcp__fs__list_directory", {"path": str(root)}, "l1"),
            ),
            reply("done"),
        ]
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([filesystem(root)]) as plugins:
            agent = Agent(model, tools=plugins.tools, policy=PermissionPolicy(rules, root), working_dir=root)
            events = await collect_turn(agent.session(), "write a file")
    ends = {event.call_id: event for event in of_type(events, ToolEndEvent)}
    assert (ends["w1"].success, ends["w1"].refusal) == (False, "denied")
    assert not target.exists()
    assert ends["l1"].success
    assert ends["l1"].output is not None
    assert "notes.txt" in ends["l1"].output
