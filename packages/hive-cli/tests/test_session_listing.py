"""``hive sessions list``, ``show``, ``-r PREFIX``, ``-c`` and a resume's recap, on a real session store.

Sessions are made in the real SQLite store (as a run records them) or by real runs against the scripted model: one
that went well, one left empty, one whose first message got no answer because the turn failed, and one whose
process died holding its lease (a child process that takes the lease and exits without giving it up, as
``kill -9`` leaves it).
"""

from __future__ import annotations

import subprocess
import sys

from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text

from hive_cli.session_store import session_store_path
from hive_conformance.model_server import ScriptedModelServer
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import user
from hive_core.sessions import SqliteSessionStore

_DIE_HOLDING: str = """
import os, sys
from hive_core.sessions import SqliteSessionStore
store = SqliteSessionStore(sys.argv[1])
store.lease(sys.argv[2])
os._exit(0)  # no release: the lease row stays, naming a process that is gone
"""


def _store(ws: Workspace) -> SqliteSessionStore:
    return SqliteSessionStore(session_store_path(ws.env))


def _say(store: SqliteSessionStore, session_id: str, *exchanges: tuple[str, str]) -> None:
    for question, answer in exchanges:
        store.append(session_id, user(question))
        store.append(session_id, Message("assistant", [TextPart(answer)]))


def _sessions(ws: Workspace, *, session_id: str | None = None) -> dict[str, str]:
    """Four sessions of the project by what they are: ``good``, ``empty``, ``failed`` and ``dead``."""
    project = str(ws.project.resolve())
    with _store(ws) as store:
        good = store.create(project_path=project, model="m", provider="openai", session_id=session_id)
        _say(store, good.id, ("a good question", "a good answer"))
        store.set_status(good.id, "ended")
        empty = store.create(project_path=project)
        failed = store.create(project_path=project)
        store.append(failed.id, user("this failed at once"))
        store.set_status(failed.id, "error")
        dead = store.create(project_path=project)
        _say(store, dead.id, ("killed midway", "partly answered"))
    died = subprocess.run(
        [sys.executable, "-c", _DIE_HOLDING, str(session_store_path(ws.env)), dead.id],
        timeout=TIMEOUT,
        check=True,
        capture_output=True,
    )
    assert died.returncode == 0
    return {"good": good.id, "empty": empty.id, "failed": failed.id, "dead": dead.id}


def test_the_list_hides_what_failed_at_start_and_marks_the_dead(ws: Workspace) -> None:
    ids = _sessions(ws)
    listed = ws.run("sessions", "list")
    assert listed.code == 0, listed
    lines = listed.stdout.splitlines()
    assert any(line.startswith(ids["good"]) and "ended" in line for line in lines), listed
    [dead] = [line for line in lines if line.startswith(ids["dead"])]
    assert " dead " in dead
    assert "active" not in dead
    assert ids["empty"] not in listed.stdout
    assert ids["failed"] not in listed.stdout
    assert "2 empty or failed-at-start session(s) hidden; --all shows them" in listed.stdout

    everything = ws.run("sessions", "list", "--all")
    assert all(session_id in everything.stdout for session_id in ids.values()), everything

    document = ws.run("sessions", "list", "-o", "json").document()
    assert {entry["id"]: entry["status"] for entry in document} == {ids["good"]: "ended", ids["dead"]: "dead"}


def test_a_session_being_served_is_active_not_dead(ws: Workspace) -> None:
    ids = _sessions(ws)
    with _store(ws) as store, store.lease(ids["dead"]):  # this process serves it now
        document = ws.run("sessions", "list", "-o", "json").document()
    assert {entry["id"]: entry["status"] for entry in document}[ids["dead"]] == "active"


def test_resume_takes_a_unique_prefix_and_an_ambiguous_one_lists_the_candidates(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    project = str(ws.project.resolve())
    with _store(ws) as store:
        first = store.create(project_path=project, session_id="abc111-one")
        _say(store, first.id, ("the first one", "yes"))
        second = store.create(project_path=project, session_id="abc222-two")
        _say(store, second.id, ("the second one", "yes"))
    server.add(text("Continued."))
    ws.use(server)

    ambiguous = ws.run("-r", "abc", "-p", "go on")
    assert ambiguous.code == 1, ambiguous
    assert ambiguous.stderr.count("\n") == 1
    assert "abc111-one" in ambiguous.stderr
    assert "abc222-two" in ambiguous.stderr
    assert model_requests(server) == []

    resumed = ws.run("-r", "abc2", "-p", "go on", "-o", "json")
    assert resumed.code == 0, resumed
    assert resumed.document()["session_id"] == "abc222-two"
    [request] = model_requests(server)
    assert "the second one" in str(request.body)

    shown = ws.run("sessions", "show", "abc1")
    assert shown.code == 0, shown
    assert "you: the first one" in shown.stdout


def test_continue_with_nothing_to_continue_says_so(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    result = ws.run("-c", "-p", "hello")
    assert result.code == 1, result
    assert (
        result.stderr
        == "hive: no earlier session in this project to continue; run hive without -c to start one\n"
    )
    assert model_requests(server) == []
    assert ws.sessions() == []


def test_show_prints_the_transcript_with_tool_calls_summarised(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "notes.txt").write_text("first line of the notes\nsecond\n", encoding="utf-8")
    server.add(calls(("c1", "read_file", {"path": "notes.txt"})), text("The notes say hello."))
    ws.use(server).allow_all()
    run = ws.run("-p", "what do the notes say?")
    assert run.code == 0, run
    [session] = ws.sessions()

    shown = ws.run("sessions", "show", session["id"][:12])
    assert shown.code == 0, shown
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"session {session['id']} ")
    assert "you: what do the notes say?" in lines
    assert any(line.strip().startswith("→ read_file") and "notes.txt" in line for line in lines), shown
    assert any(line.strip().startswith("←") for line in lines), shown
    assert "The notes say hello." in lines

    document = ws.run("sessions", "show", session["id"], "-o", "json").document()
    assert document["session_id"] == session["id"]
    assert [item["kind"] for item in document["items"]] == [
        "user",
        "tool_call",
        "tool_result",
        "assistant",
    ]
    assert document["items"][1]["tool"] == "read_file"

    unknown = ws.run("sessions", "show", "zzz-none", "-o", "json")
    assert unknown.code == 1
    assert "zzz-none" in unknown.document()["error"]


def test_a_resume_reprints_the_last_exchanges(ws: Workspace, server: ScriptedModelServer) -> None:
    project = str(ws.project.resolve())
    with _store(ws) as store:
        info = store.create(project_path=project, model="scripted", provider="openai")
        _say(
            store,
            info.id,
            ("QUESTION-ONE", "ANSWER-ONE"),
            ("QUESTION-TWO", "ANSWER-TWO"),
            ("QUESTION-THREE", "ANSWER-THREE"),
            ("QUESTION-FOUR", "ANSWER-FOUR"),
        )
        store.set_status(info.id, "ended")
    ws.use(server)
    with ws.terminal("-r", info.id[:14]) as term:
        shown = term.expect("> ")
        term.type("quit\r")
        assert term.wait() == 0
    assert "(8 messages restored)" in shown
    for number in ("TWO", "THREE", "FOUR"):
        assert f"QUESTION-{number}" in shown, shown
        assert f"ANSWER-{number}" in shown
    assert "QUESTION-ONE" not in shown
