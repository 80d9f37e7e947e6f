"""A model that gives two calls the same id: hive gives the repeat an id of its own, on every surface.

The approval over the wire reaches the call it was asked for (no wait for the approval timeout), every
``tool_start`` has its own ``tool_end``, the model is sent back a history it can pair, and ``hive -p`` counts
both calls.
"""

from __future__ import annotations

from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_protocol import verify

ASK_BEFORE_WRITING = """\
permissions:
  read: [{pattern: "**/*", action: allow}]
  edit: [{pattern: "**/*", action: ask}]
  default_action: ask
"""

SAME_ID_TWICE = calls(
    ("dup", "read_file", {"path": "notes.txt"}),
    ("dup", "write_file", {"path": "out.txt", "content": "written"}),
)


def assert_paired(server: ScriptedModelServer) -> None:
    """The second model request carries each call once, and each result answers its own call."""
    request = model_requests(server)[1]
    sent = [item["call_id"] for item in input_items(request, "function_call")]
    answered = [item["call_id"] for item in input_items(request, "function_call_output")]
    assert sent == ["dup", "dup_2"]
    assert answered == sent


def test_over_the_wire_the_approval_reaches_the_call_it_was_asked_for(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "notes.txt").write_text("the notes", encoding="utf-8")
    server.add(SAME_ID_TWICE, text("Done."))
    ws.use(server).permissions(ASK_BEFORE_WRITING)
    # The approval timeout (300 s) is far beyond the test's waits: an answer gone astray fails the test.
    with ws.start("run", "--server", "--session-id", "dups") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "go"})
        head = proc.events_until("hitl_request", timeout=30)
        asked = head[-1]
        proc.send({"type": "hitl_response", "id": asked["id"], "approved": True})
        rest = proc.events_until("turn_end", timeout=30)
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
        lines = list(proc.out)

    events: list[dict[str, Any]] = head + rest
    starts = [e["call_id"] for e in events if e["type"] == "tool_start"]
    assert starts == ["dup", "dup_2"]
    assert (asked["call_id"], asked["id"], asked["tool_name"]) == ("dup_2", "hitl-dup_2", "write_file")
    ends = {e["call_id"]: (e["tool"], e["success"]) for e in events if e["type"] == "tool_end"}
    assert ends == {"dup": ("read_file", True), "dup_2": ("write_file", True)}
    assert (ws.project / "out.txt").read_text(encoding="utf-8") == "written"
    assert events[-1]["stop_reason"] == "completed"
    assert verify(lines, turns=1) == []
    assert_paired(server)


def test_hive_p_runs_and_reports_both_calls(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "notes.txt").write_text("the notes", encoding="utf-8")
    server.add(SAME_ID_TWICE, text("Done."), text("Again."))

    result = ws.use(server).allow_all().run("-p", "go", "-o", "jsonl")

    assert result.code == 0, result
    records = result.records()
    assert [r["call_id"] for r in records if r["type"] == "tool_call"] == ["dup", "dup_2"]
    results = {r["call_id"]: r["tool"] for r in records if r["type"] == "tool_result"}
    assert results == {"dup": "read_file", "dup_2": "write_file"}
    assert (ws.project / "out.txt").read_text(encoding="utf-8") == "written"
    assert_paired(server)

    continued = ws.run("-c", "-p", "again")  # the stored session restores with the ids it was shown with
    assert continued.code == 0, continued
    restored = [item["call_id"] for item in input_items(model_requests(server)[-1], "function_call")]
    assert restored == ["dup", "dup_2"]
