"""``hive acp`` driven by the real ``acpx`` ACP client from npm (installed by ``.ci/agent-clis``), against the
scripted model: a one-shot prompt whose edit ``acpx`` approves or denies, read back from its JSON-RPC log."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import pytest
from agent_cli_harness import agent_clis_bin
from cli_harness import HIVE
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text
from test_acp_agent import ASK_EDITS

from hive_conformance.model_server import ScriptedModelServer

pytestmark = pytest.mark.slow


def acpx(ws: Workspace, *args: str) -> tuple[int, list[dict[str, Any]]]:
    """Run ``acpx --agent "hive acp" args…`` in the project: its exit code and every JSON-RPC message it logged
    (``--format json``)."""
    program = agent_clis_bin() / "acpx"
    if not os.access(program, os.X_OK):
        pytest.skip(f"{program} is not installed (run .ci/agent-clis and set HIVE_AGENT_CLIS_BIN)")
    ws.trust_now()
    env = {**ws.env, "HOME": str(ws.root), "PATH": f"{program.parent}{os.pathsep}{ws.env.get('PATH', '')}"}
    command = [str(program), "--agent", f"{HIVE} acp", "--format", "json", "--cwd", str(ws.project), *args]
    done = subprocess.run(
        command, env=env, cwd=ws.project, capture_output=True, text=True, timeout=TIMEOUT * 2, check=False
    )
    return done.returncode, [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


@pytest.mark.parametrize("policy", ["--approve-all", "--deny-all"])
def test_acpx_runs_a_turn_and_answers_the_edit(
    ws: Workspace, server: ScriptedModelServer, policy: str
) -> None:
    server.add(calls(("w1", "write_file", {"path": "out.txt", "content": "hi"})))
    server.add(text("Wrote ", "it."))
    ws.use(server).permissions(ASK_EDITS)
    code, messages = acpx(ws, policy, "exec", "write it")
    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    [asked] = [m["params"] for m in messages if m.get("method") == "session/request_permission"]
    [diff] = asked["toolCall"]["content"]
    assert (diff["type"], diff["newText"]) == ("diff", "hi")
    assert asked["toolCall"]["kind"] == "edit"
    [ended] = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    chunks = [u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(chunks) == "Wrote it."  # chunks waiting while an update is written go out merged
    [answer] = [m["result"] for m in messages if "result" in m and "stopReason" in m["result"]]
    assert answer["stopReason"] == "end_turn"
    if policy == "--approve-all":
        assert code == 0
        assert ended["status"] == "completed"
        assert (ws.project / "out.txt").read_text(encoding="utf-8") == "hi"
    else:
        assert code == 5  # acpx's exit code for a turn in which it denied a permission
        assert ended["status"] == "failed"
        assert not (ws.project / "out.txt").exists()
