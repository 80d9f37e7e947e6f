"""The permission engine: rules, the rules file, and the one policy that judges every tool call.

Rules come from ``.hive/permissions.yaml`` (or ``.yml``/``.json``), else the ``permissions`` section of the
configuration, else :meth:`PermissionRules.default`. :class:`PermissionPolicy` turns a tool call into a
:class:`~hive_core.approvals.Verdict` (allow, deny or ask, with a reason and a risk level); the approval gate acts
on it.
"""

from .allow import allow_rules, with_allowed
from .evaluate import MCP_TOOL_PREFIX, PermissionPolicy
from .glob import PatternKind, compile_glob, glob_matches
from .grants import Grant, Recorded, SessionGrants, derive_grants
from .loading import (
    RULES_FILE_NAMES,
    PermissionConfigError,
    extend_rules,
    load_permission_rules,
    loosening_settings,
    parse_permission_section,
)
from .paths import resolve_path
from .rules import RULE_CATEGORIES, PermissionRule, PermissionRules, RuleCategory
from .shell import ALWAYS_DENIED, always_denied, shell_risk_level
from .shell_syntax import (
    MAX_COMMAND_LENGTH,
    CommandLine,
    ShellRedirect,
    ShellWord,
    SimpleCommand,
    parse_command,
)

__all__ = [
    "ALWAYS_DENIED",
    "MAX_COMMAND_LENGTH",
    "MCP_TOOL_PREFIX",
    "RULES_FILE_NAMES",
    "RULE_CATEGORIES",
    "CommandLine",
    "Grant",
    "PatternKind",
    "PermissionConfigError",
    "PermissionPolicy",
    "PermissionRule",
    "PermissionRules",
    "Recorded",
    "RuleCategory",
    "SessionGrants",
    "ShellRedirect",
    "ShellWord",
    "SimpleCommand",
    "allow_rules",
    "always_denied",
    "compile_glob",
    "derive_grants",
    "extend_rules",
    "glob_matches",
    "load_permission_rules",
    "loosening_settings",
    "parse_command",
    "parse_permission_section",
    "resolve_path",
    "shell_risk_level",
    "with_allowed",
]
