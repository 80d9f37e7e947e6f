"""The verdict: what passed for each requirement and each scenario, as text for people and JSON for machines."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from typing import Literal

import msgspec

from hive_conformance.requirements import REQUIREMENTS
from hive_conformance.requirements import Requirement
from hive_conformance.requirements import Tier

__all__ = [
    "STATUS_ORDER",
    "Finding",
    "Report",
    "RequirementResult",
    "ScenarioResult",
    "ScenarioStatus",
    "Status",
    "build_report",
    "render_text",
]

Status = Literal["fail", "not_tested", "pass", "skip"]
"""A requirement's status: the worst over the scenarios that check it."""

ScenarioStatus = Literal["fail", "pass", "skip"]
"""A scenario's status."""

STATUS_ORDER: Final[dict[Status, int]] = {"fail": 3, "pass": 2, "skip": 1, "not_tested": 0}
"""Which status wins when several scenarios check one requirement (the highest)."""


class Finding(msgspec.Struct, frozen=True):
    """One failed check of one requirement."""

    requirement: str
    """The requirement's id."""
    message: str
    """What was wrong."""


class ScenarioResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """How one scenario went."""

    name: str
    """The scenario's name."""
    status: ScenarioStatus
    """``pass``, ``fail`` or ``skip``."""
    checked: list[str]
    """Every requirement id this scenario judged (its own and the checks run on every stream)."""
    findings: list[Finding] = []
    """The failed checks."""
    skipped_because: str | None = None
    """Why the scenario did not run."""
    diff: str = ""
    """A unified diff, expected → actual, when the bytes differ."""
    exit_code: int | None = None
    """The runner's exit status, when it has one."""
    seconds: float = 0.0
    """How long the scenario took."""
    transcript: list[str] = []
    """The runner's lines (each cut to 2,000 characters), on failure."""
    stderr: str = ""
    """The end of the runner's stderr, on failure."""


class RequirementResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One requirement's verdict."""

    id: str
    """The requirement's id."""
    tier: Tier
    """``mandatory``, ``capability`` or ``advisory``."""
    rule: str
    """The rule, in one sentence."""
    status: Status
    """The worst status over the scenarios that checked it; ``not_tested`` when none did."""
    scenarios: list[str] = []
    """The scenarios that checked it."""
    failures: list[str] = []
    """``<scenario>: <message>`` for each failed check."""


class Report(msgspec.Struct, kw_only=True):
    """The whole run."""

    runner: str
    """How the runner under test was reached."""
    conformant: bool
    """Every mandatory requirement passed and no capability requirement failed."""
    requirements: list[RequirementResult]
    """Every requirement of the registry, in registry order."""
    scenarios: list[ScenarioResult]
    """Every scenario, in run order."""


def build_report(runner: str, scenarios: Iterable[ScenarioResult]) -> Report:
    """Judge every requirement of the registry from the scenario results."""
    results = list(scenarios)
    judged: list[RequirementResult] = []
    for requirement in REQUIREMENTS.values():
        judged.append(_judge(requirement, results))
    conformant = all(_acceptable(result) for result in judged)
    return Report(runner=runner, conformant=conformant, requirements=judged, scenarios=results)


def _judge(requirement: Requirement, results: list[ScenarioResult]) -> RequirementResult:
    status: Status = "not_tested"
    names: list[str] = []
    failures: list[str] = []
    for result in results:
        if requirement.id not in result.checked:
            continue
        names.append(result.name)
        mine = [finding.message for finding in result.findings if finding.requirement == requirement.id]
        own: Status = "skip" if result.status == "skip" else "fail" if mine else "pass"
        failures += [f"{result.name}: {message}" for message in mine]
        if STATUS_ORDER[own] > STATUS_ORDER[status]:
            status = own
    return RequirementResult(
        id=requirement.id,
        tier=requirement.tier,
        rule=requirement.rule,
        status=status,
        scenarios=names,
        failures=failures,
    )


def _acceptable(result: RequirementResult) -> bool:
    if result.tier == "mandatory":
        return result.status == "pass"
    if result.tier == "capability":
        return result.status != "fail"
    return True


def render_text(report: Report, *, verbose: bool = False) -> str:
    """The report for a terminal: failures with their diffs first, then one line per requirement."""
    out: list[str] = [f"hive-conformance: {report.runner}", ""]
    for scenario in report.scenarios:
        if scenario.status != "fail":
            continue
        out.append(f"FAIL  scenario {scenario.name} ({scenario.seconds:.1f} s)")
        for finding in scenario.findings:
            out.append(f"      {finding.requirement}: {finding.message}")
        if scenario.diff:
            out += ["      " + line for line in scenario.diff.rstrip("\n").split("\n")]
        if scenario.stderr.strip():
            out.append("      runner stderr (end):")
            out += ["        " + line for line in scenario.stderr.rstrip("\n").split("\n")[-20:]]
        out.append("")
    if verbose:
        for scenario in report.scenarios:
            if scenario.status != "fail":
                why = f" ({scenario.skipped_because})" if scenario.skipped_because else ""
                out.append(f"{scenario.status.upper():5} scenario {scenario.name}{why}")
        out.append("")
    width = max((len(result.id) for result in report.requirements), default=0)
    for result in report.requirements:
        out.append(
            f"{result.status.upper().replace('_', ' '):10} {result.id:<{width}}  {result.tier:<10} {result.rule}"
        )
    counts = {
        status: sum(1 for result in report.requirements if result.status == status) for status in STATUS_ORDER
    }
    passed = sum(1 for scenario in report.scenarios if scenario.status == "pass")
    out += [
        "",
        f"scenarios: {passed} passed, {sum(1 for s in report.scenarios if s.status == 'fail')} failed, "
        f"{sum(1 for s in report.scenarios if s.status == 'skip')} skipped",
        f"requirements: {counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped, "
        f"{counts['not_tested']} not tested",
        "CONFORMANT" if report.conformant else "NOT CONFORMANT",
    ]
    return "\n".join(out) + "\n"
