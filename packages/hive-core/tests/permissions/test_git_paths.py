"""``git diff``/``log``/``show``/``blame`` print what their path operands hold: each operand that is a path is
judged as a read, a path outside the work tree (which git silently compares as ``--no-index``) is asked about, and
a pattern git matches itself is asked about.

Each refused command is first run with real git to show that it does print the secret.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from permissions_harness import default_verdict

from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules

SECRET = "DENIED-SECRET-91c2"
OUTSIDE = "OUTSIDE-SECRET-55d0"

git = shutil.which("git")
pytestmark = pytest.mark.skipif(git is None, reason="git is not installed")


def _git(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    assert git is not None
    command = [
        git,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.test",
        "-c",
        "core.pager=cat",
        *arguments,
    ]
    return subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=30, check=False)


@pytest.fixture
def repository(project: Path, outside: Path) -> Path:
    (project / "secrets").mkdir()
    (project / "secrets" / "key.txt").write_text(SECRET + "\n")
    (outside / "secret.txt").write_text(OUTSIDE + "\n")
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-q", "-m", "one")
    return project


REFUSED = [
    ("git diff /dev/null secrets/key.txt", SECRET),
    ("git diff --text /dev/null secrets/key.txt", SECRET),
    ("git diff /dev/null ../outside/secret.txt", OUTSIDE),
    ("git diff src/main.py ../outside/secret.txt", OUTSIDE),
    ("git log -p -- secrets/key.txt", SECRET),
    ("git log -p secrets/key.txt", SECRET),
    ("git log -p --follow -- secrets", SECRET),
    ("git show HEAD -- secrets/key.txt", SECRET),
    ("git show HEAD:secrets/key.txt", SECRET),
    ("git diff 4b825dc642cb6eb9a060e54bf8d69288fbee4904 HEAD -- secrets", SECRET),
    ("git blame secrets/key.txt", SECRET),
    ("git log -p -- '*key*'", SECRET),
    ("git log -p -- ':(icase)SECRETS/KEY.TXT'", SECRET),
    ("git log -p -- ':/secrets'", SECRET),
    ("git log -p '*key.txt'", SECRET),
    ("git log -L1,1:secrets/key.txt", SECRET),
    ("git log -L 1,1:secrets/key.txt", SECRET),
]


@pytest.mark.parametrize(("command", "secret"), REFUSED)
def test_git_prints_the_file_and_the_judge_does_not_allow_it(
    command: str, secret: str, repository: Path
) -> None:
    shown = _git(repository, *shlex.split(command)[1:])
    assert secret in shown.stdout, (command, shown)
    verdict = default_verdict(repository, command)
    assert verdict.action != "allow", (command, verdict)


def test_a_secret_operand_is_denied_and_an_outside_one_asked(repository: Path) -> None:
    policy = PermissionPolicy(PermissionRules.default(), repository)
    denied = policy.evaluate("execute_command", {"command": "git diff /dev/null secrets/key.txt"})
    assert denied.action == "deny"
    asked = policy.evaluate("execute_command", {"command": "git diff /dev/null ../outside/secret.txt"})
    assert asked.action == "ask"
    assert "outside" in asked.reason


@pytest.mark.parametrize(
    "command",
    [
        "git diff",
        "git diff /dev/null src/main.py",
        "git diff HEAD -- src/main.py",
        "git diff HEAD~0 --stat",
        "git log --oneline -5",
        "git log -p -- src",
        "git show HEAD --stat",
        "git blame -L 1,1 src/main.py",
        "git diff -- src/*.py",
        "git log -L1,1:src/main.py",
    ],
)
def test_reading_the_project_stays_allowed(command: str, repository: Path) -> None:
    verdict = default_verdict(repository, command)
    assert verdict.action == "allow", (command, verdict)
