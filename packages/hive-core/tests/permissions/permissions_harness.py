"""Helpers for the permission tests: the policy factory's type and a short way to write a rule."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hive_core.approvals import PermissionAction
from hive_core.approvals import Verdict
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules

Build = Callable[..., PermissionPolicy]
"""The ``make_policy`` fixture: the default rules, or the rules (or rule fields) given."""


def rule(
    pattern: str, action: PermissionAction = "ask", priority: int = 0, reason: str | None = None
) -> PermissionRule:
    """One rule, written positionally."""
    return PermissionRule(pattern=pattern, action=action, priority=priority, reason=reason)


PERMISSIVE = PermissionRules(
    bash=(
        rule("*", "allow"),
        rule("rm -rf *", "deny", 100),
        rule("touch *", "deny", 100),
        rule("sudo *", "deny", 100),
    ),
    read=(rule("**/*", "allow"),),
    edit=(rule("**/*", "allow"),),
    external_directory=(rule("**", "allow"),),
    default_action="allow",
)
"""Everything allowed, except what the deny rules name: what a user who trusts the model but not ``rm -rf``
writes."""


def default_verdict(root: Path, command: str) -> Verdict:
    """How the default rules judge the shell ``command`` run in the project at ``root``."""
    return PermissionPolicy(PermissionRules.default(), root).evaluate("execute_command", {"command": command})
