"""A program's option table applies however the program is reached: through a Python interpreter, a launcher
(``uv run``, ``npx``, ``poetry run``…), a wrapper (``env``, ``timeout``…) or a path. ``python -m pytest
--basetemp=/elsewhere`` was allowed although ``pytest --basetemp=/elsewhere`` asks.

The rules allow every command and every file inside the project, so only the option table can stop a call.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from permissions_harness import default_verdict
from permissions_harness import rule

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules

RULES = PermissionRules(
    bash=(rule("*", "allow"),),
    read=(rule("**/*", "allow"),),
    edit=(rule("**/*", "allow"),),
    default_action="ask",
)

SPELLINGS = [
    "pytest",
    "py.test",
    "python -m pytest",
    "python3 -m pytest",
    "python3.11 -m pytest",
    "python -Bm pytest",
    "python -mpytest",
    "python -W ignore -X dev -m pytest",
    "python -m pytest.__main__",
    "/usr/bin/pytest",
    ".venv/bin/pytest",
    "./node_modules/.bin/pytest",
    "python .venv/bin/pytest",
    "uv run pytest",
    "uv run -- pytest",
    "uv run --with pytest-xdist pytest",
    "uv run --with pytest pytest",
    "uv run python -m pytest",
    "uv run python3 -m pytest",
    "uv tool run pytest",
    "uvx pytest",
    "npx pytest",
    "npm exec pytest",
    "npm exec -- pytest",
    "pnpm exec pytest",
    "poetry run pytest",
    "pipx run pytest",
    "pdm run pytest",
    "hatch run pytest",
    "conda run -n base pytest",
    "env CI=1 pytest",
    "command pytest",
    "exec pytest",
    "nice -n 5 pytest",
    "timeout 5 pytest",
    "time pytest",
    "nohup pytest",
    "env uv run python -m pytest",
    "timeout 60 uv run --frozen python3 -m pytest",
]

OUTSIDE_OPTIONS = [
    "--basetemp=/elsewhere",
    "--basetemp /elsewhere",
    "--junitxml=/elsewhere/r.xml",
    "-c /elsewhere/ini",
]
ASKING_OPTIONS = ["-o addopts=-p evil", "--override-ini=addopts=x"]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("option", OUTSIDE_OPTIONS + ASKING_OPTIONS)
def test_every_spelling_meets_the_pytest_table(spelling: str, option: str, project: Path) -> None:
    verdict = PermissionPolicy(RULES, project).evaluate(
        "execute_command", {"command": f"{spelling} {option}"}
    )
    assert verdict.action == "ask", (spelling, option, verdict)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_runs_the_tests_inside_the_project(spelling: str, project: Path) -> None:
    command = f"{spelling} tests -q -k smoke --basetemp=build/tmp"
    verdict = PermissionPolicy(RULES, project).evaluate("execute_command", {"command": command})
    assert verdict.action == "allow", (command, verdict)


@pytest.mark.parametrize(
    "command",
    [
        "python -m pytest --basetemp=/elsewhere",
        "python3 -m pytest --basetemp=/elsewhere",
        "uv run pytest --basetemp=/elsewhere",
        "python -m pytest -o addopts=x",
        "uv run pytest --override-ini=addopts=x",
    ],
)
def test_the_default_test_rules_no_longer_let_a_table_be_skipped(command: str, project: Path) -> None:
    verdict = default_verdict(project, command)
    assert verdict.action == "ask", (command, verdict)


def test_a_launcher_reaches_other_tables_too(project: Path) -> None:
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text("k\n")
    rules = PermissionRules(
        bash=(rule("*", "allow"),),
        read=(rule("**/*", "allow"), rule("**/secrets/**", "deny", 20)),
        edit=(rule("**/*", "allow"),),
    )
    policy = PermissionPolicy(rules, project)
    for command in (
        "uv run cat secrets/key.txt",
        "npx --yes head secrets/key.txt",
        "poetry run git diff --no-index a secrets/key.txt",
    ):
        verdict = policy.evaluate("execute_command", {"command": command})
        assert verdict.action == "deny", (command, verdict)


@pytest.mark.parametrize(
    "launcher", ["python -m pytest", "uv run pytest", "npx pytest", "python3 .venv/bin/pytest"]
)
def test_arguments_xargs_adds_reach_the_launched_program(launcher: str, project: Path) -> None:
    command = f"echo --basetemp=/elsewhere | xargs {launcher}"
    verdict = PermissionPolicy(RULES, project).evaluate("execute_command", {"command": command})
    assert verdict.action == "ask", (command, verdict)
