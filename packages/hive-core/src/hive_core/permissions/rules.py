"""The parsed rules: one list of rules per category, plus the policy-wide switches."""

from __future__ import annotations

import msgspec

from hive_core.approvals import PermissionAction
from hive_core.approvals import RuleCategory

__all__ = ["RULE_CATEGORIES", "PermissionRule", "PermissionRules", "RuleCategory"]


RULE_CATEGORIES: tuple[RuleCategory, ...] = (
    "read",
    "edit",
    "bash",
    "external_directory",
    "mcp_tools",
    "tools",
    "web",
)
"""Every :data:`RuleCategory`, in the order the rules file documents them."""


class PermissionRule(msgspec.Struct, frozen=True, kw_only=True):
    """One rule: when ``pattern`` matches the call's target, ``action`` applies."""

    pattern: str
    """A glob (see :func:`~hive_core.permissions.glob.compile_glob`) matched against the whole target."""
    action: PermissionAction = "ask"
    """What the rule decides when it is the winning match."""
    priority: int = 0
    """Among matching rules the highest priority wins; equal priorities go to the rule listed first."""
    reason: str | None = None
    """Why the rule exists, shown to the model and to the person approving."""


class PermissionRules(msgspec.Struct, frozen=True, kw_only=True):
    """A whole rule set, as read from the rules file, the config section, or the built-in defaults.

    A category left out of a section is empty here; loading adds a section to the defaults unless it says
    ``inherit: false`` (see :func:`~hive_core.permissions.load_permission_rules`).
    """

    read: tuple[PermissionRule, ...] = ()
    """Rules for reading a file inside the project, matched against its project-relative path."""
    edit: tuple[PermissionRule, ...] = ()
    """Rules for writing, editing, deleting or moving a file inside the project, by project-relative path."""
    bash: tuple[PermissionRule, ...] = ()
    """Rules for ``execute_command``, matched against the trimmed command line."""
    external_directory: tuple[PermissionRule, ...] = ()
    """Rules for any file path outside the project, matched against the absolute path."""
    mcp_tools: tuple[PermissionRule, ...] = ()
    """Rules for MCP tools (names starting ``mcp__``), matched against the tool name."""
    tools: tuple[PermissionRule, ...] = ()
    """Rules for every other tool, matched against the tool name."""
    web: tuple[PermissionRule, ...] = ()
    """Rules for the URLs the web tools reach (``fetch_page``, ``explore_site``, the pages ``deep_research``
    reads), matched against the whole URL with ``*`` spanning any characters (``http://127.0.0.1:*``); where none
    matches, a public http(s) address is allowed and anything else asked about
    (:mod:`hive_core.permissions.web`)."""
    read_only_tools: tuple[str, ...] = ()
    """Name patterns of tools counted as read-only although the tool is not marked so (an MCP tool without the
    hint, say): planning mode lets them run."""
    ask_before_delete: bool = True
    """Ask before deleting a file even where the edit rules allow it."""
    default_action: PermissionAction = "ask"
    """What happens when no rule of the call's category matches."""

    @classmethod
    def default(cls) -> PermissionRules:
        """The built-in rules used when neither a rules file nor a config section exists."""
        from .defaults import DEFAULT_RULES

        return DEFAULT_RULES

    def category(self, name: RuleCategory) -> tuple[PermissionRule, ...]:
        """The rule list of category ``name``."""
        rules: tuple[PermissionRule, ...] = getattr(self, name)
        return rules
