"""The built-in rule set."""

from __future__ import annotations

from hive_core.approvals import PermissionAction

from .rules import PermissionRule, PermissionRules

__all__ = ["DEFAULT_RULES"]

_SECRETS = "May contain secrets"
_CONFIG = "Configuration file"
_ENV_FILES = ("*.env", ".env*", "**/.env*")


def _rule(
    pattern: str, action: PermissionAction, priority: int = 0, reason: str | None = None
) -> PermissionRule:
    return PermissionRule(pattern=pattern, action=action, priority=priority, reason=reason)


DEFAULT_RULES = PermissionRules(
    read=(
        _rule("**/*", "allow"),
        *(_rule(pattern, "ask", 10, _SECRETS) for pattern in _ENV_FILES),
        _rule("**/secrets/**", "deny", 20, "Secrets directory"),
    ),
    edit=(
        _rule("src/**/*", "allow"),
        _rule("tests/**/*", "allow"),
        _rule("*.json", "ask", 5, _CONFIG),
        _rule("*.yaml", "ask", 5, _CONFIG),
        _rule("*.yml", "ask", 5, _CONFIG),
        # Not upstream: without these, `src/**/*` would let the agent overwrite `src/.env` or `src/secrets/`.
        *(_rule(pattern, "ask", 10, _SECRETS) for pattern in _ENV_FILES),
        _rule("**/secrets/**", "ask", 20, "Secrets directory"),
    ),
    bash=(
        _rule("git *", "allow"),
        _rule("dotnet *", "allow"),
        _rule("npm *", "allow"),
        _rule("cargo *", "allow"),
        _rule("rm -rf *", "deny", 100, "Recursive forced delete"),
        _rule("sudo *", "deny", 100, "Runs as the superuser"),
        _rule("curl * | *sh*", "deny", 100, "Pipes a download into a shell"),
    ),
    mcp_tools=(
        _rule("*_help", "allow"),
        _rule("*_get", "allow"),
        _rule("*_list", "allow"),
    ),
    tools=(
        # The listing tools (read_file has a category of its own), and the advisor and skill tools hosts add.
        *(
            _rule(name, "allow")
            for name in ("advisor", "glob_files", "grep_files", "list_directory", "load_skill")
        ),
        # Not upstream: the todo list is the agent's own scratch state under .hive/, not the user's files.
        _rule("manage_todo", "allow"),
    ),
    ask_before_delete=True,
    default_action="ask",
)
"""The rules of reference §C.6 (``PermissionConfig.CreateDefault``), with the additions marked above."""
