"""``hive serve`` over real HTTP on 127.0.0.1: the token, ``Host`` and ``Origin`` checks, sessions, their event
streams resumed with ``Last-Event-ID``, approvals (a stale answer is a 409), malformed bodies, ``--max-sessions``."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import msgspec
import pytest
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from agent_cli_harness import agent_clis_bin
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from cli_harness import wait_until
from serve_harness import READY
from serve_harness import TOKEN
from serve_harness import serving

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import OK_REPLY
from hive_conformance.model_server.agent_cli import SLOWTEXT_MARKER
from hive_conformance.model_server.agent_cli import agent_cli_responder
from hive_conformance.tool_server import FixtureToolServer

WRITE_CONFIG = ("c1", "write_file", {"path": "config.json", "content": '{"a": 1}'})


def test_every_route_needs_the_token_the_bound_host_and_no_foreign_origin(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.use(server)
    with serving(ws) as served, served.tokenless() as bare:
        port = served.url.rsplit(":", 1)[1]
        for method, path in [("GET", "/api/sessions"), ("POST", "/api/sessions"), ("GET", "/")]:
            assert bare.request(method, path).status_code == 401
            wrong = bare.request(method, path, headers={"authorization": "Bearer not-the-token-at-all"})
            assert wrong.status_code == 401
            assert wrong.json()["code"] == "unauthorized"
        good = {"authorization": f"Bearer {TOKEN}"}
        # DNS rebinding: a name that resolves here but is not the address the server is bound to.
        rebound = bare.get("/api/sessions", headers={**good, "host": f"evil.example:{port}"})
        assert (rebound.status_code, rebound.json()["code"]) == (403, "forbidden_host")
        # CSRF: another site's page.
        foreign = bare.post("/api/sessions", json={}, headers={**good, "origin": "http://evil.example"})
        assert (foreign.status_code, foreign.json()["code"]) == (403, "forbidden_origin")
        assert served.client.get("/api/sessions").json() == {"sessions": []}  # nothing was opened
        same_origin = bare.get("/api/sessions", headers={**good, "origin": served.url})
        assert same_origin.status_code == 200
        # The printed URL sets the page's cookie, which then stands for the token.
        page = bare.get(f"/?token={TOKEN}")
        assert page.status_code == 303
        assert "HttpOnly" in page.headers["set-cookie"]
        assert bare.get("/api/sessions").status_code == 200


def test_the_token_comes_from_the_option_the_environment_or_the_configuration(ws: Workspace) -> None:
    with ws.start("serve") as proc:  # none set: a new random one, printed in the ready URL
        line = proc.next_line()
        assert line is not None, proc.stderr
        match = READY.match(line.decode().strip())
        assert match is not None, line
        assert len(match.group(3)) >= 24
    (ws.home / "config.yaml").write_text(f"serve:\n  token: {TOKEN}\n", encoding="utf-8")
    with serving(ws, token=None) as served:
        assert served.client.get("/api/sessions").status_code == 200
    # A project's own token is a secret: it counts only in a project the user trusts.
    ws.trusted = False
    (ws.project / ".hive" / "config.yaml").write_text("serve:\n  token: planted-token-0123456789\n")
    with serving(ws, token=None) as served:
        assert served.client.get("/api/sessions").status_code == 200
    assert "serve.token" in served.proc.stderr
    (ws.home / "config.yaml").unlink()
    ws.env["HIVE_SERVE_TOKEN"] = TOKEN
    with serving(ws, token=None) as served:
        assert served.client.get("/api/sessions").status_code == 200
    ws.env["HIVE_SERVE_TOKEN"] = "short"
    refused = ws.run("serve")
    assert refused.code == 2
    assert "the token must be 16 to 256 characters" in refused.stderr


def test_what_an_untrusted_page_or_client_can_try_is_refused(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.use(server)
    with serving(ws) as served, served.tokenless() as bare:
        # The token in a URL opens only the page (which sets the cookie), never the API.
        assert bare.get(f"/api/sessions?token={TOKEN}").status_code == 401
        assert bare.get("/?token=wrong-token-0123456789").status_code == 401
        # A sandboxed page or a file:// page sends "Origin: null": it is cross-origin.
        null_origin = served.client.post("/api/sessions", json={}, headers={"origin": "null"})
        assert (null_origin.status_code, null_origin.json()["code"]) == (403, "forbidden_origin")
        for bad_id in ("../../etc", "a b", "", "x" * 129, "-leading", "new\nline"):
            refused = served.client.post("/api/sessions", json={"session_id": bad_id})
            assert refused.status_code == 400, bad_id
        session = served.open(working_directory=str(ws.project))
        huge = served.client.post(f"/api/sessions/{session}/requests", content=b"x" * (16 * 1024 * 1024 + 1))
        assert (huge.status_code, huge.json()["code"]) == (413, "too_large")
        assert served.client.get(f"/api/sessions/{session}").json()["status"] == "idle"
        assert [s["session_id"] for s in served.client.get("/api/sessions").json()["sessions"]] == [session]


def test_a_session_streams_its_turns_and_resumes_after_the_last_event_id(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hi ", "there."), text("Again."), text("More."))
    ws.use(server)
    with serving(ws) as served:
        session = served.open(session_id="web-1", working_directory=str(ws.project))
        first = served.turn(session, "hello")
        assert [event["type"] for _, event in first] == [
            "session_started",
            "text_delta",
            "text_delta",
            "turn_end",
        ]
        assert [position for position, _ in first] == [1, 2, 3, 4]
        assert first[0][1]["session_id"] == "web-1"

        rest = served.turn(session, "and again", after=4)  # a client that saw event 4 reconnects
        assert [position for position, _ in rest] == [5, 6]
        assert [event["type"] for _, event in rest] == ["text_delta", "turn_end"]
        again = served.until(session, "turn_end", after=2)  # replay from an earlier point: the same events
        assert [event for _, event in again][:2] == [event for _, event in first[2:]]

        listed = served.client.get("/api/sessions").json()["sessions"]
        assert [(s["session_id"], s["title"], s["backend"], s["status"]) for s in listed] == [
            ("web-1", "hello", "hive", "idle")
        ]
        assert served.client.get("/api/sessions/web-1").json()["events"] == 6
        assert served.client.get("/api/sessions/nope").status_code == 404

        assert served.client.post(f"/api/sessions/{session}/close").status_code == 204
        # The stream ends once the session has ended: reading it from the start finishes.
        assert [event["type"] for _, event in served.events(session)][-1] == "turn_end"
        closed = served.send(session, {"type": "user_message", "content": "late"})
        assert (closed.status_code, closed.json()["code"]) == (409, "session_closed")
        # Opened again, it goes on: its stream continues after the events it has, and it knows the conversation.
        assert served.open(session_id="web-1", working_directory=str(ws.project)) == "web-1"
        later = served.turn(session, "once more", after=6)
        assert [position for position, _ in later] == [7, 8]
    assert [user_texts(request)[-1] for request in model_requests(server)] == [
        "hello",
        "and again",
        "once more",
    ]
    assert user_texts(model_requests(server)[-1])[0] == "hello"


def test_approvals_over_http_and_a_stale_answer_is_a_409(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(calls(WRITE_CONFIG), text("Written."))
    ws.use(server)
    with serving(ws) as served:
        session = served.open(working_directory=str(ws.project))
        stale = served.send(session, {"type": "hitl_response", "id": "nothing-waits", "approved": True})
        assert (stale.status_code, stale.json()["code"]) == (409, "stale_approval")
        served.send(session, {"type": "user_message", "content": "write the config"})
        head = served.until(session, "hitl_request")
        asked = head[-1][1]
        status = served.client.get(f"/api/sessions/{session}").json()["status"]
        assert status == "waiting"
        accepted = served.send(session, {"type": "hitl_response", "id": asked["id"], "approved": True})
        assert accepted.status_code == 202
        rest = served.until(session, "turn_end", after=head[-1][0])
        again = served.send(session, {"type": "hitl_response", "id": asked["id"], "approved": True})
        assert (again.status_code, again.json()["code"]) == (409, "stale_approval")
    assert rest[0][1]["type"] == "tool_end"
    assert rest[0][1]["success"] is True
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json\n", "line 1"),
        (b'{"type":"user_message","content":"ok"}\n{"type":"teleport"}\n', "line 2"),
        (b"\n\n", "no request line"),
    ],
)
def test_a_malformed_body_is_a_400_and_passes_nothing_on(
    ws: Workspace, server: ScriptedModelServer, body: bytes, message: str
) -> None:
    server.add(text("Fine."))
    ws.use(server)
    with serving(ws) as served:
        session = served.open(working_directory=str(ws.project))
        refused = served.client.post(f"/api/sessions/{session}/requests", content=body)
        assert refused.status_code == 400
        assert message in refused.json()["error"]
        # The session is unharmed, and nothing of the refused body ran.
        events = [event for _, event in served.turn(session, "still there?")]
        assert [user_texts(request)[-1] for request in model_requests(server)] == ["still there?"]
    assert events[-1]["stop_reason"] == "completed"
    bad_open = None
    with serving(ws) as served:
        bad_open = served.client.post("/api/sessions", json={"working_directory": str(ws.root / "missing")})
        unknown_field = served.client.post("/api/sessions", json={"sesion_id": "typo"})
    assert (bad_open.status_code, bad_open.json()["code"]) == (400, "bad_request")
    assert unknown_field.status_code == 400
    assert "sesion_id" in unknown_field.json()["error"]


def test_past_max_sessions_a_new_session_is_a_429(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    with serving(ws, "--max-sessions", "1") as served:
        served.open(working_directory=str(ws.project))
        refused = served.client.post("/api/sessions", json={"working_directory": str(ws.project)})
        assert refused.status_code == 429
        assert "--max-sessions" in refused.json()["error"]
        assert len(served.client.get("/api/sessions").json()["sessions"]) == 1


def test_a_server_killed_and_started_again_lists_replays_and_continues_its_sessions(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Noted: blue."), text("Blue."))
    ws.use(server)
    with serving(ws) as served:  # leaving the block is kill -9
        session = served.open(session_id="keep-1", working_directory=str(ws.project))
        before = served.turn(session, "my colour is blue")
    with serving(ws) as served:
        [listed] = served.client.get("/api/sessions").json()["sessions"]
        assert (listed["session_id"], listed["title"], listed["events"]) == ("keep-1", "my colour is blue", 3)
        assert [event for _, event in served.until(session, "turn_end")] == [event for _, event in before]
        # A reader that saw event 2 before the restart gets the rest, once, then the next turn.
        after = served.turn(session, "what is my colour?", after=2)
        after += served.until(session, "turn_end", after=after[-1][0])
        messages = served.client.get(f"/api/sessions/{session}/messages").json()["messages"]
    # The user's messages, which the stream does not carry, are kept too: the n-th is the n-th turn's.
    assert messages == [
        {"turn": 1, "content": "my colour is blue"},
        {"turn": 2, "content": "what is my colour?"},
    ]
    assert [position for position, _ in after] == [3, 4, 5]
    assert [event["type"] for _, event in after] == ["turn_end", "text_delta", "turn_end"]
    assert user_texts(model_requests(server)[1]) == ["my colour is blue", "what is my colour?"]


@pytest.mark.parametrize("carrier", [(), ("--isolate",)], ids=["in_process", "isolated"])
def test_an_approval_waiting_when_the_server_was_killed_is_asked_again_after_a_restart(
    ws: Workspace, server: ScriptedModelServer, carrier: tuple[str, ...]
) -> None:
    server.add(calls(WRITE_CONFIG))
    ws.use(server)
    with serving(ws, *carrier) as served:
        session = served.open(session_id="wait-1", working_directory=str(ws.project))
        served.send(session, {"type": "user_message", "content": "write the config"})
        asked = served.until(session, "hitl_request")[-1]
    assert not (ws.project / "config.json").exists()
    server.add(text("Written."))
    with serving(ws, *carrier) as served:  # asked again with no request: an isolated agent starts at once
        again = served.until(session, "hitl_request", after=asked[0])[-1][1]
        assert again["id"] == asked[1]["id"]
        assert served.client.get(f"/api/sessions/{session}").json()["status"] == "waiting"
        served.send(session, {"type": "hitl_response", "id": again["id"], "approved": True})
        rest = served.until(session, "turn_end", after=asked[0])
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    assert rest[-1][1]["stop_reason"] == "completed"


def test_a_turn_cut_by_the_servers_death_ends_with_an_error_after_a_restart(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(msgspec.structs.replace(text("partial ", "never sent"), stall_after_chunks=1), text("Again."))
    ws.use(server)
    with serving(ws) as served:
        session = served.open(session_id="cut-1", working_directory=str(ws.project))
        served.send(session, {"type": "user_message", "content": "first"})
        started = served.until(session, "text_delta")[-1][0]
    with serving(ws) as served:
        ended = served.until(session, "turn_end", after=started)
        assert served.client.get(f"/api/sessions/{session}").json()["status"] == "idle"
        again = served.turn(session, "second", after=ended[-1][0])
    assert [event["type"] for _, event in ended] == ["error", "turn_end"]
    assert "the server stopped during this turn" in ended[0][1]["message"]
    assert "".join(e["content"] for _, e in again if e["type"] == "text_delta") == "Again."


def _agent_pids(session_id: str) -> list[int]:
    """The ``hive run --http`` processes serving ``session_id`` (found by their command line)."""
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--http" in command and session_id.encode() in command:
            pids.append(int(entry.name))
    return pids


def test_isolate_runs_each_session_in_its_own_agent_and_survives_its_death(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        text("One."),
        msgspec.structs.replace(text("partial ", "never sent"), stall_after_chunks=1),
        text("Three."),
    )
    ws.use(server)
    with serving(ws, "--isolate") as served:
        session = served.open(session_id="iso-1", working_directory=str(ws.project))
        first = served.turn(session, "first")
        [agent] = _agent_pids("iso-1")
        assert agent != served.proc.process.pid
        served.send(session, {"type": "user_message", "content": "second"})
        started = served.until(session, "text_delta", after=first[-1][0])
        os.kill(agent, signal.SIGKILL)  # the agent dies mid-turn
        ended = served.until(session, "turn_end", after=started[-1][0])
        assert ended[-2][1]["type"] == "error"
        assert "agent process exited" in ended[-2][1]["message"]
        # The session goes on in a new agent, which knows the conversation.
        third = served.turn(session, "third", after=ended[-1][0])
        assert "".join(e["content"] for _, e in third if e["type"] == "text_delta") == "Three."
        [second_agent] = _agent_pids("iso-1")
        assert second_agent != agent
        served.client.post(f"/api/sessions/{session}/close")
        events = [event["type"] for _, event in served.events(session)]  # ends once the agent finished
    assert events.count("session_started") == 1
    assert events.count("turn_end") == 3
    assert user_texts(model_requests(server)[-1])[0] == "first"
    assert _agent_pids("iso-1") == []


def test_an_external_agent_serves_a_session_through_the_agent_endpoints(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("From outside."))
    ws.use(server)
    with serving(ws) as served:
        session = served.open(session_id="ext-1", backend="external", working_directory=str(ws.project))
        # The server's own sessions take no agent.
        own = served.open(working_directory=str(ws.project))
        refused = served.client.post(f"/api/agent/{own}/ready", json={"session_id": own})
        assert (refused.status_code, refused.json()["code"]) == (409, "no_agent_session")
        served.send(session, {"type": "user_message", "content": "hello"})
        ws.env["HIVE_SERVE_TOKEN"] = TOKEN
        agent = ws.spawn("run", "--http", served.url, "--session-id", "ext-1")
        events = served.until(session, "turn_end")
        served.client.post(f"/api/sessions/{session}/close")
        assert [event for _, event in served.events(session)][-1]["type"] == "turn_end"  # ends once ended
        assert agent.result(TIMEOUT).code == 0
        listed = served.client.get(f"/api/sessions/{session}").json()
    assert [event["type"] for _, event in events] == ["session_started", "text_delta", "turn_end"]
    assert (listed["backend"], listed["status"]) == ("external", "ended")


def _processes_naming(marker: str, *, where: str = "cmdline") -> list[int]:
    """The live processes whose command line (or environment, ``where="environ"``) holds ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            held = (entry / where).read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in held and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_question_of_the_sessions_cli_is_answered_over_http(ws: Workspace) -> None:
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(ASK_TRANSCRIPT))
    with serving(ws) as served:
        session = served.open(backend="reasonix", working_directory=str(ws.project))
        served.send(session, {"type": "user_message", "content": "ASKME which database should I use?"})
        position, asked = served.until(session, "question_request")[-1]
        [question] = asked["questions"]
        labels = [option["label"] for option in question["options"]]
        assert question["question"] == "Which database?"
        assert served.client.get(f"/api/sessions/{session}").json()["status"] == "waiting"
        stale = served.send(session, {"type": "question_response", "id": "q-none", "answers": {}})
        assert (stale.status_code, stale.json()["code"]) == (409, "stale_question")
        answer = {"type": "question_response", "id": asked["id"], "answers": {"Which database?": "SQLite"}}
        assert served.send(session, answer).status_code == 202
        rest = served.until(session, "turn_end", after=position)
        again = served.send(session, answer)  # the question no longer waits
        assert (again.status_code, again.json()["code"]) == (409, "stale_question")
    assert "MOCK_REPLY done" in "".join(e.get("content", "") for _, e in rest if e["type"] == "text_delta")
    [chosen] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert chosen["result"]["outcome"] == {
        "outcome": "selected",
        "optionId": f"q1:{labels.index('SQLite') + 1}",
    }


def test_cancel_stops_the_turn_and_the_command_it_started(ws: Workspace, server: ScriptedModelServer) -> None:
    marker = "317.25"
    server.add(calls(("c1", "execute_command", {"command": f"sleep {marker}"})), text("Stopped."))
    ws.use(server)
    with serving(ws, "--allow", "execute_command") as served:
        session = served.open(working_directory=str(ws.project))
        served.send(session, {"type": "user_message", "content": "wait a while"})
        position, _ = served.until(session, "tool_start")[-1]
        wait_until(lambda: _processes_naming(f"sleep {marker}"), what="the command to start")
        assert served.send(session, {"type": "cancel"}).status_code == 202
        ended = served.until(session, "turn_end", after=position)
        assert ended[-1][1]["stop_reason"] == "cancelled"
        assert _processes_naming(f"sleep {marker}") == []
        assert served.client.get(f"/api/sessions/{session}").json()["status"] == "idle"


@pytest.mark.slow
def test_the_built_in_loop_and_a_real_cli_serve_two_sessions_at_once(ws: Workspace) -> None:
    """Two sessions of one server at once: hive's own loop and the real Pi, both on the scripted model; Pi's slow
    turn is cancelled and Pi leaves no process once the server stopped."""
    pi = agent_clis_bin() / "pi"
    if not os.access(pi, os.X_OK):
        pytest.skip(f"{pi} is not installed (run .ci/agent-clis and set HIVE_AGENT_CLIS_BIN)")
    home = ws.root / "user-home"
    home.mkdir()
    ws.env.update(PATH=f"{pi.parent}{os.pathsep}{ws.env.get('PATH', '')}", HOME=str(home), NO_COLOR="1")
    with ScriptedModelServer(model="local-model", responder=agent_cli_responder(slow_chunks=400)) as model:
        ws.use(model)
        with serving(ws, "--model-endpoint", f"{model.url}/v1") as served:
            own = served.open(working_directory=str(ws.project))
            cli = served.open(backend="pi", model="local-model", working_directory=str(ws.project))
            served.send(cli, {"type": "user_message", "content": f"{SLOWTEXT_MARKER} please"})
            served.send(own, {"type": "user_message", "content": "hello"})
            mine = served.until(own, "turn_end")
            slow_started = served.until(cli, "text_delta")[-1][0]
            listed = {s["session_id"]: s for s in served.client.get("/api/sessions").json()["sessions"]}
            assert (listed[own]["backend"], listed[own]["status"]) == ("hive", "idle")
            assert (listed[cli]["backend"], listed[cli]["status"]) == ("pi", "running")
            served.send(cli, {"type": "cancel"})
            cancelled = served.until(cli, "turn_end", after=slow_started)
            theirs = served.turn(cli, "hello again", after=cancelled[-1][0])
    assert "".join(e["content"] for _, e in mine if e["type"] == "text_delta") == OK_REPLY
    assert cancelled[-1][1]["stop_reason"] == "cancelled"
    assert OK_REPLY in "".join(e["content"] for _, e in theirs if e["type"] == "text_delta")
    assert _processes_naming(f"HOME={home}\0", where="environ") == []


def test_a_sessions_settings_name_what_it_may_set_and_nothing_else(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.use(server)
    with serving(ws) as served:
        refused = {
            name: served.client.post(
                "/api/sessions", json={"working_directory": str(ws.project), "settings": settings}
            )
            for name, settings in {
                "unknown": {
                    "mcp_server": "x",
                    "mcp_url": "http://127.0.0.1:1/mcp",
                    "comand": "sh",
                    "env": {},
                },
                "a program": {"mcp_server": "x", "mcp_url": "file:///bin/sh"},
                "half a server": {"mcp_server": "x"},
                "another server's tool": {
                    "mcp_server": "x",
                    "mcp_url": "http://127.0.0.1:1/mcp",
                    "ask_tools": ["mcp__y__set"],
                },
                "a bad name": {"mcp_server": "../x", "mcp_url": "http://127.0.0.1:1/mcp"},
                "no time": {"approval_timeout_seconds": 0},
            }.items()
        }
        assert served.client.get("/api/sessions").json() == {"sessions": []}  # nothing was opened
    assert {name: (answer.status_code, answer.json()["code"]) for name, answer in refused.items()} == {
        name: (400, "bad_request") for name in refused
    }
    assert "unknown keys 'comand', 'env'" in refused["unknown"].json()["error"]
    assert "mcp_server, mcp_url, ask_tools" in refused["unknown"].json()["error"]
    with serving(ws, "--isolate") as served:
        isolated = served.client.post(
            "/api/sessions", json={"working_directory": str(ws.project), "settings": {}}
        )
    assert (isolated.status_code, "--isolate" in isolated.json()["error"]) == (400, True)


def test_a_sessions_mcp_server_and_rules_come_from_its_settings_and_survive_a_restart(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    set_colour = ("c1", "mcp__tools__set_value", {"key": "colour", "value": "blue"})
    server.add(calls(set_colour))
    ws.use(server)
    settings = {"mcp_server": "tools", "ask_tools": ["mcp__tools__set_value"], "tool_timeout_ms": 20000}
    with FixtureToolServer(ws.root) as tools:
        with serving(ws) as served:  # leaving the block is kill -9
            session = served.open(
                session_id="set-1",
                working_directory=str(ws.project),
                settings={**settings, "mcp_url": tools.url},
            )
            served.send(session, {"type": "user_message", "content": "set the colour"})
            asked = served.until(session, "hitl_request")[-1]
        server.add(text("Set."))
        with serving(ws) as served:
            again = served.until(session, "hitl_request", after=asked[0])[-1][1]
            served.send(session, {"type": "hitl_response", "id": again["id"], "approved": True})
            rest = served.until(session, "turn_end", after=asked[0])
    assert asked[1]["tool_name"] == "mcp__tools__set_value"
    [ended] = [event for _, event in rest if event["type"] == "tool_end"]
    assert (ended["success"], ended["output"]) == (True, "colour=blue")


def test_delete_forgets_an_ended_session_and_its_id_opens_afresh(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("One."), text("Two."))
    ws.use(server)
    with serving(ws) as served, served.tokenless() as bare:
        session = served.open(session_id="gone-1", working_directory=str(ws.project))
        served.turn(session, "remember: blue")
        live = served.client.delete(f"/api/sessions/{session}")
        assert (live.status_code, live.json()["code"]) == (409, "session_open")
        assert bare.delete(f"/api/sessions/{session}").status_code == 401
        served.client.post(f"/api/sessions/{session}/close")
        assert [event["type"] for _, event in served.events(session)][-1] == "turn_end"  # it has ended
        assert served.client.delete(f"/api/sessions/{session}").status_code == 204
        assert served.client.get(f"/api/sessions/{session}").status_code == 404
        assert served.client.delete(f"/api/sessions/{session}").status_code == 404
        assert served.open(session_id="gone-1", working_directory=str(ws.project)) == "gone-1"
        # A line it cannot read: refused, and the stream says so as stdio's would; the session goes on.
        refused = served.client.post(f"/api/sessions/{session}/requests", content=b"{not json\n")
        fresh = served.turn(session, "what colour?")
    assert refused.status_code == 400
    assert [(position, event["type"]) for position, event in fresh] == [
        (1, "session_started"),
        (2, "error"),
        (3, "text_delta"),
        (4, "turn_end"),
    ]
    assert fresh[1][1]["code"] == "unreadable_request"
    # The conversation was forgotten too: the new session's model sees only its own message.
    assert user_texts(model_requests(server)[-1]) == ["what colour?"]
    with serving(ws) as served:  # nor does a restarted server know it
        assert [s["session_id"] for s in served.client.get("/api/sessions").json()["sessions"]] == ["gone-1"]
        assert served.client.get("/api/sessions/gone-1").json()["events"] == 4
