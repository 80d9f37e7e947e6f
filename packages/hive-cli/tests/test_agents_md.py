"""AGENTS.md in the instructions, end to end: ``hive -p`` and ``hive run --server`` against the scripted model,
whose request log shows the instructions the model was sent. The files from the repository root down to the
working directory, root first (CLAUDE.md where a directory has no AGENTS.md); the limit keeping the nearest; a
file that cannot be read left out with a warning while the rest load; ``agentsMd.enabled: false``; ``/plan``
keeping them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer


def _repository(ws: Workspace) -> Path:
    """Make the project a git repository (so a folder below it is not a project of its own); its ``pkg/sub``."""
    subprocess.run(["git", "init", "-q", str(ws.project)], check=True, timeout=60, env=ws.env)
    sub = ws.project / "pkg" / "sub"
    sub.mkdir(parents=True)
    return sub


def _instructions(server: ScriptedModelServer, index: int = 0) -> str:
    value = model_requests(server)[index].body.get("instructions")
    assert isinstance(value, str), model_requests(server)[index].body
    return value


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def test_the_files_from_the_root_down_to_the_working_directory_nearest_last(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    sub = _repository(ws)
    _write(ws.project / "AGENTS.md", "Root rule: run the tests with uv.\n")
    _write(ws.project / "pkg" / "CLAUDE.md", "Pkg rule from CLAUDE.md.\r\n")  # no AGENTS.md there
    _write(sub / "AGENTS.md", "\ufeffSub rule: keep it small.\n")
    _write(sub / "CLAUDE.md", "Sub CLAUDE.md, not read beside an AGENTS.md.\n")
    _write(ws.project / "other" / "AGENTS.md", "A sibling folder's rule.\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello", cwd=sub)

    assert result.code == 0, result
    instructions = _instructions(server)
    assert instructions.startswith("You are hive")
    headings = [line for line in instructions.splitlines() if line.startswith("## ")]
    assert headings == ["## AGENTS.md", "## pkg/CLAUDE.md", "## pkg/sub/AGENTS.md"]
    root, pkg, near = (
        instructions.index(needle)
        for needle in (
            "Root rule: run the tests with uv.",
            "Pkg rule from CLAUDE.md.",
            "Sub rule: keep it small.",
        )
    )
    assert root < pkg < near
    assert "\ufeff" not in instructions
    assert "\r" not in instructions
    assert "not read beside" not in instructions
    assert "sibling" not in instructions
    assert "AGENTS.md" not in result.stderr  # nothing to warn about


def test_at_the_limit_the_nearest_stays_whole_and_the_farthest_is_cut_or_left_out(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    sub = _repository(ws)
    _write(ws.project / "AGENTS.md", "ROOT " * 40)  # 200 characters
    _write(ws.project / "pkg" / "AGENTS.md", "MIDDLE-START " + "m" * 87)  # 100
    _write(sub / "AGENTS.md", "NEAR " * 12)  # 60 (59 once stripped)
    _write(ws.project / ".hive" / "config.yaml", "agentsMd:\n  maxCharacters: 100\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello", cwd=sub)

    assert result.code == 0, result
    instructions = _instructions(server)
    assert ("NEAR " * 12).strip() in instructions  # whole
    assert "MIDDLE-START " + "m" * 28 in instructions  # its beginning: 41 = 100 - 59 characters
    assert "MIDDLE-START " + "m" * 29 not in instructions
    assert "ROOT" not in instructions
    assert [line for line in instructions.splitlines() if line.startswith("## ")] == [
        "## pkg/AGENTS.md",
        "## pkg/sub/AGENTS.md",
    ]
    note = (
        "AGENTS.md text is limited to 100 characters (agentsMd.maxCharacters): pkg/AGENTS.md is cut to its "
        "first 41 characters; AGENTS.md is left out."
    )
    assert note in instructions
    assert note in result.stderr  # the user is told too


def test_an_unreadable_file_is_left_out_with_a_warning_and_the_rest_load(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path
) -> None:
    sub = _repository(ws)
    outside = tmp_path / "credentials"
    outside.write_text("aws_secret_access_key = SECRET-OUTSIDE\n", encoding="utf-8")
    _write(ws.project / "AGENTS.md", "Root rule.\n")
    _write(ws.project / "pkg" / "AGENTS.md", b"caf\xe9 latin-1\n")
    os.symlink(outside, sub / "AGENTS.md")  # a project's link to a file of the user's: never sent
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello", cwd=sub)

    assert result.code == 0, result
    instructions = _instructions(server)
    assert "Root rule." in instructions
    assert "latin-1" not in instructions
    assert "SECRET-OUTSIDE" not in instructions
    warnings = [line for line in result.stderr.splitlines() if "left out of the instructions" in line]
    assert warnings == [
        "hive: warning: pkg/AGENTS.md is left out of the instructions: it is not UTF-8 text "
        "(invalid continuation byte at byte 3)",
        "hive: warning: pkg/sub/AGENTS.md is left out of the instructions: it leads out of its directory "
        "through a symbolic link",
    ]


def test_turned_off_no_file_is_read(ws: Workspace, server: ScriptedModelServer) -> None:
    _write(ws.project / "AGENTS.md", "Root rule.\n")
    _write(ws.project / ".hive" / "config.yaml", "agentsMd:\n  enabled: false\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert "Root rule." not in _instructions(server)
    assert "AGENTS.md" not in _instructions(server)


def test_the_server_sends_them_with_every_request_and_plan_mode_keeps_them(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    _write(ws.project / "AGENTS.md", "Root rule for the server.\n")
    server.add(text("One."), text("Two."))
    with ws.use(server).serve() as proc:
        assert proc.turn("first")[-1]["type"] == "turn_end"
        assert proc.turn("second")[-1]["type"] == "turn_end"
    assert all("Root rule for the server." in _instructions(server, index) for index in (0, 1))


def test_planning_mode_toggled_at_the_terminal_keeps_them(ws: Workspace, server: ScriptedModelServer) -> None:
    _write(ws.project / "AGENTS.md", "Root rule at the terminal.\n")
    server.add(text("Planned."))
    with ws.use(server).prompt() as term:
        term.enter("/plan", "planning mode on")
        term.enter("make a plan", "Planned.")
        term.type("/exit\r")
        assert term.wait() == 0
    instructions = _instructions(server)
    assert "You are in planning mode" in instructions
    assert instructions.index("You are in planning mode") < instructions.index("Root rule at the terminal.")


def test_the_small_model_profile_gets_them_too(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    # The host is built in this process (no model is loaded to build it): the local model's instructions
    # are not in any request log, and a run of the packaged model would take most of a minute.
    from hive_cli.assemble import HostOptions
    from hive_cli.assemble import build_host

    _write(ws.project / "AGENTS.md", "Small model rule.\n")
    environment = {**ws.env, "LMSUPPLY_ENABLED": "true"}
    for name in set(os.environ) - set(environment):  # a provider of the developer's own is not chosen
        monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    ws.trust_now()

    host = build_host(HostOptions(cwd=ws.project), approvals=None, warn=False)

    assert host.settings.provider == "local"
    assert host.agent is not None
    assert host.agent.instructions is not None
    assert host.agent.instructions.startswith("You are hive, a helpful assistant.")
    assert host.agent.instructions.endswith("## AGENTS.md\n\nSmall model rule.")


def test_a_project_not_trusted_still_gets_its_agents_md_read(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.trusted = False
    _write(ws.project / "AGENTS.md", "Untrusted project's rule.\n")
    server.add(text("Done."))

    result = ws.use(server).run("-p", "hello")

    assert result.code == 0, result
    assert "Untrusted project's rule." in _instructions(server)
