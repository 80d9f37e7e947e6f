"""The real coding-agent CLIs, offline, end to end through ``hive run --server --agent NAME``: one turn calls the
CLI's shell tool, which needs permission; the ``hitl_request`` is answered on the wire (approve in one test,
reject in the other); the tool ran only when approved; the whole event stream passes
:func:`hive_protocol.verify`; ``turn_end`` carries the usage the CLI reports; and a second server for the same
session continues the CLI's own session (the model is sent the first turn's messages again).

Each CLI is skipped, saying why, when it is not installed (``.ci/agent-clis`` installs them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from typing import Final

import pytest
from agent_clis_harness import AGENT_CLIS
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import Project
from agent_clis_harness import assert_every_tool_closed
from agent_clis_harness import assert_nothing_left
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_harness import require_cli

from hive_protocol import verify

pytestmark = pytest.mark.slow

NO_USAGE: Final = {
    "deepagents": "Deep Agents Code reports no usage over ACP",
    "reasonix": "Reasonix reports no usage over ACP",
    "kimi": "Kimi Code reports only the context in use, in a usage_update sent after the prompt's result",
}
"""The CLIs whose turns over ACP carry no token counts hive can read for the turn's ``turn_end``, and why."""

NO_RESUME: Final = {
    "gemini": "Gemini CLI 0.61.0's session/load in a new process rewrites the session file before reading it, "
    "then finds nothing to resume ('No previous sessions found for this project')",
}
"""The CLIs whose own session a new process cannot continue, and why."""

RESUME_PROMPT: Final = "hello again"


def assert_verified(lines: list[bytes]) -> None:
    violations = verify(lines)
    assert violations == [], "\n".join(str(v) for v in violations)


def assert_usage(cli: str, end: dict[str, Any]) -> None:
    if cli in NO_USAGE:
        return
    assert end.get("input_tokens") or end.get("total_tokens"), f"{cli}: turn_end without usage: {end}"


def asked_call(events: list[dict[str, Any]]) -> str:
    """The call id the (first) ``hitl_request`` of a turn asks about, after checking it was announced first."""
    asked = [e for e in events if e["type"] == "hitl_request"]
    assert asked, f"the CLI ran the turn without asking: {[e['type'] for e in events]}"
    call_id = asked[0]["call_id"]
    position = events.index(asked[0])
    assert any(e["type"] == "tool_start" and e["call_id"] == call_id for e in events[:position]), (
        f"hitl_request for {call_id} before its tool_start: {events[: position + 1]}"
    )
    return call_id


def tool_end(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    [end] = [e for e in events if e["type"] == "tool_end" and e["call_id"] == call_id]
    return end


@pytest.mark.parametrize("cli", AGENT_CLIS)
def test_an_approved_tool_runs_and_the_next_server_resumes_the_cli_session(
    cli: str, tmp_path: Path, model_servers: ModelServers
) -> None:
    require_cli(cli)
    model_server = model_servers(cli)
    project = Project.create(tmp_path)
    session_id = f"e2e-{cli}-approve"
    with project.serve(cli, model_server, session_id=session_id) as hive:
        hive.started()
        turn = hive.turn(TOOL_PROMPT, approve=True)
        assert project.tool_ran, f"{cli} did not run the approved tool; events: {turn}\n{hive.stderr[-3000:]}"
        assert hive.finish() == 0, hive.stderr
        first_pid, first_lines = hive.pid, hive.lines
    assert_verified(first_lines)
    call_id = asked_call(turn)
    assert tool_end(turn, call_id)["success"] is True
    assert_every_tool_closed(turn)
    end = turn[-1]
    assert end.get("stop_reason") == "completed", turn
    assert_usage(cli, end)
    assert_nothing_left(first_pid)

    (project.project / TOOL_FILE).unlink()
    since = len(model_server.requests)
    with project.serve(cli, model_server, session_id=session_id) as again:
        again.started()
        second = again.turn(RESUME_PROMPT, approve=None)
        assert again.finish() == 0, again.stderr
        second_pid, second_lines = again.pid, again.lines
    assert_nothing_left(second_pid)
    assert_verified(second_lines)
    texts = [request_text(r) for r in model_requests(model_server, since)]
    resumed = any(RESUME_PROMPT in text and TOOL_PROMPT in text for text in texts)
    if cli in NO_RESUME and not resumed:
        pytest.xfail(NO_RESUME[cli])
    assert second[-1].get("stop_reason") == "completed", second
    assert "MOCK_REPLY" in "".join(e["content"] for e in second if e["type"] == "text_delta"), second
    assert not project.tool_ran
    # The CLI's own session went on: the second turn's request to the model carries the first turn's prompt.
    assert any(RESUME_PROMPT in text for text in texts), f"{cli}: the second prompt never reached the model"
    assert resumed, (
        f"{cli}: the second turn's requests do not carry the first turn: its session was not resumed"
    )


@pytest.mark.parametrize("cli", AGENT_CLIS)
def test_a_rejected_tool_does_not_run(cli: str, tmp_path: Path, model_servers: ModelServers) -> None:
    require_cli(cli)
    model_server = model_servers(cli)
    project = Project.create(tmp_path)
    with project.serve(cli, model_server, session_id=f"e2e-{cli}-reject") as hive:
        hive.started()
        turn = hive.turn(TOOL_PROMPT, approve=False)
        assert hive.finish() == 0, hive.stderr
        pid, lines = hive.pid, hive.lines
    assert not project.tool_ran, f"{cli} ran the rejected tool"
    assert_verified(lines)
    call_id = asked_call(turn)
    assert tool_end(turn, call_id)["success"] is False
    assert_every_tool_closed(turn)
    end = turn[-1]
    assert end.get("stop_reason") in ("completed", "cancelled"), turn
    assert_usage(cli, end)
    assert_nothing_left(pid)
