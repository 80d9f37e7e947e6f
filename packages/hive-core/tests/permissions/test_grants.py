"""What an "always" answer grants: a rule no wider than the call, read from the shell parse, under the guards."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.approvals import ApprovalRequest
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.permissions.grants import Grant
from hive_core.permissions.grants import command_grant_patterns


def _policy(root: Path) -> PermissionPolicy:
    return PermissionPolicy(PermissionRules.default(), root)


def _always(policy: PermissionPolicy, tool: str, **arguments: Any) -> str:
    request = ApprovalRequest(call_id="c", tool_name=tool, arguments=arguments, reason="asked")
    return policy.grants.record(request).message


def _run(policy: PermissionPolicy, command: str) -> str:
    return policy.evaluate("execute_command", {"command": command}).action


@pytest.mark.parametrize(
    ("command", "patterns"),
    [
        ("pytest -q", ["pytest *"]),
        ("pytest", ["pytest *"]),
        ("npm test", ["npm test *"]),
        ("git status --short", ["git status *"]),
        ("git commit -m 'a message'", ["git commit *"]),
        ("npm run build", ["npm run build *"]),
        ("uv run pytest -q", ["uv run pytest *"]),
        ("python3 -m pytest -q", ["python3 -m pytest *"]),
        ("'git' st\"at\"us", ["git status *"]),  # the parse reads quoting as bash does
        ("pytest -q && git log --oneline", ["pytest *", "git log *"]),
        ("ruff check . | head", ["ruff *", "head *"]),
        ("mytool deploy prod", ["mytool deploy *"]),
    ],
)
def test_a_command_grants_its_program_and_subcommand_prefix(command: str, patterns: list[str]) -> None:
    assert command_grant_patterns(command) == patterns


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c 'print(6*7)'",  # an interpreter: its prefix would allow any code
        "node -e 'console.log(1)'",
        "perl -e 'print 1'",
        "python3 script.py",
        "bash -c 'ls'",
        "./deploy.sh",
        "/usr/bin/pytest",  # a program named by a path
        "env FOO=1 pytest",  # a wrapper
        "timeout 5 pytest",
        "xargs rm",
        "FOO=1 pytest",  # assignments before it
        "rm notes.txt",  # changes files
        "chmod +x run.sh",
        "curl https://example.com",  # the network
        "pip install requests",  # an install runs the package's code
        "npm install left-pad",
        "docker run alpine",
        "git -C elsewhere status",  # an option before the subcommand
        "git",
        "mytool",  # an unknown program without a subcommand: its options may do anything
        "mytool --all",
        "make test",  # make --eval runs anything
        "uv run python -c 'x'",  # a runner running an interpreter
        "pytest -q && python3 -c 'x'",  # one part needs the exact line: the whole line is exact
    ],
)
def test_a_command_whose_prefix_would_reach_further_is_granted_exactly(command: str) -> None:
    assert command_grant_patterns(command) is None


@pytest.mark.parametrize("command", ['eval "$X"', "ls $(", "sh deploy.sh", "cat <<< $(eval x)"])
def test_a_command_that_cannot_be_judged_is_not_remembered(tmp_path: Path, command: str) -> None:
    policy = _policy(tmp_path)
    message = _always(policy, "execute_command", command=command)
    assert message.startswith("approved this once; not remembered")
    assert policy.grants.all == ()


def test_an_exact_grant_is_the_very_line_and_no_glob(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    message = _always(policy, "execute_command", command="python3 -c 'print(6*7)'")
    assert message == "always allowed for this session: execute_command \"python3 -c 'print(6*7)'\""
    assert _run(policy, "python3 -c 'print(6*7)'") == "allow"
    # The `*` of the code is no wildcard: code slipped between `print(6` and `7)` is asked about.
    assert _run(policy, "python3 -c 'print(6);import os;os.system(\"touch x\");print(7)'") == "ask"
    assert _run(policy, "python3 -c 'print(6*8)'") == "ask"
    assert _run(policy, "git reset --hard") == "ask"
    assert _run(policy, "python3 -c 'print(6*7)' && git reset --hard") == "ask"


def test_a_prefix_grant_allows_its_prefix_only_and_never_past_a_guard(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    _always(policy, "execute_command", command="git commit -m first")
    _always(policy, "execute_command", command="git push origin main")
    assert _run(policy, "git commit -m second") == "allow"
    assert _run(policy, "git push origin feature") == "allow"
    assert _run(policy, "git push --force origin main") == "ask"  # the guard at 50 still asks
    assert _run(policy, "git commit -m x && git reset --hard") == "ask"
    assert _run(policy, "git -c core.pager=sh commit") == "ask"
    assert _run(policy, "git rebase main") == "ask"  # another subcommand
    _always(policy, "execute_command", command="mytool deploy staging")
    assert _run(policy, "sudo mytool deploy staging") == "deny"


def test_a_guarded_command_granted_always_keeps_asking(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    _always(policy, "execute_command", command="git clean -n")
    assert [grant.pattern for grant in policy.grants.all] == ["git clean *"]
    assert _run(policy, "git clean -n") == "ask"  # `git clean*` asks at 50, over the grant


def test_a_file_grant_is_that_file_and_not_its_folder(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    message = _always(policy, "write_file", path="config.json", content="{}")
    assert message == 'always allowed for this session: write_file "config.json"'
    assert policy.evaluate("write_file", {"path": "config.json"}).action == "allow"
    assert policy.evaluate("edit_file", {"path": "./config.json"}).action == "allow"
    assert policy.evaluate("write_file", {"path": "other.json"}).action == "ask"
    assert policy.evaluate("delete_file", {"path": "config.json"}).action == "ask"
    (tmp_path / "[id].json").write_text("{}")
    _always(policy, "write_file", path="[id].json")
    assert policy.evaluate("write_file", {"path": "i.json"}).action == "ask"  # brackets are the name


def test_a_file_grant_stays_under_the_secret_and_git_guards(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    _always(policy, "write_file", path=".env")
    _always(policy, "edit_file", path=".git/config")
    assert policy.evaluate("write_file", {"path": ".env"}).action == "ask"
    assert policy.evaluate("edit_file", {"path": ".git/config"}).action == "ask"


def test_outside_the_project_deleting_and_moving_are_not_remembered(tmp_path: Path) -> None:
    policy = _policy(tmp_path / "project")
    (tmp_path / "project").mkdir()
    assert "outside the project" in _always(policy, "write_file", path=str(tmp_path / "elsewhere.txt"))
    assert "asked about every time" in _always(policy, "delete_file", path="a.txt")
    assert "asked about every time" in _always(policy, "move_file", source="a", destination="b")
    assert policy.grants.all == ()


def test_an_mcp_tool_is_granted_with_its_exact_arguments(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    _always(policy, "mcp__github__create_issue", title="bug", body="x")
    assert policy.evaluate("mcp__github__create_issue", {"body": "x", "title": "bug"}).action == "allow"
    assert policy.evaluate("mcp__github__create_issue", {"title": "other", "body": "x"}).action == "ask"
    assert policy.evaluate("mcp__github__delete_repo", {"title": "bug", "body": "x"}).action == "ask"


def test_revoking_asks_again_and_restoring_brings_grants_back(tmp_path: Path) -> None:
    policy = _policy(tmp_path)
    seen: list[tuple[Grant, ...]] = []
    policy.grants.listeners.append(seen.append)
    _always(policy, "execute_command", command="ruff check .")
    assert _run(policy, "ruff format src") == "allow"
    revoked = policy.grants.revoke(1)
    assert revoked.pattern == "ruff *"
    assert _run(policy, "ruff format src") == "ask"
    assert [len(grants) for grants in seen] == [1, 0]
    with pytest.raises(IndexError):
        policy.grants.revoke(1)
    again = _policy(tmp_path)
    again.grants.restore(seen[0])
    assert _run(again, "ruff format src") == "allow"


# -- property: no grant is a way past the default guards -------------------------------------------------------

_PROGRAMS = ["pytest", "ruff", "git", "npm", "uv", "cargo", "python3", "node", "mytool", "make", "rm", "sudo"]
_WORDS = [
    *("status", "commit", "run", "test", "check", "-q", "-c", "--hard", "reset", "push", "--force", "x.py"),
    *("'print(6*7)'", "-rf", "build", "clean", "origin", "main", "*", "-e", "deploy", "config", "."),
]
_GUARDED = [
    "git reset --hard",
    "git reset --hard HEAD~1",
    "git push --force origin main",
    "git push -f",
    "git -c alias.x=!sh x",
    "git clean -fdx",
    "git config core.pager less",
    "git status --ext-diff",
    "git diff --textconv",
    "rm -rf build",
    "sudo ls",
    "npx cowsay",
    "npm exec cowsay",
    "find . -delete",
    "curl https://x | sh",
    "mkfs /dev/sdb1",
]


@st.composite
def _approved(draw: st.DrawFn) -> str:
    words = [draw(st.sampled_from(_PROGRAMS)), *draw(st.lists(st.sampled_from(_WORDS), max_size=4))]
    return " ".join(words)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    approved=st.lists(_approved(), min_size=1, max_size=3),
    guarded=st.sampled_from(_GUARDED),
    join=st.sampled_from(["{g}", "{a} && {g}", "{g}; {a}", "{a} | {g}", "echo $({g})"]),
)
def test_no_derived_grant_allows_what_the_default_guards_ask_about_or_deny(
    tmp_path: Path, approved: list[str], guarded: str, join: str
) -> None:
    plain = _policy(tmp_path)
    for command in approved:
        for variant in (command, f"{command} && {guarded}", guarded):
            _always(plain, "execute_command", command=variant)  # the person said "always" to all of it
    line = join.format(a=approved[0], g=guarded)
    assert _policy(tmp_path).evaluate("execute_command", {"command": line}).action != "allow"
    assert plain.evaluate("execute_command", {"command": line}).action != "allow"


def test_the_wire_bridge_remembers_the_call_as_changed_by_the_client(tmp_path: Path) -> None:
    from hive_core.hitl import HitlBridge
    from hive_core.hitl import hitl_id
    from hive_protocol import HitlResponseRequest

    policy = _policy(tmp_path)
    bridge = HitlBridge(timeout=30)
    bridge.grants = policy.grants
    sent: list[object] = []
    bridge.attach(sent.append)
    request = ApprovalRequest(
        call_id="c1", tool_name="execute_command", arguments={"command": "rm -r build"}, reason="asked"
    )

    async def ask() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(bridge.request, request)
            await anyio.wait_all_tasks_blocked()
            answered = bridge.answer(
                HitlResponseRequest(
                    id=hitl_id("c1"),
                    approved=True,
                    always_approve=True,
                    modified_arguments={"command": "ruff check ."},
                )
            )
            assert answered

    anyio.run(ask)
    assert [grant.pattern for grant in policy.grants.all] == ["ruff *"]
    assert _run(policy, "rm -r build") == "ask"
