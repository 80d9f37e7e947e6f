"""Cancelling a real coding-agent CLI's turn through ``hive run --server --agent NAME``: while its permission
request waits (mid-tool) and while its reply streams (mid-text). The turn ends ``turn_end{stop_reason:
cancelled}`` with every started tool closed, the session goes on, and once the server exits no process carrying
its owner mark is left.

Run for the three CLIs that cancel most reliably; each is skipped, saying why, when it is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

import pytest
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import Project
from agent_clis_harness import assert_every_tool_closed
from agent_clis_harness import assert_nothing_left
from agent_clis_harness import owned_processes
from agent_clis_harness import require_cli

from hive_protocol import verify

pytestmark = pytest.mark.slow

CANCEL_CLIS: Final = ("opencode-acp", "copilot-acp", "kimi")
"""The CLIs the cancel tests drive."""


@pytest.mark.parametrize("cli", CANCEL_CLIS)
def test_cancel_while_the_permission_request_waits(
    cli: str, tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli(cli)
    model_server = model_servers(cli)
    project = Project.create(tmp_path)
    with project.serve(cli, model_server, session_id=f"cancel-{cli}-tool") as hive:
        hive.started()
        hive.send({"type": "user_message", "content": TOOL_PROMPT})
        head = hive.events_until("hitl_request")
        assert owned_processes(hive.pid), "the CLI does not carry hive's owner mark"
        hive.send({"type": "cancel"})
        rest = hive.events_until("turn_end")
        after = hive.turn("hello", approve=None)
        assert hive.finish() == 0, hive.stderr
        pid, lines = hive.pid, hive.lines
    turn = head + rest
    assert turn[-1].get("stop_reason") == "cancelled", turn
    assert_every_tool_closed(turn)
    assert not project.tool_ran, f"{cli} ran the tool of a cancelled turn"
    assert after[-1].get("stop_reason") == "completed", after
    assert verify(lines) == []
    assert_nothing_left(pid)


@pytest.mark.parametrize("cli", CANCEL_CLIS)
def test_cancel_while_the_reply_streams(cli: str, tmp_path: Path, model_servers: ModelServers) -> None:
    require_cli(cli)
    model_server = model_servers(cli)
    project = Project.create(tmp_path)
    with project.serve(cli, model_server, session_id=f"cancel-{cli}-text") as hive:
        hive.started()
        hive.send({"type": "user_message", "content": SLOW_PROMPT})
        head = hive.events_until("text_delta")
        assert owned_processes(hive.pid), "the CLI does not carry hive's owner mark"
        hive.send({"type": "cancel"})
        # Bounded by the cancel's grace (5 s) before the CLI is killed, with room for a loaded machine.
        rest = hive.events_until("turn_end", timeout=20.0)
        after = hive.turn("hello", approve=None)
        assert hive.finish() == 0, hive.stderr
        pid, lines = hive.pid, hive.lines
    turn = head + rest
    assert turn[-1].get("stop_reason") == "cancelled", turn
    assert_every_tool_closed(turn)
    streamed = "".join(e["content"] for e in turn if e["type"] == "text_delta")
    # The reply takes 8 s to its last chunk: the cancelled turn ended before it.
    assert "chunk79" not in streamed, "the reply streamed to its end: nothing was cancelled"
    assert after[-1].get("stop_reason") == "completed", after
    assert verify(lines) == []
    assert_nothing_left(pid)
