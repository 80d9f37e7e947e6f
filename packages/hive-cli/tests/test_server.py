"""``hive run --server``: the JSON Lines turn-stream server on stdin/stdout, approvals over the wire, and
approval waits that survive ``kill -9``."""

from __future__ import annotations

import re
from typing import Any

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts

from hive_conformance.model_server import ScriptedModelServer

GENERATED_ID = re.compile(r"^[0-9a-f]+-[0-9a-f]{8}$")
WRITE_CONFIG = ("c1", "write_file", {"path": "config.json", "content": '{"a": 1}'})


def assert_started(event: dict[str, Any], session_id: str | None = None) -> None:
    """``session_started``, with the given id (or a generated one: creation time and random digits, in hex), and at most a protocol version besides."""
    assert event["type"] == "session_started", event
    assert set(event) <= {"type", "session_id", "protocol_version"}, event
    if session_id is None:
        assert GENERATED_ID.match(event["session_id"]), event
    else:
        assert event["session_id"] == session_id, event


def test_session_started_comes_first_and_a_turn_streams_to_turn_end(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hi ", "there.", usage=(9, 2)))
    with ws.use(server).start("run", "--server") as proc:
        started = proc.next_event()  # before any request was written
        assert_started(started)
        proc.send({"type": "user_message", "content": "hello"})
        events = proc.events_until("turn_end")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert [e["type"] for e in events] == ["text_delta", "text_delta", "turn_end"]
    assert [e["content"] for e in events[:2]] == ["Hi ", "there."]
    end = events[-1]
    assert (end["input_tokens"], end["output_tokens"], end["total_tokens"]) == (9, 2, 11)
    assert end["stop_reason"] == "completed"
    assert user_texts(model_requests(server)[0]) == ["hello"]
    # The turn was recorded under the announced id.
    [session] = ws.sessions()
    assert session["id"] == started["session_id"]
    assert session["message_count"] == 2


def test_asked_calls_are_approved_or_rejected_over_the_wire(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        calls(WRITE_CONFIG),
        text("Written."),
        calls(("c2", "write_file", {"path": "other.json", "content": "{}"})),
        text("Understood."),
    )
    with ws.use(server).start("run", "--server", "--session-id", "wire-1") as proc:
        assert_started(proc.next_event(), "wire-1")
        proc.send({"type": "user_message", "content": "write the config"})
        head = proc.events_until("hitl_request")
        request = head[-1]
        assert [e["type"] for e in head] == ["tool_start", "hitl_request"]
        assert head[0]["call_id"] == "c1"
        assert head[0]["tool"] == "write_file"
        assert set(request) == {
            "type",
            "id",
            "action",
            "target",
            "description",
            "tool_name",
            "arguments",
            "call_id",
            "level",
        }
        assert isinstance(request["id"], str)
        assert request["id"]
        assert request["call_id"] == "c1"
        assert request["tool_name"] == "write_file"
        assert request["target"] == "config.json"
        assert request["arguments"] == {"path": "config.json", "content": '{"a": 1}'}
        assert request["level"] in ("low", "medium", "high", "critical")
        assert request["action"]
        assert isinstance(request["description"], str)
        assert not (ws.project / "config.json").exists()
        proc.send({"type": "hitl_response", "id": request["id"], "approved": True, "reason": "fine"})
        approved = proc.events_until("turn_end")

        proc.send({"type": "user_message", "content": "and the other one"})
        second = proc.events_until("hitl_request")[-1]
        assert second["call_id"] == "c2"
        assert second["id"] != request["id"]
        # Without an id, the answer goes to the one request that waits.
        proc.send({"type": "hitl_response", "approved": False, "reason": "not today"})
        rejected = proc.events_until("turn_end")
        proc.close_stdin()  # the end of input ends the session like shutdown
        assert proc.wait() == 0, proc.stderr
    assert [e["type"] for e in approved] == ["tool_end", "text_delta", "turn_end"]
    assert approved[0]["success"] is True
    assert approved[0]["call_id"] == "c1"
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    assert approved[-1]["stop_reason"] == "completed"
    end = rejected[0]
    assert (end["type"], end["call_id"], end["success"], end["refusal"]) == (
        "tool_end",
        "c2",
        False,
        "rejected",
    )
    assert "not today" in end["output"]
    assert not (ws.project / "other.json").exists()
    [_, output] = input_items(model_requests(server)[3], "function_call_output")
    assert output["call_id"] == "c2"
    assert "not today" in output["output"]


def test_unreadable_lines_are_errors_and_cancel_ends_only_the_turn(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text(*[f"w{i} " for i in range(40)], delay=0.5), text("Still here."))
    with ws.use(server).start("run", "--server") as proc:
        proc.next_event()
        assert proc.process.stdin is not None
        proc.process.stdin.write(b"{not json\n")
        proc.process.stdin.flush()
        error = proc.next_event()
        assert error["type"] == "error"
        assert error["code"] == "unreadable_request"
        proc.send({"type": "user_message", "content": "talk slowly"})
        assert proc.next_event()["type"] == "text_delta"
        proc.send({"type": "cancel"})
        cancelled = proc.events_until("turn_end")[-1]
        assert cancelled["stop_reason"] == "cancelled"
        proc.send({"type": "user_message", "content": "are you there?"})
        events = proc.events_until("turn_end")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert "".join(e["content"] for e in events if e["type"] == "text_delta") == "Still here."
    assert events[-1]["stop_reason"] == "completed"


def test_an_invalid_session_id_or_no_provider_is_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    unconfigured = ws.run("run", "--server", input="")
    assert unconfigured.code == 1, unconfigured
    assert unconfigured.stdout == ""
    assert "LMSUPPLY_ENABLED" in unconfigured.stderr
    result = ws.use(server).run("run", "--server", "--session-id", "no spaces/allowed", input="")
    assert result.code == 1, result
    assert result.stdout == ""
    assert "session" in result.stderr.lower()


def test_an_approval_wait_survives_kill_9_and_is_asked_again_with_the_same_id(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(WRITE_CONFIG, say="Let me write it."))
    ws.use(server)
    with ws.start("run", "--server", "--session-id", "durable-1") as first:
        assert_started(first.next_event(), "durable-1")
        first.send({"type": "user_message", "content": "write the config"})
        asked = first.events_until("hitl_request")[-1]
        first.kill()  # kill -9 while the call waits
    assert not (ws.project / "config.json").exists()

    server.add(text("Config written."), text("Yes, it is there."))
    with ws.start("run", "--server", "--session-id", "durable-1") as second:
        assert_started(second.next_event(), "durable-1")
        # Re-sent before any request is read (after the call's tool_start, sent again too).
        resent = second.events_until("hitl_request")
        assert [e["type"] for e in resent] == ["tool_start", "hitl_request"]
        assert resent[0]["call_id"] == "c1"
        assert resent[-1] == asked
        # A message sent meanwhile queues behind the resumed turn.
        second.send({"type": "user_message", "content": "is it there?"})
        second.send({"type": "hitl_response", "id": asked["id"], "approved": True})
        rest = second.events_until("turn_end")
        assert rest[0]["type"] == "tool_end"
        assert rest[0]["success"] is True
        assert "".join(e["content"] for e in rest if e["type"] == "text_delta") == "Config written."
        assert rest[-1]["stop_reason"] == "completed"
        assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
        follow = second.events_until("turn_end")
        second.send({"type": "shutdown"})
        assert second.wait() == 0, second.stderr
    assert "".join(e["content"] for e in follow if e["type"] == "text_delta") == "Yes, it is there."
    # The resumed round showed the model its call and the approved result; so did the next turn.
    for request in model_requests(server)[1:]:
        [call] = input_items(request, "function_call")
        [output] = input_items(request, "function_call_output")
        assert call["call_id"] == output["call_id"] == "c1"
    assert user_texts(model_requests(server)[2])[-1] == "is it there?"

    # Nothing waits any more: a third server for the session asks nothing, and knows the conversation.
    server.add(text("Third."))
    with ws.start("run", "--server", "--session-id", "durable-1") as third:
        assert_started(third.next_event(), "durable-1")
        third.send({"type": "user_message", "content": "still there?"})
        events = third.events_until("turn_end")
        third.close_stdin()
        assert third.wait() == 0, third.stderr
    assert [e["type"] for e in events] == ["text_delta", "turn_end"]
    assert user_texts(model_requests(server)[3])[-2:] == ["is it there?", "still there?"]
    server.assert_consumed()
    assert [s["id"] for s in ws.sessions()] == ["durable-1"]
