"""Issue 23, "the sandbox shows what the rules refuse", through ``hive -p`` and ``hive run --server``.

The scripted model writes a test under ``tests/`` (an allowed edit) that prints every file of the project it can
read, ``.env`` and ``secrets/`` by name too, then runs it with the allowed ``pytest``. hive runs with the default
rules and the sandbox on (bubblewrap). What the read rules deny or ask about must not reach the output, the
session store or the next request to the model; a command a person approved sees what the rules ask about, never
what they deny; a user's own deny rule hides its folder the same way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_core.sandbox import probe_bubblewrap

_PROBE = probe_bubblewrap()
pytestmark = pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}")

ASKED = {
    ".env": "ENV-SECRET-a1b2",
    "sub/.env.local": "ENV-LOCAL-SECRET-c3d4",
}
"""Files the default rules ask about, and the secret each holds."""

DENIED = {
    "secrets/key.txt": "DENIED-SECRET-e5f6",
    "src/secrets/x": "SRC-DENIED-SECRET-a7b8",
}
"""Files the default rules deny, and the secret each holds."""

PRIVATE = {"data/private/people.csv": "PRIVATE-ROW-c9d0"}
"""Files only the user's own rule denies."""

LEAK = """\
from pathlib import Path

NAMES = [".env", "secrets/key.txt", "src/secrets/x", "sub/.env.local", "data/private/people.csv"]


def test_leak():
    paths = [Path(name) for name in NAMES] + sorted(Path(".").rglob("*"))
    for path in paths:
        try:
            print(f"{path}: {path.read_text()!r}")
        except (OSError, ValueError) as error:
            print(f"{path}: {type(error).__name__}")


if __name__ == "__main__":
    test_leak()
"""
"""The model's test: it prints whatever it can read."""

PYTEST = "pytest -s -q -p no:cacheprovider tests/test_leak.py"
"""Allowed by the default rules: nobody is asked."""


def _prepare(ws: Workspace) -> None:
    for name, secret in {**ASKED, **DENIED, **PRIVATE}.items():
        path = ws.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secret + "\n", encoding="utf-8")
    (ws.project / "src" / "main.py").write_text("VISIBLE = 'src-main-visible'\n", encoding="utf-8")
    (ws.project / "tests").mkdir()


def _secrets_absent(ws: Workspace, server: ScriptedModelServer, shown: str, secrets: dict[str, str]) -> None:
    stored = b"".join(path.read_bytes() for path in ws.home.rglob("*") if path.is_file())
    sent = json.dumps([request.body for request in model_requests(server)])
    for secret in secrets.values():
        assert secret not in shown
        assert secret.encode() not in stored
        assert secret not in sent


def _write_then_run(server: ScriptedModelServer, command: str) -> None:
    server.add(
        calls(("call_write", "write_file", {"path": "tests/test_leak.py", "content": LEAK})),
        calls(("call_run", "execute_command", {"command": command})),
        text("done"),
    )


def test_an_allowed_test_run_reads_nothing_the_rules_refuse(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _prepare(ws)
    _write_then_run(server, PYTEST)
    result = ws.use(server).run("-p", "run the tests", "-o", "json", timeout=120)
    assert result.code == 0, result
    document: dict[str, Any] = result.document()
    written, ran = document["calls"]
    assert written["success"] is True, written
    assert ran["success"] is True, ran
    # The test ran and read the project: what the rules allow is there, the rest was refused by the sandbox.
    assert "1 passed" in ran["result"], ran["result"]
    assert "src-main-visible" in ran["result"]
    assert "secrets/key.txt: PermissionError" in ran["result"]
    assert ".env: PermissionError" in ran["result"]
    assert "Hidden from the command" in ran["result"]
    tool_outputs = json.dumps(input_items(model_requests(server)[-1], "function_call_output"))
    assert "src-main-visible" in tool_outputs
    _secrets_absent(ws, server, json.dumps(document) + result.stdout + result.stderr, {**ASKED, **DENIED})
    assert PRIVATE["data/private/people.csv"] in ran["result"]  # no rule refuses it: the control


def test_a_user_deny_rule_hides_its_folder(ws: Workspace, server: ScriptedModelServer) -> None:
    _prepare(ws)
    ws.permissions(
        "permissions:\n  read:\n    - pattern: 'data/private/**'\n      action: deny\n      priority: 30\n"
    )
    _write_then_run(server, PYTEST)
    result = ws.use(server).run("-p", "run the tests", "-o", "json", timeout=120)
    assert result.code == 0, result
    document: dict[str, Any] = result.document()
    ran = document["calls"][1]
    assert ran["success"] is True, ran
    assert "1 passed" in ran["result"], ran["result"]
    assert "data/private/people.csv: PermissionError" in ran["result"]
    _secrets_absent(ws, server, json.dumps(document), {**ASKED, **DENIED, **PRIVATE})


MOVE = """\
import os


def test_move():
    for source, target in (("data", "moved"), ("data/private", "data/open")):
        try:
            os.rename(source, target)
            print(f"renamed {source}")
        except OSError as error:
            print(f"{source}: {type(error).__name__}")
"""
"""The model's test that would carry a refused folder out from under the rule naming it."""


def test_a_refused_folder_cannot_be_moved_out_from_under_its_rule(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _prepare(ws)
    ws.permissions(
        "permissions:\n  read:\n    - pattern: 'data/private/**'\n      action: deny\n      priority: 30\n"
    )
    server.add(
        calls(("call_write", "write_file", {"path": "tests/test_move.py", "content": MOVE})),
        calls(
            (
                "call_move",
                "execute_command",
                {"command": "pytest -s -q -p no:cacheprovider tests/test_move.py"},
            )
        ),
        # Had the move worked, these would read the file under a name no rule refuses.
        calls(
            ("call_read", "execute_command", {"command": "cat moved/private/people.csv data/open/people.csv"})
        ),
        text("done"),
    )
    result = ws.use(server).run("-p", "tidy up", "-o", "json", timeout=120)
    assert result.code == 0, result
    document: dict[str, Any] = result.document()
    moved = document["calls"][1]
    assert "1 passed" in moved["result"], moved["result"]
    assert "renamed" not in moved["result"]
    assert (ws.project / "data" / "private" / "people.csv").exists()
    assert not (ws.project / "moved").exists()
    _secrets_absent(ws, server, json.dumps(document), PRIVATE)


def test_an_approved_command_sees_what_the_rules_ask_about_never_what_they_deny(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _prepare(ws)
    # Not an allowed command, so it is asked about, and a person approves it over the wire.
    _write_then_run(server, "python3 tests/test_leak.py")
    with ws.use(server).start("run", "--server", "--session-id", "sandbox-reads") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "run the leak"})
        asked = proc.events_until("hitl_request")[-1]
        assert asked["tool_name"] == "execute_command", asked
        proc.send({"type": "hitl_response", "id": asked["id"], "approved": True})
        ends = [event for event in proc.events_until("turn_end") if event["type"] == "tool_end"]
        proc.close_stdin()
        assert proc.wait() == 0, proc.stderr
        wire = proc.stdout
    ran = next(end for end in ends if end["call_id"] == "call_run")
    assert ran["success"] is True, ran
    for secret in ASKED.values():
        assert secret in ran["output"]
    assert "secrets/key.txt: PermissionError" in ran["output"]
    _secrets_absent(ws, server, wire, DENIED)
