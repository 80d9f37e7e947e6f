"""One process serves a session id at a time: a second ``hive`` on it gets a clear error, and ``kill -9`` of the
first does not lock the session for good."""

from __future__ import annotations

from cli_harness import Workspace
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer


def test_a_second_server_on_the_same_session_id_is_refused_until_the_first_is_killed(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("first answer"), text("after the takeover"))
    ws.use(server)
    with ws.start("run", "--server", "--session-id", "shared") as first:
        assert first.next_event()["type"] == "session_started"
        first.send({"type": "user_message", "content": "one"})
        assert first.events_until("turn_end")[-1]["stop_reason"] == "completed"

        second = ws.run("run", "--server", "--session-id", "shared", input="")
        assert second.code == 1, second
        assert second.stdout == ""  # not even session_started: it never served
        assert second.stderr.startswith(
            f"hive: session 'shared' is in use by process {first.process.pid} on "
        ), second
        assert "wait for it to end" in second.stderr
        assert second.stderr.count("\n") == 1, second

        # The interactive surfaces and deleting respect it too.
        resumed = ws.run("-r", "shared", "-p", "two")
        assert resumed.code == 1, resumed
        assert "is in use by process" in resumed.stderr
        deleted = ws.run("sessions", "delete", "shared", "--yes")
        assert deleted.code == 1, deleted
        assert "is in use by process" in deleted.stderr

        first.kill()  # kill -9: no chance to give the lease up

    with ws.start("run", "--server", "--session-id", "shared") as third:
        assert third.next_event()["type"] == "session_started"
        third.send({"type": "user_message", "content": "three"})
        assert third.events_until("turn_end")[-1]["stop_reason"] == "completed"
        third.send({"type": "shutdown"})
        assert third.wait() == 0, third.stderr

    # One transcript, in order: the refused processes wrote nothing into it.
    [session] = ws.sessions()
    assert session["id"] == "shared"
    assert session["message_count"] == 4


def test_a_server_that_ends_normally_gives_the_session_up(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("answer"))
    ws.use(server)
    first = ws.run("run", "--server", "--session-id", "handed-on", input="")
    assert first.code == 0, first
    resumed = ws.run("-r", "handed-on", "-p", "go on")
    assert resumed.code == 0, resumed
    assert "answer" in resumed.stdout
