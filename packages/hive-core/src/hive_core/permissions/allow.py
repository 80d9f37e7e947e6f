"""``--allow TOOL[:PATTERN]``: rules that pre-approve calls for one run, on top of the project's rules.

Each flag becomes one ``allow`` rule in the category the tool is judged by (see
:class:`~hive_core.permissions.PermissionPolicy`): ``execute_command:pytest *`` a ``bash`` rule, ``write_file:docs/**``
an ``edit`` rule, ``read_file`` a ``read`` rule for every path, ``fetch_page:http://127.0.0.1:*`` a ``web`` rule
(``fetch_page`` or ``explore_site`` alone: every URL, inward ones included), ``mcp__github__*`` an ``mcp_tools`` rule, any other
name a ``tools`` rule. They come first at priority 0, so they win over the rules of equal priority and never over
the guards above it: ``--allow execute_command`` still asks before ``git push --force`` and refuses ``sudo``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

import msgspec

from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import EXPLORE_SITE
from hive_core.tool_names import FETCH_PAGE
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE

from .glob import path_pattern_problem
from .loading import PermissionConfigError
from .loading import extend_rules
from .rules import PermissionRule
from .rules import PermissionRules
from .rules import RuleCategory

__all__ = ["allow_rules", "with_allowed"]

_BY_TOOL: Final[dict[str, tuple[RuleCategory, str]]] = {
    EXECUTE_COMMAND: ("bash", "*"),
    READ_FILE: ("read", "**/*"),
    WRITE_FILE: ("edit", "**/*"),
    EDIT_FILE: ("edit", "**/*"),
    DELETE_FILE: ("edit", "**/*"),
    MOVE_FILE: ("edit", "**/*"),
    FETCH_PAGE: ("web", "*"),
    EXPLORE_SITE: ("web", "*"),
}
"""The category a tool's calls are judged in, and the pattern a flag without one allows."""

_REASON: Final = "allowed for this run (--allow)"


def allow_rules(flags: Iterable[str]) -> PermissionRules:
    """The rules of ``--allow`` flags, as a section to put over the others.

    Raises :class:`PermissionConfigError` for a flag without a tool, or with a pattern a tool of its kind cannot
    take (``read_file:`` with nothing after it, a pattern on an MCP or other tool).
    """
    by_category: dict[RuleCategory, list[PermissionRule]] = {}
    for flag in flags:
        tool, colon, pattern = flag.strip().partition(":")
        tool, pattern = tool.strip(), pattern.strip()
        if not tool or (colon and not pattern):
            raise PermissionConfigError(
                f"--allow {flag!r} needs a tool name and, after a colon, a pattern (execute_command:'pytest *')",
                source="--allow",
            )
        known = _BY_TOOL.get(tool)
        if known is not None:
            category, everything = known
            rule_pattern = pattern or everything
            problem = path_pattern_problem(rule_pattern) if category not in ("bash", "web") else None
            if problem is not None:
                raise PermissionConfigError(f"--allow {flag!r}: {problem}", source="--allow")
        elif pattern:
            raise PermissionConfigError(
                f"--allow {flag!r}: only {', '.join(sorted(_BY_TOOL))} take a pattern; name the tool alone",
                source="--allow",
            )
        else:
            category, rule_pattern = ("mcp_tools" if tool.startswith("mcp__") else "tools"), tool
        by_category.setdefault(category, []).append(
            PermissionRule(pattern=rule_pattern, action="allow", reason=_REASON)
        )
    return msgspec.structs.replace(
        PermissionRules(), **{category: tuple(rules) for category, rules in by_category.items()}
    )


def with_allowed(rules: PermissionRules, flags: Iterable[str]) -> PermissionRules:
    """``rules`` with the ``--allow`` flags' rules put first (nothing else changes)."""
    added = allow_rules(flags)
    return extend_rules(rules, added, frozenset())
