"""The sandbox from the ``hive`` command: ``hive doctor`` says how commands run, ``config show`` lists the keys,
and ``hive -p`` runs the model's commands with the configured sandbox and without hive's keys."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_core.sandbox import probe_bubblewrap

_PROBE = probe_bubblewrap()
needs_sandbox = pytest.mark.skipif(not _PROBE.usable, reason=f"no usable sandbox here: {_PROBE.problem}")

KEY = "sk-hive-cli-test-0123456789abcdef"


def configure(ws: Workspace, yaml_text: str) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(yaml_text, encoding="utf-8")


def broken_bwrap(ws: Workspace) -> None:
    """Put first on hive's PATH a ``bwrap`` that fails as it does where namespaces are not allowed."""
    bin_dir = ws.root / "bin"
    bin_dir.mkdir()
    program = bin_dir / "bwrap"
    program.write_text(
        '#!/bin/sh\nif [ "$1" = --version ]; then echo "bubblewrap 0.0.1"; exit 0; fi\n'
        'echo "bwrap: No permissions to create new namespace" >&2\nexit 1\n'
    )
    program.chmod(0o755)
    ws.env["PATH"] = f"{bin_dir}{os.pathsep}{ws.env['PATH']}"


def environment_lines(output: str) -> list[str]:
    return output.split("\nEnvironment\n", 1)[1].split("\n\n", 1)[0].splitlines()


@needs_sandbox
def test_doctor_shows_the_sandbox_at_work(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run("doctor")
    assert result.code == 0, result
    assert f"  ✓ sandbox: workspace-write, no network ({_PROBE.version})" in environment_lines(result.stdout)


def test_doctor_shows_a_sandbox_turned_off(ws: Workspace, server: ScriptedModelServer) -> None:
    configure(ws, "sandbox:\n  mode: off\n")
    result = ws.use(server).run("doctor")
    assert result.code == 0, result
    assert "  ✓ sandbox: off (sandbox.mode): commands run unconfined" in environment_lines(result.stdout)


def test_doctor_warns_when_auto_finds_no_sandbox(ws: Workspace, server: ScriptedModelServer) -> None:
    broken_bwrap(ws)
    result = ws.use(server).run("doctor")
    assert result.code == 0, result
    (line,) = [line for line in environment_lines(result.stdout) if "sandbox" in line]
    assert line.startswith("  ! sandbox: unavailable, so commands run unconfined: bubblewrap ("), line
    assert "No permissions to create new namespace" in line
    assert "install bubblewrap" in result.stdout.rsplit("\n\n", 1)[1]


def test_doctor_fails_when_the_mode_needs_a_sandbox_that_cannot_run(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    broken_bwrap(ws)
    configure(ws, "sandbox:\n  mode: workspace-write\n")
    result = ws.use(server).run("doctor")
    assert result.code == 1, result
    (line,) = [line for line in environment_lines(result.stdout) if "sandbox" in line]
    assert line.startswith(
        "  ✗ sandbox: workspace-write, but no sandbox can run here, so commands are refused"
    )
    assert "Some checks failed." in result.stdout


def test_config_show_lists_the_sandbox_keys(ws: Workspace) -> None:
    configure(ws, "sandbox:\n  networkAccess: true\n")
    result = ws.run("config", "show")
    assert result.code == 0, result
    lines = [line for line in result.stdout.splitlines() if line.startswith("sandbox.")]
    assert lines[0] == "sandbox.mode = auto  # default"
    assert lines[1].startswith("sandbox.networkAccess = true  # ")
    assert [line.split(" = ")[0] for line in lines] == [
        "sandbox.mode",
        "sandbox.networkAccess",
        "sandbox.passVariables",
        "sandbox.writablePaths",
    ]
    assert not any("not used" in line for line in lines)


def test_a_command_from_the_model_never_sees_hive_s_key(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        calls(("c1", "execute_command", {"command": 'printenv OPENAI_API_KEY; echo "key status $?"'})),
        text("Done."),
    )
    result = ws.use(server).allow_all().run("-p", "show the key", "-o", "json", env={"OPENAI_API_KEY": KEY})
    assert result.code == 0, result
    assert KEY not in result.stdout
    (call,) = result.line_document()["calls"]
    assert call["result"] == "Exit code: 0\nOutput:\nkey status 1"
    (output,) = input_items(model_requests(server)[1], "function_call_output")
    assert "key status 1" in output["output"]
    assert all(KEY not in json.dumps(request.body) for request in server.requests)


@needs_sandbox
def test_the_configured_mode_reaches_the_model_s_commands(ws: Workspace, server: ScriptedModelServer) -> None:
    configure(ws, "sandbox:\n  mode: read-only\n")
    server.add(calls(("c1", "execute_command", {"command": "touch made.txt; echo tried"})), text("Done."))
    result = ws.use(server).allow_all().run("-p", "make a file", "-o", "json")
    assert result.code == 0, result
    (call,) = result.line_document()["calls"]
    assert "Read-only file system" in call["result"]
    assert not Path(ws.project / "made.txt").exists()
