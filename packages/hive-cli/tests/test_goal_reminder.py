"""The goal reminder names the current task: over several turns of one session (``hive -p``, then ``hive -c -p``),
the requests the scripted model server recorded restate the latest user message, never the session's first."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import scripted_server
from cli_harness import text

from hive_conformance.model_server import RecordedRequest


def _reminders(request: RecordedRequest) -> list[str]:
    """The goal reminders a request carried (the text after ``Current goal:``)."""
    body = json.dumps(request.body, ensure_ascii=False)
    found: list[str] = []
    marker = "[REMINDER] Current goal: "
    start = body.find(marker)
    while start != -1:
        end = body.find('"', start)
        found.append(body[start + len(marker) : end])
        start = body.find(marker, end)
    return found


def test_the_reminder_names_the_latest_turn_not_the_first_message(tmp_path: Path) -> None:
    rounds = [
        text("Renamed."),  # turn 1
        # turn 2: three tool rounds, so its last request holds six messages after the turn's own
        calls(("c1", "read_file", {"path": "notes1.txt"})),
        calls(("c2", "read_file", {"path": "notes2.txt"})),
        calls(("c3", "read_file", {"path": "notes3.txt"})),
        text("Tests added."),
        # turn 3: the same again
        calls(("c4", "read_file", {"path": "notes4.txt"})),
        calls(("c5", "read_file", {"path": "notes5.txt"})),
        calls(("c6", "read_file", {"path": "notes6.txt"})),
        text("Fixed the typo."),
    ]
    with scripted_server(*rounds) as server:
        workspace = Workspace.create(tmp_path).use(server).allow_all()
        for number in range(1, 7):  # a file a call: the same call repeated would be stopped as a loop
            (workspace.project / f"notes{number}.txt").write_text(f"notes {number}\n", encoding="utf-8")
        first = workspace.run("-p", "rename the module FIRSTGOAL")
        assert first.code == 0, first
        second = workspace.run("-c", "-p", "add tests for the parser SECONDGOAL")
        assert second.code == 0, second
        third = workspace.run("-c", "-p", "fix the typo in the readme THIRDGOAL")
        assert third.code == 0, third
        requests = model_requests(server)
    assert len(requests) == 9
    reminders = [_reminders(request) for request in requests]
    # The start of each turn carries none (the prompt's start stays as it was, for prompt caching); the long
    # end of each later turn restates that turn's own message, never the session's first.
    assert reminders[0] == reminders[1] == reminders[5] == []
    assert reminders[4] == ["add tests for the parser SECONDGOAL"]
    assert reminders[8] == ["fix the typo in the readme THIRDGOAL"]
    assert all("FIRSTGOAL" not in goal for found in reminders for goal in found), reminders
