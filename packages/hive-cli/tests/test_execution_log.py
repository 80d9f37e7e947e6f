"""The execution log: written by every turn into the session store, read by ``hive logs`` (also ``--follow``, while
another process runs the session) and by ``hive serve`` at ``GET /api/sessions/{id}/log``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
from typing import Any

from cli_harness import HIVE
from cli_harness import TIMEOUT
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from serve_harness import serving

from hive_conformance.model_server import ScriptedModelServer

READ_NOTES = calls(("c1", "read_file", {"path": "notes.txt"}))
"""A round calling one tool; the scripted usage of a round of calls is 20 in, 5 out."""

ONE_CALL_KINDS = ["turn_start", "model_request", "tool", "model_request", "turn_end"]
"""The log of a turn that called one tool and then answered."""


def records_of(output: str) -> list[dict[str, Any]]:
    """JSON Lines, each line an object with ``time`` and ``kind``."""
    records = [json.loads(line) for line in output.splitlines()]
    for record in records:
        assert str(record["time"]).endswith("Z"), record
        assert isinstance(record["kind"], str), record
    return records


def follow_until(proc: Proc, kind: str, count: int = 1) -> list[dict[str, Any]]:
    """Records read from a following ``hive logs -o json`` up to its ``count``-th record of ``kind``."""
    seen: list[dict[str, Any]] = []
    while sum(record["kind"] == kind for record in seen) < count:
        seen.append(proc.next_event())
    return seen


def test_a_served_turn_with_a_tool_call_logs_its_requests_its_call_and_its_ends(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "notes.txt").write_text("the notes", encoding="utf-8")
    server.add(READ_NOTES, text("Done.", usage=(30, 4)))
    with ws.use(server).allow_all().serve("--session-id", "log-1") as proc:
        events = proc.turn("read the notes")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert events[-1]["stop_reason"] == "completed"

    result = ws.run("logs", "log-1", "-o", "json")

    assert result.code == 0, result
    records = records_of(result.stdout)
    assert [r["kind"] for r in records] == ONE_CALL_KINDS
    assert [r["time"] for r in records] == sorted(r["time"] for r in records)
    first, tool, second, end = records[1:]
    assert (first["input_tokens"], first["output_tokens"]) == (20, 5)
    assert (second["input_tokens"], second["output_tokens"]) == (30, 4)
    for request in (first, second):
        assert request["model"] == "scripted"
        assert request["duration_ms"] >= 0
        assert "error" not in request
    # What was sent grows by the call and its result, and is about what the provider put on the wire.
    assert 0 < first["request_bytes"] < second["request_bytes"]
    for measured, request in zip((first, second), model_requests(server), strict=True):
        assert abs(measured["request_bytes"] - len(request.raw_body)) < len(request.raw_body) / 5
    assert {k: tool[k] for k in ("name", "call_id", "outcome")} == {
        "name": "read_file",
        "call_id": "c1",
        "outcome": "ok",
    }
    assert tool["duration_ms"] >= 0
    assert (end["stop_reason"], end["input_tokens"], end["output_tokens"]) == ("completed", 50, 9)

    # The same log as text, for the project's latest session (no id given), and by a start of the id.
    shown = ws.run("logs")
    assert shown.code == 0, shown
    columns = [re.split(r"\s{2,}", line)[1:] for line in shown.stdout.splitlines()]
    assert [c[0] for c in columns] == ["turn_start", "model_request", "tool", "model_request", "turn_end"]
    assert (columns[1][1], columns[1][-1]) == ("scripted", "20 in / 5 out")
    assert columns[1][3].endswith(" sent")
    assert (columns[2][1:3], columns[2][-1]) == (["read_file", "c1"], "ok")
    assert (columns[4][1], columns[4][-1]) == ("completed", "50 in / 9 out")
    assert ws.run("logs", "log-", "-o", "jsonl").stdout == result.stdout


def test_a_failed_call_and_a_failed_request_are_logged_as_such(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(calls(("c9", "read_file", {"path": "missing.txt"})))  # then nothing: the next request fails
    result = ws.use(server).allow_all().run("-p", "read it", "-o", "json")
    assert result.code != 0, result

    records = records_of(ws.run("logs", "-o", "json").stdout)

    assert [r["kind"] for r in records] == ONE_CALL_KINDS
    assert records[2]["outcome"] == "error"
    assert records[3]["error"]
    assert records[4]["error"]


def test_follow_prints_a_turn_that_another_process_runs(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("First."), text("Second.", usage=(12, 3)))
    assert ws.use(server).run("-p", "one").code == 0
    session = ws.sessions()[0]["id"]

    with ws.start("logs", session, "--follow", "-o", "json") as follow:
        before = follow_until(follow, "turn_end")
        assert [r["kind"] for r in before] == ["turn_start", "model_request", "turn_end"]
        # Another process runs the session's next turn while the follower waits.
        assert ws.run("-r", session, "-p", "two").code == 0
        after = follow_until(follow, "turn_end")
        follow.signal(signal.SIGINT)  # Ctrl+C
        assert follow.wait() == 0, follow.stderr

    assert [r["kind"] for r in after] == ["turn_start", "model_request", "turn_end"]
    assert (after[1]["input_tokens"], after[1]["output_tokens"]) == (12, 3)
    assert follow.stdout.count("\n") == 6  # nothing printed twice


def test_an_unknown_session_is_a_clear_error(ws: Workspace, server: ScriptedModelServer) -> None:
    empty = ws.run("logs")
    assert (empty.code, empty.stdout) == (1, "")
    assert "no session in this project yet" in empty.stderr

    server.add(text("Hi."))
    assert ws.use(server).run("-p", "hello").code == 0
    unknown = ws.run("logs", "nope")
    assert (unknown.code, unknown.stdout) == (1, "")
    assert "no session 'nope'" in unknown.stderr
    as_json = ws.run("logs", "nope", "-o", "json")
    assert as_json.code == 1
    assert "no session 'nope'" in json.loads(as_json.stdout)["error"]


def test_hive_serve_offers_the_log_behind_its_token(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "notes.txt").write_text("the notes", encoding="utf-8")
    server.add(READ_NOTES, text("Done."))
    with serving(ws.use(server).allow_all()) as served:
        session = served.open()
        served.turn(session, "read the notes")

        response = served.client.get(f"/api/sessions/{session}/log")
        with served.tokenless() as stranger:
            refused = stranger.get(f"/api/sessions/{session}/log")
        unknown = served.client.get("/api/sessions/nope/log")

    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/jsonl")
    records = records_of(response.text)
    assert [r["kind"] for r in records] == ONE_CALL_KINDS
    assert records[2]["name"] == "read_file"
    assert refused.status_code == 401
    assert "turn_start" not in refused.text
    assert (unknown.status_code, unknown.json()["code"]) == (404, "unknown_session")


def test_follow_into_a_reader_that_went_away_ends_quietly(ws: Workspace, server: ScriptedModelServer) -> None:
    # `hive logs --follow | head -1`: once head has its line and exits, the next record hive writes finds no reader.
    server.add(text("First."), text("Second."))
    assert ws.use(server).run("-p", "one").code == 0
    session = ws.sessions()[0]["id"]
    follow = subprocess.Popen(
        [str(HIVE), "logs", session, "--follow", "-o", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ws.project,
        env=ws.env,
    )
    assert follow.stdout is not None
    assert follow.stderr is not None
    try:
        assert json.loads(follow.stdout.readline())["kind"] == "turn_start"
        follow.stdout.close()
        assert ws.run("-r", session, "-p", "two").code == 0  # gives the follower more to write
        code = follow.wait(TIMEOUT)
    finally:
        if follow.poll() is None:
            follow.kill()
            follow.wait()
    stderr = follow.stderr.read().decode()
    follow.stderr.close()
    # click's command runner turns the broken pipe into exit 1, saying nothing (no traceback, no bug report).
    assert (code, stderr) == (1, "")
