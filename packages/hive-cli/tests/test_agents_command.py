"""``hive agents``: every backend, hive's own loop first, with what is installed, its version, whether it runs
offline and how to install what is missing; ``--verbose`` adds the program, the protocol and the pool."""

from __future__ import annotations

from agent_cli_harness import VERSION
from agent_cli_harness import FakeCli
from cli_harness import Workspace


def test_the_json_listing_tells_installed_from_missing(ws: Workspace) -> None:
    FakeCli.install(ws, "gemini")
    result = ws.run("agents", "-o", "json")
    assert result.code == 0, result
    rows = result.document()["agents"]
    names = [row["name"] for row in rows]
    assert names[0] == "hive"
    assert {"gemini", "copilot", "opencode", "claude-code"} <= set(names)
    assert len(names) == len(set(names))
    by_name = {row["name"]: row for row in rows}
    hive = by_name["hive"]
    assert (hive["installed"], hive["offline"]) == (True, True)
    gemini = by_name["gemini"]
    assert (gemini["installed"], gemini["version"], gemini["offline"]) == (True, VERSION, True)
    assert "gemini-cli" in gemini["aliases"]
    assert "install" not in gemini
    copilot = by_name["copilot"]
    assert (copilot["installed"], copilot["version"]) == (False, None)
    assert "npm install" in copilot["install"]
    assert copilot["problem"]
    assert "claude" in by_name["claude-code"]["aliases"]
    assert "executable" not in gemini
    assert "pool" not in result.document()


def test_verbose_adds_the_program_the_wire_and_the_pool(ws: Workspace) -> None:
    cli = FakeCli.install(ws, "gemini")
    result = ws.run("agents", "-o", "json", "--verbose")
    assert result.code == 0, result
    document = result.document()
    gemini = next(row for row in document["agents"] if row["name"] == "gemini")
    assert gemini["executable"] == str(cli.bin / "gemini")
    assert (gemini["wire"], gemini["arguments"]) == ("acp", ["--acp"])
    assert document["pool"]["settings"]["max_active"] >= 1
    assert set(document["pool"]["stats"]) >= {"hits", "misses", "evictions", "active"}


def test_the_table_lists_every_backend_and_how_to_install_the_missing(ws: Workspace) -> None:
    FakeCli.install(ws, "gemini")
    result = ws.run("agents")
    assert result.code == 0, result
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["NAME", "INSTALLED", "VERSION", "OFFLINE", "ALIASES"]
    assert lines[1].split()[:3] == ["hive", "yes", lines[1].split()[2]]
    gemini = next(line for line in lines if line.startswith("gemini "))
    assert gemini.split()[:4] == ["gemini", "yes", VERSION, "yes"]
    copilot = lines.index(next(line for line in lines if line.startswith("copilot ")))
    assert lines[copilot].split()[1] == "no"
    assert lines[copilot + 1].strip().startswith("install: npm install")
    assert "1 of " in result.stdout


def test_doctor_counts_the_installed_clis(ws: Workspace) -> None:
    FakeCli.install(ws, "gemini", "opencode")
    result = ws.run("doctor")
    section = result.stdout.split("\nAgents\n", 1)[1].split("\n\n", 1)[0]
    assert "3 of " in section, result  # one `opencode` program serves two backends: its server and its ACP
    assert "hive agents" in section, result
