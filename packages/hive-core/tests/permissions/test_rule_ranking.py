"""The winning bash rule is the matching one with the highest priority, the first listed among equals, however the
rules are matched (one combined pattern for all, since the judge matches several spellings of every command)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from permissions_harness import rule

from hive_core.approvals import PermissionAction
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.permissions import glob_matches

_PATTERNS = st.text(alphabet="ab *?", min_size=1, max_size=6).filter(lambda text: text.strip() != "")
_RULES = st.lists(
    st.tuples(_PATTERNS, st.sampled_from(["allow", "ask", "deny"]), st.integers(0, 3)),
    min_size=1,
    max_size=12,
)
_COMMANDS = st.lists(st.text(alphabet="ab", min_size=1, max_size=3), min_size=1, max_size=3).map(" ".join)


def _reference(rules: list[PermissionRule], command: str) -> PermissionRule | None:
    best: PermissionRule | None = None
    for candidate in rules:
        if (best is None or candidate.priority > best.priority) and glob_matches(
            candidate.pattern, command, "command"
        ):
            best = candidate
    return best


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=_RULES, command=_COMMANDS)
def test_the_winner_is_the_highest_priority_match_listed_first(
    specs: list[tuple[str, PermissionAction, int]], command: str, project: Path
) -> None:
    bash = [rule(pattern, action, priority) for pattern, action, priority in specs]
    policy = PermissionPolicy(PermissionRules(bash=tuple(bash), default_action="ask"), project)
    verdict = policy.evaluate("execute_command", {"command": command})
    expected = _reference(bash, command)
    if expected is None:
        assert verdict.reason.startswith("no bash rule matches"), verdict
    else:
        assert (verdict.action, f"'{expected.pattern}' ({expected.action})") == (
            expected.action,
            verdict.reason.split("bash rule ", 1)[1].split(" for ", 1)[0],
        )
