"""``POST /api/ag-ui`` on a real ``hive serve`` over HTTP on 127.0.0.1, against the scripted model server: runs
validated with the ``ag-ui-protocol`` models and AG-UI's ordering rules, approvals and questions as interrupts
answered by ``resume``, malformed input, reconnects with ``Last-Event-ID``, the guard, and the real
``@ag-ui/client`` ``HttpAgent`` from npm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from ag_ui.core import Event
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from agent_cli_harness import agent_clis_bin
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from pydantic import TypeAdapter
from serve_harness import TOKEN
from serve_harness import Served
from serve_harness import read_sse
from serve_harness import serving
from test_serve import WRITE_CONFIG

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round

EVENT: TypeAdapter[Any] = TypeAdapter(Event)
CLIENT_SCRIPT = Path(__file__).with_name("ag_ui_client.mjs")


def run_input(thread: str, run: str, *messages: tuple[str, str], **extra: Any) -> dict[str, Any]:
    """A ``RunAgentInput``: ``messages`` as (id, text) user messages."""
    body: dict[str, Any] = {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": mid, "role": "user", "content": content} for mid, content in messages],
        "state": {},
        "tools": [],
        "context": [],
        "forwardedProps": {},
    }
    body.update(extra)
    return body


def post(served: Served, body: dict[str, Any], **headers: str) -> list[tuple[int, dict[str, Any]]]:
    """Run ``body`` and read its whole stream: (SSE id, event) each, every event checked by the AG-UI models."""
    seen: list[tuple[int, dict[str, Any]]] = []
    with served.client.stream("POST", "/api/ag-ui", json=body, headers=headers) as response:
        for place, event in read_sse(response):
            EVENT.validate_python(event)  # raises on anything AG-UI does not define
            seen.append((place, event))
    return seen


def types(events: list[tuple[int, dict[str, Any]]]) -> list[str]:
    return [event["type"] for _, event in events]


STREAMS = {
    # opening event: (its content event, its closing event, the id field)
    "TEXT_MESSAGE_START": ("TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "messageId"),
    "REASONING_START": (None, "REASONING_END", "messageId"),
    "REASONING_MESSAGE_START": ("REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END", "messageId"),
    "TOOL_CALL_START": ("TOOL_CALL_ARGS", "TOOL_CALL_END", "toolCallId"),
}


def check_order(events: list[dict[str, Any]]) -> None:
    """AG-UI's ordering rules: one RUN_STARTED first, one RUN_FINISHED/RUN_ERROR last, nothing after; every
    message, reasoning span and tool call started once and ended once, its content between; a result names a call
    that was started (in this run or an earlier one of the thread)."""
    assert events[0]["type"] == "RUN_STARTED"
    assert events[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    assert all(event["type"] not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR") for event in events[1:-1])
    started: set[tuple[str, str]] = set()
    open_ones: set[tuple[str, str]] = set()
    content = {body: opening for opening, (body, _, _) in STREAMS.items() if body}
    closing = {end: opening for opening, (_, end, _) in STREAMS.items()}
    for event in events[1:-1]:
        kind = event["type"]
        if kind in STREAMS:
            key = (kind, event[STREAMS[kind][2]])
            assert key not in started, event
            started.add(key)
            open_ones.add(key)
        elif kind in content:
            assert (content[kind], event[STREAMS[content[kind]][2]]) in open_ones, event
        elif kind in closing:
            open_ones.remove((closing[kind], event[STREAMS[closing[kind]][2]]))
    assert not open_ones


def test_a_turn_streams_as_ag_ui_events_in_order(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        text("Hi ", "there.", thinking=["Let me ", "think."]),
        calls(WRITE_CONFIG, say="Writing."),
        text("Done."),
    )
    ws.use(server)
    with serving(ws) as served:
        first = post(served, run_input("thread-1", "run-1", ("u1", "hello")))
        check_order([event for _, event in first])
        assert [place for place, _ in first] == list(range(1, len(first) + 1))
        assert types(first) == [
            "RUN_STARTED",
            "REASONING_START",
            "REASONING_MESSAGE_START",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_CONTENT",
            "REASONING_MESSAGE_END",
            "REASONING_END",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED",
        ]
        assert first[0][1]["threadId"] == "thread-1"
        assert first[0][1]["runId"] == "run-1"
        assert "outcome" not in first[-1][1]
        assert first[-1][1]["usage"][0]["inputTokens"] == 10
        # The thread is a hive session.
        assert served.client.get("/api/sessions/thread-1").json()["status"] == "idle"
        history = [("u1", "hello"), ("u2", "write the config")]
        second = post(served, run_input("thread-1", "run-2", *history))
        check_order([event for _, event in second])
        kinds = types(second)
        assert kinds[:4] == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]
        start = next(event for _, event in second if event["type"] == "TOOL_CALL_START")
        assert start["toolCallId"] == "c1"
        assert start["toolCallName"] == "write_file"
        assert start["parentMessageId"] == second[1][1]["messageId"]
        args = "".join(event["delta"] for _, event in second if event["type"] == "TOOL_CALL_ARGS")
        assert json.loads(args) == WRITE_CONFIG[2]
        # The approval ends the run with an interrupt, tied to the call.
        assert second[-1][1]["outcome"]["type"] == "interrupt"
        [interrupt] = second[-1][1]["outcome"]["interrupts"]
        assert interrupt["toolCallId"] == "c1"
        assert interrupt["reason"] == "tool_approval"
        assert interrupt["responseSchema"]["required"] == ["approved"]
        # It says when the approval stops being answerable (the session's approval timeout, 300 s by default).
        expires = datetime.strptime(interrupt["expiresAt"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert expires > datetime.now(UTC) + timedelta(seconds=60)
        assert served.client.get("/api/sessions/thread-1").json()["status"] == "waiting"
        # A new message while it waits is refused: the interrupt must be answered.
        refused = served.client.post(
            "/api/ag-ui", json=run_input("thread-1", "run-x", *history, ("u3", "hm"))
        )
        assert (refused.status_code, refused.json()["field"]) == (400, "resume")
        resume = [{"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}]
        third = post(served, run_input("thread-1", "run-3", *history, resume=resume))
        check_order([event for _, event in third])
        result = next(event for _, event in third if event["type"] == "TOOL_CALL_RESULT")
        assert result["toolCallId"] == "c1"
        assert "outcome" not in third[-1][1]
        assert "Done." in "".join(e["delta"] for _, e in third if e["type"] == "TEXT_MESSAGE_CONTENT")
        # The same resume again answers nothing twice: it is that run again.
        again = post(served, run_input("thread-1", "run-4", *history, resume=resume))
        assert again == third
        stale = served.client.post(
            "/api/ag-ui",
            json=run_input(
                "thread-1", "run-5", *history, resume=[{**resume[0], "payload": {"approved": False}}]
            ),
        )
        assert (stale.status_code, stale.json()["code"]) == (400, "stale_interrupt")
        assert interrupt["id"] in stale.json()["error"]
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    assert len(model_requests(server)) == 3
    # Only the last user message was sent: the model saw each once, from the session's own history.
    assert user_texts(model_requests(server)[-1]) == ["hello", "write the config"]


def test_malformed_input_is_a_400_naming_the_field(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    with serving(ws) as served:
        cases: list[tuple[Any, str]] = [
            ({"runId": "r", "messages": []}, "threadId"),
            ({"threadId": "t", "messages": []}, "runId"),
            (
                {"threadId": "t", "runId": "r", "messages": [{"id": "1", "role": "user"}]},
                "messages[0].content",
            ),
            (
                {"threadId": "t", "runId": "r", "messages": [{"id": "1", "role": "pirate", "content": "x"}]},
                "messages[0]",
            ),
            ({"threadId": "../etc", "runId": "r", "messages": []}, "threadId"),
            (run_input("t", "r", ("u1", "  ")), "messages[0].content"),
            (
                run_input("t", "r", resume=[{"interruptId": "nope", "status": "resolved"}]),
                "resume[0].interruptId",
            ),
        ]
        for body, where in cases:
            response = served.client.post("/api/ag-ui", json=body)
            assert response.status_code == 400, (body, response.text)
            assert response.json()["field"] == where, response.json()
        not_json = served.client.post("/api/ag-ui", content=b"{not json")
        assert not_json.status_code == 400
        assert not_json.json()["code"] == "bad_request"
        # Nothing was run: the only session is the one the stale resume opened, idle.
        sessions = served.client.get("/api/sessions").json()["sessions"]
        assert all(session["status"] == "idle" and session["queued"] == 0 for session in sessions)


def test_a_rejected_approval_and_a_reconnect_that_gets_the_rest_once(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(WRITE_CONFIG), text("Not ", "written."))
    ws.use(server)
    with serving(ws) as served:
        opening = run_input("t-2", "r-1", ("u1", "write the config"))
        # The client drops in the middle of the run (the run goes on in the session) ...
        dropped: list[tuple[int, dict[str, Any]]] = []
        with served.client.stream("POST", "/api/ag-ui", json=opening) as response:
            for place, event in read_sse(response):
                dropped.append((place, event))
                if event["type"] == "TOOL_CALL_START":
                    break
        # ... and posts the same input with the last id it saw: it gets the rest of that run, once.
        rest = post(served, opening, **{"last-event-id": str(dropped[-1][0])})
        head = post(served, opening)
        assert dropped + rest == head
        assert rest[-1][1]["type"] == "RUN_FINISHED"
        [interrupt] = head[-1][1]["outcome"]["interrupts"]
        payload = {"approved": False, "reason": "not today"}
        body = run_input(
            "t-2",
            "r-2",
            ("u1", "write the config"),
            resume=[{"interruptId": interrupt["id"], "status": "resolved", "payload": payload}],
        )
        whole = post(served, body)
        check_order([event for _, event in whole])
        result = next(event for _, event in whole if event["type"] == "TOOL_CALL_RESULT")
        assert "not today" in result["content"]
        # A client that dropped after event 3 posts the same input with Last-Event-ID: the rest, once.
        assert post(served, body, **{"last-event-id": "3"}) == whole[3:]
        # A reconnect with no new message: the conversation as a snapshot, nothing run.
        snapshot = post(served, run_input("t-2", "r-3", ("u1", "write the config")))
        assert types(snapshot) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED"]
        messages = snapshot[1][1]["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
        assert messages[0] == {"id": "u1", "role": "user", "content": "write the config"}
        assert messages[1]["toolCalls"][0]["id"] == "c1"
        assert messages[3]["content"] == "Not written."
    assert not (ws.project / "config.json").exists()
    assert len(model_requests(server)) == 2


def test_a_question_interrupt_is_answered_by_resume(ws: Workspace) -> None:
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(ASK_TRANSCRIPT))
    with serving(ws) as served:
        opened = served.client.post("/api/sessions", json={"session_id": "t-q", "backend": "reasonix"})
        assert opened.status_code == 201
        asked = post(served, run_input("t-q", "r-1", ("u1", "ASKME which database should I use?")))
        [interrupt] = asked[-1][1]["outcome"]["interrupts"]
        assert interrupt["reason"] == "question"
        choices = interrupt["responseSchema"]["properties"]["answers"]["properties"]["Which database?"]
        assert "SQLite" in json.dumps(choices)
        answer = {
            "interruptId": interrupt["id"],
            "status": "resolved",
            "payload": {"answers": {"Which database?": "SQLite"}},
        }
        done = post(served, run_input("t-q", "r-2", resume=[answer]))
        check_order([event for _, event in done])
        assert "MOCK_REPLY done" in "".join(
            e["delta"] for _, e in done if e["type"] == "TEXT_MESSAGE_CONTENT"
        )
    [chosen] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert chosen["result"]["outcome"]["outcome"] == "selected"


def test_no_run_without_the_token_or_from_another_origin(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    with serving(ws) as served, served.tokenless() as bare:
        body = run_input("t-evil", "r-1", ("u1", "rm -rf everything"))
        assert bare.post("/api/ag-ui", json=body).status_code == 401
        wrong = bare.post("/api/ag-ui", json=body, headers={"authorization": "Bearer not-the-token-at-all"})
        assert wrong.status_code == 401
        # A page on another site, even holding the cookie or the token, cannot start a run.
        foreign = served.client.post("/api/ag-ui", json=body, headers={"origin": "http://evil.example"})
        assert (foreign.status_code, foreign.json()["code"]) == (403, "forbidden_origin")
        port = served.url.rsplit(":", 1)[1]
        rebound = served.client.post("/api/ag-ui", json=body, headers={"host": f"evil.example:{port}"})
        assert (rebound.status_code, rebound.json()["code"]) == (403, "forbidden_host")
        assert served.client.get("/api/sessions").json() == {"sessions": []}
    assert model_requests(server) == []


def ag_ui_client_prefix() -> Path:
    """Where ``.ci/agent-clis`` installed ``@ag-ui/client`` (its npm prefix, beside the CLIs' bin)."""
    return agent_clis_bin().parent / "npm"


def test_the_real_ag_ui_client_runs_a_turn_and_resumes_its_approval(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the @ag-ui/client test needs it")
    prefix = ag_ui_client_prefix()
    if not (prefix / "node_modules" / "@ag-ui" / "client" / "package.json").is_file():
        pytest.skip(f"@ag-ui/client is not installed under {prefix} (.ci/agent-clis installs it)")
    server.add(calls(WRITE_CONFIG, say="Writing it."), text("Written."))
    ws.use(server)
    with serving(ws) as served:
        done = subprocess.run(
            [node, str(CLIENT_SCRIPT), str(prefix), served.url, TOKEN],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env={**os.environ, "SUPPRESS_TRANSFORMATION_WARNINGS": "true"},
            check=False,
        )
        assert done.returncode == 0, done.stderr
        status = served.client.get("/api/sessions/npm-thread").json()["status"]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["first"][0] == "RUN_STARTED"
    assert seen["first"][-1] == "RUN_FINISHED"
    [interrupt] = seen["interrupts"]
    assert interrupt["toolCallId"] == "c1"
    assert seen["second"][-1] == "RUN_FINISHED"
    assert "TOOL_CALL_RESULT" in seen["second"]
    assert seen["pending"] == []
    roles = [message["role"] for message in seen["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    assert seen["messages"][-1]["content"] == "Written."
    assert status == "idle"
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'


def test_the_plan_is_the_runs_state_snapshot_then_deltas(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        calls(("p1", "manage_todo", {"action": "add", "task": "read it\nfix it"})),
        calls(("p2", "manage_todo", {"action": "complete", "id": "1"})),
        text("Planned."),
    )
    ws.use(server)
    with serving(ws) as served:
        run = post(served, run_input("t-plan", "r-1", ("u1", "plan the fix")))
        check_order([event for _, event in run])
        states = [event for _, event in run if event["type"] in ("STATE_SNAPSHOT", "STATE_DELTA")]
        assert states[0]["type"] == "STATE_SNAPSHOT"
        state = states[0]["snapshot"]
        assert [step["description"] for step in state["plan"]["steps"]] == ["read it", "fix it"]
        for delta in states[1:]:
            assert delta["type"] == "STATE_DELTA"
            for operation in delta["delta"]:
                assert operation["op"] == "replace"
                *parents, last = operation["path"].strip("/").split("/")
                target = state
                for part in parents:
                    target = target[int(part)] if isinstance(target, list) else target[part]
                target[int(last) if isinstance(target, list) else last] = operation["value"]
        assert [step["status"] for step in state["plan"]["steps"]] == ["done", "pending"]
        # A reconnect gets the plan as it stands.
        again = post(served, run_input("t-plan", "r-2", ("u1", "plan the fix")))
        assert types(again) == ["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]
        assert again[2][1]["snapshot"] == state


def test_parallel_approvals_are_one_interrupt_outcome_and_every_one_must_be_answered(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    other = ("c2", "write_file", {"path": "other.json", "content": "{}"})
    server.add(calls(WRITE_CONFIG, other), text("Both handled."))
    ws.use(server)
    with serving(ws) as served:
        history = ("u1", "write both")
        head = post(served, run_input("t-par", "r-1", history))
        interrupts = head[-1][1]["outcome"]["interrupts"]
        assert sorted(interrupt["toolCallId"] for interrupt in interrupts) == ["c1", "c2"]
        first, second = (interrupt["id"] for interrupt in interrupts)
        partial = served.client.post(
            "/api/ag-ui",
            json=run_input(
                "t-par",
                "r-2",
                history,
                resume=[{"interruptId": first, "status": "resolved", "payload": {"approved": True}}],
            ),
        )
        assert (partial.status_code, partial.json()["code"]) == (400, "interrupts_open")
        assert second in partial.json()["error"]
        bad = served.client.post(
            "/api/ag-ui",
            json=run_input(
                "t-par",
                "r-2",
                history,
                resume=[
                    {"interruptId": first, "status": "resolved", "payload": {"approved": "yes"}},
                    {"interruptId": second, "status": "cancelled"},
                ],
            ),
        )
        assert (bad.status_code, bad.json()["field"]) == (400, "resume[0].payload.approved")
        resume = [
            {"interruptId": first, "status": "resolved", "payload": {"approved": True}},
            {"interruptId": second, "status": "cancelled"},
        ]
        done = post(served, run_input("t-par", "r-2", history, resume=resume))
        check_order([event for _, event in done])
        results = {e["toolCallId"]: e["content"] for _, e in done if e["type"] == "TOOL_CALL_RESULT"}
        assert set(results) == {"c1", "c2"}
        assert "cancelled by the user" in results["c2"]
    assert (ws.project / "config.json").exists()
    assert not (ws.project / "other.json").exists()


def test_a_failed_turn_ends_its_run_with_run_error(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(Round(failure=HttpFailure(status=401, message="no such key")))
    ws.use(server)
    with serving(ws) as served:
        failed = post(served, run_input("t-err", "r-1", ("u1", "hello")))
        check_order([event for _, event in failed])
        assert failed[-1][1]["type"] == "RUN_ERROR"
        assert failed[-1][1]["message"]
        assert served.client.get("/api/sessions/t-err").json()["status"] == "idle"
