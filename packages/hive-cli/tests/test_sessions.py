"""Sessions: what ``-p`` records, ``-c``/``-r`` resuming with the earlier tool calls, ``--fork``, ``sessions
list``/``delete`` and their JSON documents, and a ``kill -9`` in the middle of a turn."""

from __future__ import annotations

import re

from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import assistant_texts
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_core.sessions import INTERRUPTED_NOTE

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z$")
SUMMARY_KEYS = {"id", "status", "model", "created", "message_count", "first_message"}


def tool_turn(ws: Workspace, server: ScriptedModelServer) -> str:
    """Run a ``-p`` turn that reads a.txt through a tool call; return its session id."""
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(calls(("call_r", "read_file", {"path": "a.txt"})), text("It says alpha."))
    result = ws.use(server).allow_all().run("-p", "read a.txt", "-o", "json")
    assert result.code == 0, result
    session_id: str = result.line_document()["session_id"]
    return session_id


def assert_shows_the_earlier_call(request: RecordedRequest) -> None:
    [call] = input_items(request, "function_call")
    [output] = input_items(request, "function_call_output")
    assert (call["call_id"], call["name"]) == ("call_r", "read_file")
    assert call["arguments"].replace(" ", "") == '{"path":"a.txt"}'
    assert output["call_id"] == "call_r"
    assert "alpha" in output["output"]
    assert user_texts(request)[0] == "read a.txt"
    assert "It says alpha." in assistant_texts(request)


def test_an_empty_project_lists_no_sessions(ws: Workspace) -> None:
    as_json = ws.run("sessions", "list", "-o", "json")
    assert (as_json.code, as_json.stdout) == (0, "[]\n")
    as_text = ws.run("sessions")
    assert as_text.code == 0
    assert "No sessions" in as_text.stdout


def test_list_json_documents_each_session(ws: Workspace, server: ScriptedModelServer) -> None:
    session_id = tool_turn(ws, server)
    server.add(text("Short."))
    long_prompt = "tell me " + "very " * 40 + "much"
    second = ws.run("-p", long_prompt, "-o", "json").line_document()["session_id"]
    listed = ws.run("sessions", "list", "-o", "json").line_document()
    assert [s["id"] for s in listed] == [second, session_id]  # newest first
    for summary in listed:
        assert set(summary) == SUMMARY_KEYS
        assert summary["status"] == "ended"
        assert summary["model"] == MODEL
        assert ISO.match(summary["created"]), summary
    # User and assistant messages count; the tool turn's model wrote two (the call, then the answer).
    assert [s["message_count"] for s in listed] == [2, 3]
    assert listed[1]["first_message"] == "read a.txt"
    assert len(listed[0]["first_message"]) == 100
    assert long_prompt.startswith(listed[0]["first_message"][:97])
    limited = ws.run("sessions", "list", "-n", "1", "-o", "json").line_document()
    assert [s["id"] for s in limited] == [second]
    as_text = ws.run("sessions", "list")
    assert as_text.code == 0
    assert session_id in as_text.stdout
    assert second in as_text.stdout
    # Sessions belong to their project.
    other = ws.root / "other-project"
    (other / ".hive").mkdir(parents=True)
    elsewhere = ws.run("sessions", "list", "-o", "json", cwd=other)
    assert (elsewhere.code, elsewhere.stdout) == (0, "[]\n")


USAGE_OF_ONE_TEXT_ROUND = {"input_tokens": 10, "output_tokens": 2, "total_tokens": 12}


def test_continue_and_resume_show_the_model_the_earlier_tool_calls(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    session_id = tool_turn(ws, server)
    server.add(text("Continued."), text("Still alpha."))
    continued = ws.run("-c", "-p", "go on", "-o", "jsonl")
    assert continued.code == 0, continued
    records = continued.records()
    assert records[0] == {"type": "start", "session_id": session_id}
    assert records[-1] == {
        "type": "done",
        "session_id": session_id,
        "stop_reason": "completed",
        "usage": USAGE_OF_ONE_TEXT_ROUND,
    }
    assert_shows_the_earlier_call(model_requests(server)[2])
    assert user_texts(model_requests(server)[2]) == ["read a.txt", "go on"]

    resumed = ws.run("-r", session_id, "-p", "and now?", "-o", "json")
    assert resumed.code == 0, resumed
    assert resumed.line_document()["session_id"] == session_id
    request = model_requests(server)[3]
    assert_shows_the_earlier_call(request)
    assert user_texts(request) == ["read a.txt", "go on", "and now?"]
    assert "Continued." in assistant_texts(request)
    [summary] = ws.sessions()
    assert summary["message_count"] == 7


def test_fork_continues_in_a_copy_and_marks_the_original(ws: Workspace, server: ScriptedModelServer) -> None:
    session_id = tool_turn(ws, server)
    server.add(text("In the fork."))
    forked = ws.run("-r", session_id, "--fork", "-p", "branch off", "-o", "json")
    assert forked.code == 0, forked
    fork_id = forked.line_document()["session_id"]
    assert fork_id != session_id
    assert_shows_the_earlier_call(model_requests(server)[2])
    by_id = {s["id"]: s for s in ws.sessions()}
    assert by_id[session_id]["status"] == "forked"
    assert by_id[session_id]["message_count"] == 3
    assert by_id[fork_id]["message_count"] == 5
    # The original is still there to resume, unchanged by the fork's turn.
    server.add(text("Original."))
    again = ws.run("-r", session_id, "-p", "back here", "-o", "json")
    assert again.code == 0, again
    assert user_texts(model_requests(server)[3]) == ["read a.txt", "back here"]


def test_delete_asks_in_text_mode_and_documents_json(ws: Workspace, server: ScriptedModelServer) -> None:
    session_id = tool_turn(ws, server)
    # Text mode asks first, and with no terminal to ask at it deletes nothing.
    refused = ws.run("sessions", "delete", session_id)
    assert refused.code == 1, refused
    assert "--yes" in refused.stderr
    assert [s["id"] for s in ws.sessions()] == [session_id]

    deleted = ws.run("sessions", "delete", session_id, "-o", "json")
    assert deleted.code == 0, deleted
    assert deleted.line_document() == {"deleted": session_id, "success": True}
    assert ws.sessions() == []
    again = ws.run("sessions", "delete", session_id, "-o", "json")
    assert again.code == 1, again
    doc = again.line_document()
    assert set(doc) == {"error", "exit_code"}
    assert doc["exit_code"] == 1
    assert session_id in doc["error"]
    missing = ws.run("sessions", "delete", "-o", "json")
    assert missing.code == 1, missing
    assert missing.line_document()["exit_code"] == 1
    resumed = ws.run("-r", session_id, "-p", "hi", "-o", "json")
    assert resumed.code == 1
    assert resumed.line_document()["exit_code"] == 1

    # A server started and ended at once leaves an empty session behind; --yes deletes without asking.
    assert ws.run("run", "--server", "--session-id", "other-1", input="").code == 0
    assert [s["id"] for s in ws.sessions()] == ["other-1"]
    confirmed = ws.run("sessions", "delete", "other-1", "--yes")
    assert (confirmed.code, confirmed.stdout) == (0, "Deleted other-1.\n")
    assert ws.sessions() == []


def test_kill_9_mid_turn_keeps_the_finished_tool_round_for_the_resume(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(("call_r", "read_file", {"path": "a.txt"})),
        text("It ", "says ", *["more " for _ in range(40)], delay=0.5),
    )
    with ws.use(server).allow_all().start("-p", "read a.txt", "-o", "jsonl") as proc:
        proc.close_stdin()  # nothing is piped in: -p need not wait for it
        start = proc.next_event()
        session_id = start["session_id"]
        assert proc.next_event()["type"] == "tool_call"
        assert proc.next_event()["type"] == "tool_result"
        assert proc.next_event() == {"type": "text", "content": "It "}
        proc.kill()
    assert proc.process.returncode == -9
    [summary] = ws.sessions()
    assert summary["id"] == session_id
    assert summary["status"] == "active"

    server.add(text("Resumed."))
    result = ws.run("-c", "-p", "what happened?", "-o", "json")
    assert result.code == 0, result
    assert result.line_document()["session_id"] == session_id
    request = model_requests(server)[2]
    [call] = input_items(request, "function_call")
    [output] = input_items(request, "function_call_output")
    assert call["call_id"] == output["call_id"] == "call_r"
    assert "alpha" in output["output"]
    # The model is told the earlier turn was cut short, then reads the new prompt.
    first, note, last = user_texts(request)
    assert (first, last) == ("read a.txt", "what happened?")
    assert note == INTERRUPTED_NOTE
    [after] = ws.sessions()
    assert after["status"] == "ended"
