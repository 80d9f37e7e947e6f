"""``hive run --http URL --session-id ID``: the agent served to a host's endpoints over HTTP, with a token, and an
approval wait that survives ``kill -9`` (asked again, same id, by the next agent with the session id)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

import anyio.from_thread
from agent_host import AgentHost
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer

WRITE_CONFIG = ("c1", "write_file", {"path": "config.json", "content": '{"a": 1}'})


@contextmanager
def hosting(agent_id: str) -> Generator[tuple[AgentHost, anyio.from_thread.BlockingPortal]]:
    """An independent agent host on 127.0.0.1, served from a thread of its own."""
    with anyio.from_thread.start_blocking_portal() as portal:
        host = portal.call(AgentHost, agent_id)
        with portal.wrap_async_context_manager(host.serving()):
            yield host, portal


def test_a_turn_over_http_with_the_token(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Hi ", "there."))
    ws.use(server).env["HIVE_SERVE_TOKEN"] = "t0ken"
    with hosting("http-1") as (host, portal):
        agent = ws.spawn("run", "--http", host.url, "--session-id", "http-1")
        portal.call(host.wait_for_event, "session_started")
        portal.call(host.send, {"type": "user_message", "content": "hello"})
        end = portal.call(host.wait_for_event, "turn_end")
        portal.call(host.send, {"type": "shutdown"})
        result = agent.result(TIMEOUT)
    assert result.code == 0, result
    assert result.stdout == ""
    assert end["stop_reason"] == "completed"
    assert host.ready == [{"session_id": "http-1"}]
    assert "".join(str(e["content"]) for e in host.decoded() if e["type"] == "text_delta") == "Hi there."
    assert set(host.authorizations) == {"Bearer t0ken"}


def test_http_needs_a_session_id_and_goes_alone(ws: Workspace) -> None:
    for args in (
        ["--http", "http://127.0.0.1:9"],
        ["--http", "http://127.0.0.1:9", "--server", "--session-id", "x"],
    ):
        result = ws.run("run", *args)
        assert result.code == 2, result
        assert "--http needs --session-id" in result.stderr


def test_a_refusing_host_ends_the_agent_with_a_clear_error(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.use(server)
    with hosting("http-2") as (host, _portal):
        host.refuse = 401
        result = ws.spawn("run", "--http", host.url, "--session-id", "http-2").result(TIMEOUT)
    assert result.code == 1, result
    assert "refused the agent's ready: HTTP 401" in result.stderr


def test_an_approval_wait_survives_kill_9_over_http(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(calls(WRITE_CONFIG, say="Let me write it."))
    ws.use(server)
    with hosting("http-3") as (host, portal):
        first = ws.spawn("run", "--http", host.url, "--session-id", "http-3")
        portal.call(host.send, {"type": "user_message", "content": "write the config"})
        asked = portal.call(host.wait_for_event, "hitl_request")
        first.stop()  # kill -9 while the call waits
        assert not (ws.project / "config.json").exists()

        server.add(text("Config written."))
        second = ws.spawn("run", "--http", host.url, "--session-id", "http-3")
        # The new agent announces itself and asks again, before it reads anything (the host does not send it the
        # first agent's user_message again).
        resent = portal.call(host.wait_for_event, "hitl_request", 2)
        assert resent == asked
        portal.call(host.send, {"type": "hitl_response", "id": asked["id"], "approved": True})
        end = portal.call(host.wait_for_event, "turn_end")
        portal.call(host.send, {"type": "shutdown"})
        result = second.result(TIMEOUT)
    assert result.code == 0, result
    assert end["stop_reason"] == "completed"
    assert (ws.project / "config.json").read_text(encoding="utf-8") == '{"a": 1}'
    assert len(host.ready) == 2
    assert host.kinds().count("turn_end") == 1  # the one turn, finished by the second agent
    assert (
        len(model_requests(server)) == 2
    )  # the first round, and the resumed one: the message was not run twice
