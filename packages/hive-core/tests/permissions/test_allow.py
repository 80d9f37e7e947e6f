"""``--allow TOOL[:PATTERN]``: one allow rule per flag, in the tool's category, over the rules and under their
guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.permissions import PermissionConfigError
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.permissions import allow_rules
from hive_core.permissions import with_allowed


def test_each_flag_is_an_allow_rule_in_its_tools_category() -> None:
    rules = allow_rules(
        ["execute_command:pytest *", "write_file:docs/**", "read_file", "mcp__gh__list", "todo"]
    )
    reason = "allowed for this run (--allow)"
    assert rules.bash == (PermissionRule(pattern="pytest *", action="allow", reason=reason),)
    assert rules.edit == (PermissionRule(pattern="docs/**", action="allow", reason=reason),)
    assert rules.read == (PermissionRule(pattern="**/*", action="allow", reason=reason),)
    assert rules.mcp_tools == (PermissionRule(pattern="mcp__gh__list", action="allow", reason=reason),)
    assert rules.tools == (PermissionRule(pattern="todo", action="allow", reason=reason),)


@pytest.mark.parametrize(
    "flag", ["", ":x", "read_file:", "mcp__gh__list:repo", "todo:*", "edit_file:src**", "read_file:**.md"]
)
def test_malformed_flags_are_errors(flag: str) -> None:
    with pytest.raises(PermissionConfigError, match="--allow"):
        allow_rules([flag])


def test_allowed_calls_run_unasked_and_the_guards_still_hold(tmp_path: Path) -> None:
    rules = with_allowed(PermissionRules.default(), ["execute_command", "write_file:docs/**"])
    policy = PermissionPolicy(rules, tmp_path)
    assert policy.evaluate("execute_command", {"command": "make build"}).action == "allow"
    assert policy.evaluate("execute_command", {"command": "sudo make"}).action == "deny"
    assert policy.evaluate("execute_command", {"command": "git push --force"}).action == "ask"
    assert policy.evaluate("write_file", {"path": "docs/a.md", "content": ""}).action == "allow"
    assert policy.evaluate("write_file", {"path": "setup.cfg", "content": ""}).action == "ask"
    before = PermissionPolicy(PermissionRules.default(), tmp_path)
    assert before.evaluate("execute_command", {"command": "make build"}).action == "ask"
