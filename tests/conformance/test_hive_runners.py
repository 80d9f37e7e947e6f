"""The conformance kit against hive's own runners, on every CI run.

``hive-conformance stdio --exact -- hive run --server`` must pass every scenario, byte for byte; hive's server
session driven in process (frozen clock) must write exactly the bytes of ``expected.jsonl``, and so the same
bytes as the stdio server, its measured ``duration_ms`` aside.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from conformance_targets import HIVE_SERVER
from conformance_targets import InProcessTarget

from hive_conformance.fixtures import default_fixtures_dir
from hive_conformance.fixtures import load_scenarios
from hive_conformance.harness import Suite
from hive_conformance.harness import normalize_recording
from hive_conformance.harness import run_suite
from hive_conformance.report import Report

pytestmark = pytest.mark.slow

SCENARIOS = load_scenarios()


@pytest.fixture(scope="module")
def stdio_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Report, Path]:
    """The console script against ``hive run --server``: its exit, its JSON report and the runner's lines."""
    scratch = tmp_path_factory.mktemp("stdio")
    command = shutil.which("hive-conformance", path=os.path.dirname(sys.executable))
    assert command is not None, "the hive-conformance console script is not installed"
    report_file, output_dir = scratch / "report.json", scratch / "output"
    done = subprocess.run(
        [
            command,
            "stdio",
            "--exact",
            "--report-json",
            str(report_file),
            "--output-dir",
            str(output_dir),
            "--",
            *HIVE_SERVER,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    report = msgspec.json.decode(report_file.read_bytes(), type=Report)
    return done, report, output_dir


def test_the_stdio_server_passes_every_scenario(
    stdio_run: tuple[subprocess.CompletedProcess[str], Report, Path],
) -> None:
    done, report, _ = stdio_run
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert report.conformant
    assert {scenario.name: scenario.status for scenario in report.scenarios} == {
        scenario.name: "pass" for scenario in SCENARIOS
    }
    assert all(requirement.status == "pass" for requirement in report.requirements)
    assert "CONFORMANT" in done.stdout.splitlines()[-1]


@pytest.mark.anyio
async def test_the_in_process_runner_writes_the_stdio_servers_bytes(
    stdio_run: tuple[subprocess.CompletedProcess[str], Report, Path], tmp_path: Path
) -> None:
    _, _, stdio_output = stdio_run
    output = tmp_path / "output"
    with Suite(default_fixtures_dir() / "files") as suite:
        report = await run_suite(SCENARIOS, InProcessTarget(), suite, exact=True, output_dir=output)
    failures = {
        scenario.name: scenario.diff or scenario.findings
        for scenario in report.scenarios
        if scenario.status != "pass"
    }
    assert failures == {}
    assert report.conformant
    for scenario in SCENARIOS:
        in_process = (output / f"{scenario.name}.jsonl").read_bytes()
        # A frozen clock: exactly the fixture's bytes, with nothing masked at all.
        assert in_process == b"".join(scenario.expected), scenario.name
        stdio = (stdio_output / f"{scenario.name}.jsonl").read_bytes()
        assert in_process == b"".join(normalize_recording(stdio.split(b"\n")[:-1])), scenario.name
