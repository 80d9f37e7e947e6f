"""Every built-in default rule, shown winning on a target of its own."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from permissions_harness import Build

from hive_core.permissions import RULE_CATEGORIES
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules

# (tool, arguments, expected action, the pattern that must be named in the reason)
DEFAULT_CASES: list[tuple[str, dict[str, Any], str, str]] = [
    # read
    ("read_file", {"path": "src/main.py"}, "allow", "**/*"),
    ("read_file", {"path": "README.md"}, "allow", "**/*"),
    ("read_file", {"path": "prod.env"}, "ask", "*.env"),
    ("read_file", {"path": ".env.local"}, "ask", ".env*"),
    ("read_file", {"path": "app/config/.env"}, "ask", "**/.env*"),
    ("read_file", {"path": "secrets/api.key"}, "deny", "**/secrets/**"),
    ("read_file", {"path": "deploy/secrets/.env"}, "deny", "**/secrets/**"),  # priority 20 beats 10
    # edit
    ("write_file", {"path": "src/pkg/mod.py", "content": ""}, "allow", "src/**/*"),
    ("edit_file", {"path": "tests/test_a.py", "old_text": "a", "new_text": "b"}, "allow", "tests/**/*"),
    ("write_file", {"path": "package.json", "content": ""}, "ask", "*.json"),
    ("write_file", {"path": "config.yaml", "content": ""}, "ask", "*.yaml"),
    ("write_file", {"path": "ci.yml", "content": ""}, "ask", "*.yml"),
    ("write_file", {"path": "local.env", "content": ""}, "ask", "*.env"),
    ("write_file", {"path": ".env.production", "content": ""}, "ask", ".env*"),
    ("write_file", {"path": "src/.env", "content": ""}, "ask", "**/.env*"),  # beats src/**/* (p10 > p0)
    ("write_file", {"path": "src/secrets/k.pem", "content": ""}, "ask", "**/secrets/**"),
    ("write_file", {"path": "src/.git", "content": "gitdir: ../repo"}, "ask", "**/.git"),  # beats src/**/*
    ("write_file", {"path": "tests/fixture/.git/config", "content": ""}, "ask", "**/.git/**"),
    # bash: the deny rules (the allow and ask rules are in BASH_ALLOW_CASES and BASH_ASK_CASES)
    ("execute_command", {"command": "rm -rf build"}, "deny", "rm -rf *"),
    ("execute_command", {"command": "sudo apt-get install jq"}, "deny", "sudo *"),
    # A shell at the end of the pipe is refused before any rule; the rule still catches the download's name.
    ("execute_command", {"command": "curl -s https://get.example | tee install.sh"}, "deny", "curl * | *sh*"),
    # mcp_tools
    ("mcp__docs__search_help", {}, "allow", "*_help"),
    ("mcp__github__issue_get", {}, "allow", "*_get"),
    ("mcp__github__issue_list", {}, "allow", "*_list"),
    # tools
    ("advisor", {}, "allow", "advisor"),
    ("load_skill", {"name": "pdf"}, "allow", "load_skill"),
    ("manage_todo", {"action": "list"}, "allow", "manage_todo"),
    ("web_search", {"query": "bees"}, "allow", "web_search"),
    ("deep_research", {"query": "bees"}, "allow", "deep_research"),
    ("delegate", {"agent": "reviewer", "task": "review it"}, "allow", "delegate"),
]


def _sample(pattern: str) -> str:
    """A command the allow rule ``pattern`` matches, with a harmless argument for its ``*``."""
    return pattern.replace(" *", " src") if pattern.endswith(" *") else pattern


BASH_ALLOW_CASES = [
    (_sample(rule.pattern), rule.pattern) for rule in PermissionRules.default().bash if rule.action == "allow"
]

# Commands no default rule allows, with the ask rule whose reason they get.
BASH_ASK_CASES = [
    ("git -c alias.x=!true x", "git -c *"),
    ("git --config-env=core.pager=PAGER log", "git *--config-env*"),
    ("git --exec-path=/tmp status", "git *--exec-path*"),
    ("git diff --ext-diff", "git * --ext-diff*"),
    ("git log -p --textconv", "git * --textconv*"),
    ("git config user.name x", "git config*"),
    ("git clean -fdx", "git clean*"),
    ("git reset --hard HEAD", "git reset *--hard*"),
    ("git push --force origin main", "git push *--force*"),
    ("git push -f origin", "git push *-f*"),
    ("git grep -O'true' x", "git grep *"),
    ("npm exec -- node -e 1", "npm exec*"),
    ("npx cowsay", "npx *"),
    ("find . -exec true {} \\;", "find *-exec*"),
    ("find . -okdir true {} \\;", "find *-ok*"),
    ("find . -delete", "find *-delete*"),
    ("find . -fprint out.txt", "find *-fprint*"),
    ("find . -fls out.txt", "find *-fls*"),
]


@pytest.mark.parametrize(("command", "pattern"), BASH_ALLOW_CASES)
def test_default_bash_allow_rule(make_policy: Build, command: str, pattern: str) -> None:
    verdict = make_policy().evaluate("execute_command", {"command": command})
    assert verdict.action == "allow", verdict.reason
    assert f"'{pattern}'" in verdict.reason


@pytest.mark.parametrize(("command", "pattern"), BASH_ASK_CASES)
def test_default_bash_ask_rule(make_policy: Build, command: str, pattern: str) -> None:
    verdict = make_policy().evaluate("execute_command", {"command": command})
    assert verdict.action == "ask"
    assert f"'{pattern}'" in verdict.reason


@pytest.mark.parametrize(("tool", "arguments", "action", "pattern"), DEFAULT_CASES)
def test_default_rule(
    make_policy: Build, tool: str, arguments: dict[str, Any], action: str, pattern: str
) -> None:
    verdict = make_policy().evaluate(tool, arguments)
    assert verdict.action == action
    assert f"'{pattern}'" in verdict.reason


LISTING_TOOLS = ["glob_files", "grep_files", "list_directory"]


@pytest.mark.parametrize("tool", LISTING_TOOLS)
def test_default_tools_rule_lets_listing_tools_run(make_policy: Build, tool: str) -> None:
    # With no read rule covering the directory, the tools rule alone decides.
    policy = make_policy(msgspec.structs.replace(PermissionRules.default(), read=()))
    verdict = policy.evaluate(tool, {"pattern": "*.py"})
    assert verdict.action == "allow"
    assert f"'{tool}'" in verdict.reason


def test_every_default_rule_is_exercised() -> None:
    defaults = PermissionRules.default()
    tested = {pattern for _, _, _, pattern in DEFAULT_CASES} | set(LISTING_TOOLS)
    tested |= {pattern for _, pattern in BASH_ALLOW_CASES + BASH_ASK_CASES}
    for category in RULE_CATEGORIES:
        for rule in defaults.category(category):
            assert rule.pattern in tested, f"default {category} rule {rule.pattern!r} has no test case"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("write_file", {"path": "README.md", "content": ""}),  # edits outside src/ and tests/ are asked about
        ("execute_command", {"command": "make"}),
        ("mcp__github__issue_create", {}),
        ("some_new_tool", {}),
    ],
)
def test_unmatched_calls_fall_to_the_default_ask(
    make_policy: Build, tool: str, arguments: dict[str, Any]
) -> None:
    verdict = make_policy().evaluate(tool, arguments)
    assert verdict.action == "ask"
    assert verdict.level == "medium"
    assert "default action" in verdict.reason


def test_default_switches() -> None:
    defaults = PermissionRules.default()
    assert defaults.default_action == "ask"
    assert defaults.ask_before_delete is True
    assert defaults.external_directory == ()
    assert defaults.read_only_tools == ()
    assert PermissionRules() == PermissionRules(default_action="ask", ask_before_delete=True)


def test_secrets_and_env_defaults_priorities() -> None:
    read = {rule.pattern: rule for rule in PermissionRules.default().read}
    assert read["**/secrets/**"] == PermissionRule(
        pattern="**/secrets/**", action="deny", priority=20, reason="Secrets directory"
    )
    for pattern in ("*.env", ".env*", "**/.env*"):
        assert read[pattern].action == "ask"
        assert read[pattern].priority == 10
        assert read[pattern].reason == "May contain secrets"


def test_deny_rule_level_is_critical_and_ask_is_medium(make_policy: Build) -> None:
    policy = make_policy()
    assert policy.evaluate("read_file", {"path": "secrets/x"}).level == "critical"
    assert policy.evaluate("read_file", {"path": ".env"}).level == "medium"
    assert policy.evaluate("read_file", {"path": "src/main.py"}).level is None
