"""The permission engine: rules, the rules file, and the one policy that judges every tool call.

Rules come from ``.hive/permissions.yaml`` (or ``.yml``/``.json``), else the ``permissions`` section of the
configuration, else :meth:`PermissionRules.default`. :class:`PermissionPolicy` turns a tool call into a
:class:`~hive_core.approvals.Verdict` (allow, deny or ask, with a reason and a risk level); the approval gate acts
on it.
"""

from .allow import allow_rules
from .allow import with_allowed
from .evaluate import MCP_TOOL_PREFIX
from .evaluate import PermissionPolicy
from .glob import PatternKind
from .glob import compile_glob
from .glob import glob_matches
from .grants import Grant
from .grants import Recorded
from .grants import SessionGrants
from .grants import derive_grants
from .loading import RULES_FILE_NAMES
from .loading import PermissionConfigError
from .loading import extend_rules
from .loading import load_permission_rules
from .loading import loosening_settings
from .loading import parse_permission_section
from .loading import parse_tightening_rules
from .paths import resolve_path
from .rules import RULE_CATEGORIES
from .rules import PermissionRule
from .rules import PermissionRules
from .rules import RuleCategory
from .shell import ALWAYS_DENIED
from .shell import always_denied
from .shell import shell_risk_level
from .shell_syntax import MAX_COMMAND_LENGTH
from .shell_syntax import CommandLine
from .shell_syntax import ShellRedirect
from .shell_syntax import ShellWord
from .shell_syntax import SimpleCommand
from .shell_syntax import parse_command

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
    "parse_tightening_rules",
    "resolve_path",
    "shell_risk_level",
    "with_allowed",
]
