"""Subagents end to end through ``hive run --server``: the ``delegate`` tool hands a task to an agent on another
scripted model (or a coding-agent CLI), with ``agent_selected`` and ``agent_work`` on the wire, its answer in the
parent's next request and its tokens in the turn's; ``maxDepth``, ``maxConcurrent``, planning mode, approvals
naming the subagent, cancelling, and definitions that cannot work."""

from __future__ import annotations

from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.recording import RecordedRequest
from hive_conformance.script import Round
from hive_protocol import verify

REVIEWER = "reviewer-model"


def _configure(ws: Workspace, server: ScriptedModelServer, agents: str, extra: str = "") -> Workspace:
    (ws.project / ".hive" / "config.yaml").write_text(
        f"delegation:\n  enabled: true\n{extra}  agents:\n{agents}", encoding="utf-8"
    )
    return ws.use(server)


REVIEWER_AGENT = (
    "    - name: reviewer\n"
    "      description: Reviews a file and says what is wrong.\n"
    "      instructions: You review files. Answer in one line.\n"
    f"      model: {REVIEWER}\n"
    "      tools: [read_file]\n"
)


def _tool_names(request: RecordedRequest) -> list[str]:
    return [tool["name"] for tool in request.body.get("tools", [])]


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["type"] == kind]


def test_a_subagent_on_another_model_answers_the_delegation(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "notes.txt").write_text("teh typo\n", encoding="utf-8")
    server.add(
        calls(("c1", "delegate", {"agent": "reviewer", "task": "Review notes.txt for typos."})),
        calls(("s1", "read_file", {"path": "notes.txt"})),
        text("One typo: teh.", usage=(100, 10)),
        text("The reviewer found one typo.", usage=(50, 5)),
    )
    with _configure(ws, server, REVIEWER_AGENT).serve() as proc:
        events = proc.turn("check my notes")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert verify([line.encode() for line in proc.stdout.splitlines(keepends=True)], turns=1) == []
    [selected] = _of(events, "agent_selected")
    assert selected["agent_name"] == "reviewer"
    assert selected["confidence"] == 1.0
    work = _of(events, "agent_work")
    assert [item["status"] for snapshot in work for item in snapshot["items"]] == [
        "running",
        "running",
        "completed",
    ]
    assert [snapshot["items"][0]["tool_calls"] for snapshot in work] == [0, 1, 1]
    last = work[-1]["items"][0]
    assert last["kind"] == "subagent"
    assert last["title"] == "reviewer: Review notes.txt for typos."
    assert last["summary"] == "One typo: teh."
    assert (last["input_tokens"], last["output_tokens"]) == (120, 15)
    # The subagent's events stay its own: the client sees the delegation, not the subagent's read.
    assert [event["tool"] for event in _of(events, "tool_start")] == ["delegate"]
    [ended] = _of(events, "tool_end")
    assert (ended["success"], ended["output"]) == (True, "One typo: teh.")

    parent_first, sub_first, sub_second, parent_last = model_requests(server)
    assert "delegate" in _tool_names(parent_first)
    delegate = next(tool for tool in parent_first.body["tools"] if tool["name"] == "delegate")
    assert "reviewer: Reviews a file and says what is wrong." in delegate["description"]
    assert delegate["parameters"]["properties"]["agent"]["enum"] == ["reviewer"]
    # Its own context: its model, its instructions, its one tool, and the task as the whole conversation.
    assert sub_first.body["model"] == REVIEWER
    assert sub_first.body["instructions"] == "You review files. Answer in one line."
    assert _tool_names(sub_first) == ["read_file"]
    assert user_texts(sub_first) == ["Review notes.txt for typos."]
    assert "teh typo" in str(input_items(sub_second, "function_call_output")[0]["output"])
    # The answer is the delegation's result in the parent's next request.
    outputs = input_items(parent_last, "function_call_output")
    assert outputs[-1]["output"] == "One typo: teh."
    assert parent_last.body["model"] != REVIEWER
    [end] = _of(events, "turn_end")
    # The parent's two rounds (20 + 50 in, 5 + 5 out) and the subagent's (20 + 100 in, 5 + 10 out).
    assert (end["input_tokens"], end["output_tokens"]) == (190, 25)

