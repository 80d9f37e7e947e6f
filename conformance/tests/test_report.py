"""The verdict: how scenario results become requirement statuses, and when a runner is conformant."""

from __future__ import annotations

import msgspec

from hive_conformance.report import Finding
from hive_conformance.report import Report
from hive_conformance.report import ScenarioResult
from hive_conformance.report import build_report
from hive_conformance.report import render_text
from hive_conformance.requirements import REQUIREMENTS

MANDATORY = [rid for rid, requirement in REQUIREMENTS.items() if requirement.tier == "mandatory"]
CAPABILITY = next(rid for rid, requirement in REQUIREMENTS.items() if requirement.tier == "capability")
ADVISORY = next(rid for rid, requirement in REQUIREMENTS.items() if requirement.tier == "advisory")


def _passing(*extra: str) -> ScenarioResult:
    return ScenarioResult(name="all", status="pass", checked=[*MANDATORY, *extra])


def test_a_runner_is_conformant_when_every_mandatory_requirement_passed() -> None:
    report = build_report("runner", [_passing()])
    assert report.conformant
    statuses = {result.id: result.status for result in report.requirements}
    assert {statuses[rid] for rid in MANDATORY} == {"pass"}
    assert statuses[CAPABILITY] == statuses[ADVISORY] == "not_tested"
    assert [result.id for result in report.requirements] == list(REQUIREMENTS)


def test_a_mandatory_requirement_nobody_tested_fails_the_verdict() -> None:
    partial = ScenarioResult(name="some", status="pass", checked=MANDATORY[1:])
    report = build_report("runner", [partial])
    assert not report.conformant
    assert report.requirements[0].status == "not_tested"


def test_a_failed_check_fails_its_requirement_whatever_passed_elsewhere() -> None:
    failed = ScenarioResult(
        name="broken", status="fail", checked=[MANDATORY[0]], findings=[Finding(MANDATORY[0], "no newline")]
    )
    report = build_report("runner", [_passing(), failed])
    result = next(result for result in report.requirements if result.id == MANDATORY[0])
    assert result.status == "fail"
    assert result.scenarios == ["all", "broken"]
    assert result.failures == ["broken: no newline"]
    assert not report.conformant


def test_a_failed_capability_fails_the_verdict_and_a_skipped_one_does_not() -> None:
    skipped = ScenarioResult(name="thinking", status="skip", checked=[CAPABILITY], skipped_because="lacks it")
    assert build_report("runner", [_passing(), skipped]).conformant
    failed = ScenarioResult(
        name="t", status="fail", checked=[CAPABILITY], findings=[Finding(CAPABILITY, "x")]
    )
    assert not build_report("runner", [_passing(), failed]).conformant


def test_an_advisory_failure_is_reported_but_never_decides() -> None:
    failed = ScenarioResult(name="a", status="fail", checked=[ADVISORY], findings=[Finding(ADVISORY, "late")])
    report = build_report("runner", [_passing(), failed])
    assert report.conformant
    assert next(result for result in report.requirements if result.id == ADVISORY).status == "fail"


def test_the_text_report_leads_with_failures_and_ends_with_the_verdict() -> None:
    failed = ScenarioResult(
        name="broken",
        status="fail",
        checked=[MANDATORY[0]],
        findings=[Finding(MANDATORY[0], "the output differs")],
        diff="--- expected\n+++ actual\n-a\n+b\n",
        stderr="Traceback (most recent call last):\nBoom\n",
    )
    text = render_text(build_report("my-runner", [_passing(), failed]))
    lines = text.splitlines()
    assert lines[0] == "hive-conformance: my-runner"
    assert lines[2].startswith("FAIL  scenario broken")
    assert f"      {MANDATORY[0]}: the output differs" in lines
    assert "      +b" in lines
    assert "        Boom" in lines
    assert any(line.startswith("FAIL") and MANDATORY[0] in line for line in lines[3:])
    assert lines[-1] == "NOT CONFORMANT"
    assert "scenarios: 1 passed, 1 failed, 0 skipped" in lines


def test_the_report_round_trips_as_json() -> None:
    report = build_report("runner", [_passing()])
    assert msgspec.json.decode(msgspec.json.encode(report), type=Report) == report
