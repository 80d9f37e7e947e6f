"""The ``hive-conformance`` command: listing, bad invocations, and a verdict on a runner that does little."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hive_conformance.cli import main
from hive_conformance.fixtures import load_scenarios
from hive_conformance.requirements import REQUIREMENTS

# Answers with session_started and nothing else, then waits for the end of its input: a dead agent.
SILENT_RUNNER = [
    sys.executable,
    "-c",
    'import sys; sys.stdout.write(\'{"type":"session_started","session_id":"x"}\\n\'); sys.stdout.flush();'
    " sys.stdin.read()",
]


def test_list_names_every_scenario_and_requirement(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for scenario in load_scenarios():
        assert f"  {scenario.name} " in out
    for rid in REQUIREMENTS:
        assert f"  {rid} " in out


def test_without_a_command_it_shows_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: hive-conformance" in capsys.readouterr().out


def test_stdio_without_a_runner_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["stdio", "--"])
    assert exit_info.value.code == 2
    assert "give the runner's command after --" in capsys.readouterr().err


def test_an_unknown_scenario_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stdio", "-k", "no_such_scenario", "--", "true"]) == 2
    assert "no such scenario" in capsys.readouterr().err


def test_a_runner_that_cannot_start_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["stdio", "-q", "-k", "text_plain", "--", str(tmp_path / "no-such-runner")]) == 2
    assert "cannot start" in capsys.readouterr().err


def test_a_scenario_without_expected_output_asks_to_record_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    scenario = tmp_path / "fixtures" / "demo"
    scenario.mkdir(parents=True)
    (scenario / "meta.json").write_text(
        json.dumps({"description": "A demo.", "requirements": ["HIVE-TEXT-001"]})
    )
    (scenario / "input.jsonl").write_text('{"type": "user_message", "content": "hi"}\n')
    (tmp_path / "fixtures" / "files").mkdir()
    assert main(["stdio", "-q", "--fixtures", str(tmp_path / "fixtures"), "--", *SILENT_RUNNER]) == 2
    assert "no expected.jsonl (record it with --record" in capsys.readouterr().err


@pytest.mark.slow
def test_a_runner_that_answers_nothing_is_not_conformant(tmp_path: Path) -> None:
    report_file = tmp_path / "report.json"
    command = [sys.executable, "-m", "hive_conformance.cli", "stdio", "-k", "text_plain", "-k", "two_turns"]
    done = subprocess.run(
        [
            *command,
            "--report-json",
            str(report_file),
            "--output-dir",
            str(tmp_path / "out"),
            "--",
            *SILENT_RUNNER,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-1] == "NOT CONFORMANT"
    assert "pass  text_plain" not in done.stderr
    assert "fail  text_plain" in done.stderr
    report = json.loads(report_file.read_text())
    statuses = {result["id"]: result["status"] for result in report["requirements"]}
    # Structural checks: it started right and exited 0, but no turn ever ended.
    assert statuses["HIVE-SESS-001"] == "pass"
    assert statuses["HIVE-RUN-001"] == "pass"
    assert statuses["HIVE-SEQ-001"] == "fail"
    # The scenarios' own requirements failed, and those no scenario ran were not tested.
    assert statuses["HIVE-TEXT-001"] == statuses["HIVE-TURN-002"] == statuses["HIVE-SESS-002"] == "fail"
    assert statuses["HIVE-CANCEL-001"] == "not_tested"
    scenario = next(result for result in report["scenarios"] if result["name"] == "text_plain")
    assert "the runner left 1 scripted model round(s) unused" in {
        finding["message"] for finding in scenario["findings"]
    }
    # The session id may vary, so the diff shows it as expected; the missing protocol_version shows.
    assert '+{"type":"session_started","session_id":"conformance"}' in scenario["diff"]
    two_turns = next(result for result in report["scenarios"] if result["name"] == "two_turns")
    assert (
        "step 2: 10 s passed before 1 turn_end event(s) were written" in two_turns["findings"][0]["message"]
    )
    assert (
        tmp_path / "out" / "text_plain.jsonl"
    ).read_text() == '{"type":"session_started","session_id":"x"}\n'
