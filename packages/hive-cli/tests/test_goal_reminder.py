"""The goal reminder names the current task: over several turns of one session (``hive -p``, then ``hive -c -p``),
the requests the scripted model server recorded restate the latest user message, never the session's first."""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import Workspace, calls, model_requests, scripted_server, text

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
        # turn 2: two tool rounds, so its later requests hold enough messages for the reminder
        calls(("c1", "read_file", {"path": "notes.txt"})),
        calls(("c2", "read_file", {"path": "notes.txt"})),
        text("Tests added."),
        # turn 3: the same again
        calls(("c3", "read_file", {"path": "notes.txt"})),
        text("Fixed the typo."),
    ]
    with scripted_server(*rounds) as server:
        workspace = Workspace.create(tmp_path).use(server).allow_all()
        (workspace.project / "notes.txt").write_text("notes\n", encoding="utf-8")
        first = workspace.run("-p", "rename the module FIRSTGOAL")
        assert first.code == 0, first
        second = workspace.run("-c", "-p", "add tests for the parser SECONDGOAL")
        assert second.code == 0, second
        third = workspace.run("-c", "-p", "fix the typo in the readme THIRDGOAL")
        assert third.code == 0, third
        requests = model_requests(server)
    assert len(requests) == 6
    reminders = [_reminders(request) for request in requests]
    # Some request of each later turn carries a reminder, and every reminder names that turn's own message.
    assert any(reminders[1:4]), reminders
    assert any(reminders[4:6]), reminders
    for index, found in enumerate(reminders):
        for goal in found:
            assert "FIRSTGOAL" not in goal, (index, goal)
    assert all(goal == "add tests for the parser SECONDGOAL" for goal in sum(reminders[1:4], list[str]()))
    assert all(goal == "fix the typo in the readme THIRDGOAL" for goal in sum(reminders[4:6], list[str]()))
