""" "Always" answers, end to end: on a real pseudo-terminal and over the wire, against the scripted model and the
default rules. An always-answer records a rule no wider than the call, shown when made, listed and revoked with
``/permissions``, kept with the session, and never a way past the default guards."""

from __future__ import annotations

import subprocess
from pathlib import Path

from cli_harness import Terminal
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round

_PANEL_END = "[s] reject and stop"


def _commands(*steps: tuple[str, str]) -> list[Round]:
    """The model's script: for each ``(command, reply)``, a round that runs ``command`` (call ids ``c1``, ``c2``, ...)
    and one that says ``reply``."""
    return [
        step
        for number, (command, reply) in enumerate(steps, 1)
        for step in (calls((f"c{number}", "execute_command", {"command": command})), text(reply))
    ]


def _git_project(project: Path) -> None:
    for args in (
        ["init", "-q"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
    ):
        subprocess.run(["git", *args], cwd=project, check=True)
    (project / "notes.txt").write_text("committed\n", encoding="utf-8")
    subprocess.run(["git", "add", "notes.txt"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=project, check=True)
    (project / "notes.txt").write_text("uncommitted work\n", encoding="utf-8")


def _turn(term: Terminal, message: str, end: str) -> str:
    """Send ``message`` and return what the terminal showed until ``end`` and the next prompt."""
    term.type(message + "\r")
    shown = term.expect(end)
    return shown + term.expect("> ")


def test_always_on_python_c_still_asks_before_git_reset_hard(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _git_project(ws.project)
    server.add(
        *_commands(
            ("python3 -c 'print(6*7)'", "Printed."),
            ("git reset --hard", "Reset refused."),
        )
    )
    with ws.use(server).prompt() as term:
        term.type("compute\r")
        panel = term.expect(_PANEL_END)
        assert "python3 -c" in panel
        term.type("a\r")
        shown = term.expect("Printed.")
        term.expect("> ")

        term.type("clean up\r")
        panel = term.expect(_PANEL_END)  # asked, not run
        assert "git reset --hard" in panel
        assert (ws.project / "notes.txt").read_text(encoding="utf-8") == "uncommitted work\n"
        term.enter("n", "Reset refused.")
        term.type("exit\r")
        assert term.wait() == 0
    assert (ws.project / "notes.txt").read_text(encoding="utf-8") == "uncommitted work\n"
    assert "always allowed for this session: execute_command \"python3 -c 'print(6*7)'\"" in shown


def test_a_prefix_grant_is_shown_listed_revoked_and_asked_again(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    # pytest is allowed by the default rules; this project asks before it, as a project may.
    ws.permissions('permissions:\n  bash:\n    - pattern: "pytest*"\n      action: ask\n')
    server.add(
        *_commands(
            ("pytest -q", "Ran the tests."),
            ("pytest tests/x.py", "Ran one file."),
            ("pytest tests/y.py", "Not run."),
        )
    )
    with ws.use(server).prompt() as term:
        term.type("test\r")
        term.expect(_PANEL_END)
        term.type("a\r")
        shown = term.expect("Ran the tests.")
        assert 'always allowed for this session: execute_command "pytest *"' in shown
        term.expect("> ")

        shown = _turn(term, "test one file", "Ran one file.")
        assert "approval needed" not in shown  # allowed without asking
        assert "execute_command" in shown

        listing = _turn(term, "/permissions", 'execute_command "pytest *"')
        assert '1. execute_command "pytest *"' in listing
        revoked = _turn(term, "/permissions revoke 1", "revoked")
        assert "revoked" in revoked
        empty = _turn(term, "/permissions", "nothing is always allowed")
        assert "pytest" not in empty.split("/permissions")[-1]

        term.type("test another\r")
        panel = term.expect(_PANEL_END)  # asked again after revoking
        assert "pytest tests/y.py" in panel
        term.enter("n", "Not run.")
        term.type("exit\r")
        assert term.wait() == 0


def test_a_grant_survives_continue_in_a_new_process(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        *_commands(
            ("ruff check -q", "Checked."),
            ("ruff format --check", "Formatted check."),
            ("git reset --hard", "Asked."),
        )
    )
    ws.use(server)
    with ws.prompt() as term:
        term.type("lint\r")
        term.expect(_PANEL_END)
        term.enter("a", "Checked.")
        term.type("\x04")
        assert term.wait() == 0
    with ws.prompt("-c") as term:
        listing = _turn(term, "/permissions", 'execute_command "ruff *"')
        assert '1. execute_command "ruff *"' in listing
        shown = _turn(term, "format", "Formatted check.")
        assert "approval needed" not in shown
        term.type("reset\r")
        panel = term.expect(_PANEL_END)
        assert "git reset --hard" in panel
        term.enter("n", "Asked.")
        term.type("exit\r")
        assert term.wait() == 0


def test_always_approve_over_the_wire_allows_the_same_command_asks_for_another_and_survives_a_restart(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        *_commands(
            ("ruff check -q", "One."),
            ("ruff check -q", "Two."),
            ("mypy .", "Three."),
            ("ruff format --check", "Four."),
        )
    )
    with ws.use(server).start("run", "--server", "--session-id", "wire-always") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "lint"})
        request = proc.events_until("hitl_request")[-1]
        assert request["arguments"] == {"command": "ruff check -q"}
        proc.send({"type": "hitl_response", "id": request["id"], "approved": True, "always_approve": True})
        first = proc.events_until("turn_end")
        assert [e["type"] for e in first if e["type"] == "tool_end"] == ["tool_end"]

        proc.send({"type": "user_message", "content": "lint again"})
        second = proc.events_until("turn_end")
        assert "hitl_request" not in [e["type"] for e in second]
        [ended] = [e for e in second if e["type"] == "tool_end"]
        assert ended["call_id"] == "c2"
        assert ended.get("refusal") is None

        proc.send({"type": "user_message", "content": "type check"})
        other = proc.events_until("hitl_request")[-1]
        assert other["arguments"] == {"command": "mypy ."}
        proc.send({"type": "hitl_response", "id": other["id"], "approved": False, "reason": "no"})
        proc.events_until("turn_end")
        proc.close_stdin()
        assert proc.wait() == 0, proc.stderr
    # A restarted server serving the same session keeps the grant.
    with ws.start("run", "--server", "--session-id", "wire-always") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "format check"})
        restarted = proc.events_until("turn_end")
        assert "hitl_request" not in [e["type"] for e in restarted]
        [ended] = [e for e in restarted if e["type"] == "tool_end"]
        assert (ended["call_id"], ended.get("refusal")) == ("c4", None)
        proc.close_stdin()
        assert proc.wait() == 0, proc.stderr
