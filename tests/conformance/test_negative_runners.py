"""The kit must fail a broken runner, and for the right requirement.

Each mode of ``broken_runners.py`` wraps ``hive run --server`` and breaks one thing. The kit runs it on a few
scenarios chosen to expose the break: the scenarios that show it must fail, those that do not must pass, and the
failed requirements must be exactly the rule the break violates (hard-coded here, so this file says which
requirement catches which break) plus the own requirements of the scenarios whose bytes differ (taken from their
``meta.json``). The ``passthrough`` mode breaks nothing: it passes every scenario used here, so no failure below is
the wrapper's doing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import msgspec
import pytest

from hive_conformance.fixtures import Scenario
from hive_conformance.fixtures import default_fixtures_dir
from hive_conformance.fixtures import load_scenarios
from hive_conformance.harness import STREAM_REQUIREMENTS
from hive_conformance.harness import Suite
from hive_conformance.harness import run_suite
from hive_conformance.report import Report
from hive_conformance.report import render_text
from hive_conformance.targets import StdioTarget

pytestmark = pytest.mark.slow

BROKEN_RUNNERS = Path(__file__).with_name("broken_runners.py")

# A bound on one run of the kit (a scenario takes about 3 s here; the harness gives each at most 30 s).
_RUN_LIMIT = 120.0


class Case(msgspec.Struct, frozen=True, kw_only=True):
    """One broken runner and what the kit must say about it."""

    mode: str
    """The mode of ``broken_runners.py``."""
    breaks: frozenset[str]
    """The requirements the break itself violates, in every scenario that shows it."""
    failing: tuple[str, ...]
    """The scenarios that show the break."""
    passing: tuple[str, ...] = ()
    """Scenarios the break does not touch."""


CASES = [
    # tool_pairs: a tool_start without its tool_end.
    Case(
        mode="missing_tool_end",
        breaks=frozenset({"HIVE-SEQ-003"}),
        failing=("tool_echo", "tool_error"),
        passing=("text_plain",),
    ),
    # canonical: "stop_reason":null on the failed turn's turn_end, "refusal":null on tool_end.
    Case(
        mode="nulls",
        breaks=frozenset({"HIVE-WIRE-002"}),
        failing=("model_error", "tool_echo"),
        passing=("text_plain",),
    ),
    # canonical only: session_started is still the first line, just not written type first.
    Case(
        mode="fields_out_of_order", breaks=frozenset({"HIVE-WIRE-002"}), failing=("text_plain", "two_turns")
    ),
    Case(mode="no_session_started", breaks=frozenset({"HIVE-SESS-001"}), failing=("text_plain", "two_turns")),
    # The exit status, and the turn the scenario asks for after the malformed line, which never ends. A null
    # line is JSON: the wrapper passes it on.
    Case(
        mode="crash_on_malformed",
        breaks=frozenset({"HIVE-RUN-001", "HIVE-SEQ-001"}),
        failing=("unreadable_malformed",),
        passing=("unreadable_null",),
    ),
    # canonical: \u escapes instead of raw UTF-8, where there is non-ASCII.
    Case(
        mode="ascii_escapes",
        breaks=frozenset({"HIVE-WIRE-002"}),
        failing=("non_ascii",),
        passing=("text_plain",),
    ),
    # after_last_turn: a text_delta after the session's last turn_end.
    Case(
        mode="delta_after_turn_end", breaks=frozenset({"HIVE-SEQ-001"}), failing=("text_plain", "two_turns")
    ),
]

SCENARIOS = {
    scenario.name: scenario
    for scenario in load_scenarios(
        names=sorted({name for case in CASES for name in (*case.failing, *case.passing)})
    )
}


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    """The scripted model and fixture tools, shared by every run in this file."""
    with Suite(default_fixtures_dir() / "files") as running:
        yield running


async def _run(mode: str, names: list[str], suite: Suite) -> Report:
    target = StdioTarget([sys.executable, str(BROKEN_RUNNERS), mode])
    with anyio.fail_after(_RUN_LIMIT):
        return await run_suite([SCENARIOS[name] for name in names], target, suite, exact=True)


def _own(scenario: Scenario) -> set[str]:
    """The scenario's own requirements: what fails when its bytes differ."""
    return {rid for rid in scenario.meta.requirements if rid not in STREAM_REQUIREMENTS}


def _failed(report: Report) -> set[str]:
    return {requirement.id for requirement in report.requirements if requirement.status == "fail"}


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=[case.mode for case in CASES])
async def test_the_kit_fails_a_broken_runner_for_the_right_requirements(case: Case, suite: Suite) -> None:
    report = await _run(case.mode, [*case.failing, *case.passing], suite)
    shown = render_text(report)
    assert not report.conformant, shown
    assert {scenario.name: scenario.status for scenario in report.scenarios} == {
        **{name: "fail" for name in case.failing},
        **{name: "pass" for name in case.passing},
    }, shown
    for scenario in report.scenarios:
        found = {finding.requirement for finding in scenario.findings}
        want = case.breaks | _own(SCENARIOS[scenario.name]) if scenario.name in case.failing else set[str]()
        assert found == want, f"{scenario.name}:\n{shown}"
    expected = set(case.breaks).union(*(_own(SCENARIOS[name]) for name in case.failing))
    assert _failed(report) == expected, shown


@pytest.mark.anyio
async def test_the_wrapper_alone_breaks_nothing(suite: Suite) -> None:
    report = await _run("passthrough", list(SCENARIOS), suite)
    shown = render_text(report)
    assert {scenario.name: scenario.status for scenario in report.scenarios} == dict.fromkeys(
        SCENARIOS, "pass"
    ), shown
    assert _failed(report) == set(), shown
    # Not conformant all the same: most requirements go untested on so few scenarios.
    assert {r.status for r in report.requirements} == {"pass", "not_tested"}
