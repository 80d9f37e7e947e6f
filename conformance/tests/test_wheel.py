"""The kit as anybody installs it: the wheel carries the fixtures, and the console script finds them there."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from hive_conformance.fixtures import load_scenarios

PACKAGE = Path(__file__).resolve().parents[1]

PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
from hive_conformance.fixtures import default_fixtures_dir, load_scenarios
print(default_fixtures_dir())
print(len(load_scenarios()))
"""


@pytest.mark.slow
def test_the_wheel_ships_the_fixtures_and_finds_them_installed(tmp_path: Path) -> None:
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "uv",
            "build",
            "--wheel",
            "--no-sources",
            "--out-dir",
            str(tmp_path),
            str(PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("hive_conformance-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata_name,) = [name for name in names if name.endswith(".dist-info/METADATA")]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
        (entry_points,) = [name for name in names if name.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
        archive.extractall(tmp_path / "site")
    scenarios = load_scenarios()
    for scenario in scenarios:
        for part in ("meta.json", "input.jsonl", "expected.jsonl"):
            assert f"hive_conformance/fixtures/{scenario.name}/{part}" in names
    assert "hive_conformance/fixtures/files/notes.txt" in names
    assert "hive-conformance = hive_conformance.cli:main" in scripts
    requires = {
        requirement.split(">")[0].split("=")[0].split("<")[0].strip()
        for requirement in metadata.get_all("Requires-Dist") or []
    }
    assert requires == {"hive-protocol", "anyio", "msgspec", "mcp", "starlette", "uvicorn", "httpx2"}
    site = tmp_path / "site"
    found = subprocess.run(
        [sys.executable, "-c", PROBE, str(site)], capture_output=True, text=True, timeout=60, check=False
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == [str(site / "hive_conformance" / "fixtures"), str(len(scenarios))]
