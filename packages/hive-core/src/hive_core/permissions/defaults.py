"""The built-in rule set."""

from __future__ import annotations

from hive_core.approvals import PermissionAction
from hive_core.tool_names import DEEP_RESEARCH
from hive_core.tool_names import DELEGATE
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import MANAGE_TODO
from hive_core.tool_names import WEB_SEARCH

from .rules import PermissionRule
from .rules import PermissionRules

__all__ = ["DEFAULT_RULES"]

_SECRETS = "May contain secrets"
_CONFIG = "Configuration file"
_ENV_FILES = ("*.env", ".env*", "**/.env*")
_TESTS = "Runs the project's tests, which run the project's own code"
_GIT_FILES = "Git's own files (its configuration can make git run any program)"

# git subcommands that only read the repository. No global option may come before them: `git -c`, `--exec-path`,
# `--config-env` and friends can make any git command run a program.
_GIT_READERS = ("status", "diff", "log", "show", "rev-parse", "ls-files", "blame")
# `git branch` only as a listing: with a name or -d/-m/-c/-f it changes branches.
_GIT_BRANCH_LISTINGS = ("", " -a", " -r", " -v", " -vv", " -av", " -l", " --list", " --all", " --remotes")

_READ_ONLY_COMMANDS = (
    *(
        f"git{pager} {sub}{rest}"
        for pager in ("", " --no-pager")
        for sub in _GIT_READERS
        for rest in ("", " *")
    ),
    *(f"git{pager} branch{form}" for pager in ("", " --no-pager") for form in _GIT_BRANCH_LISTINGS),
    "git branch --show-current",
    "git --version",
    *("ls", "ls *", "tree", "tree *", "pwd", "echo", "echo *", "true", "cd *"),
    # Filters read their input when given no file, so they are allowed bare too.
    *(form for name in ("cat", "head", "tail", "wc", "sort", "uniq") for form in (name, f"{name} *")),
    *(f"{name} *" for name in ("rg", "grep", "find", "which", "file", "stat", "diff", "basename", "dirname")),
    "realpath *",
)
"""Read-only commands. Their file arguments (and redirections) are still judged by the read and edit rules, and
a command they wrap (``find -exec``) by the bash rules."""

_TEST_COMMANDS = tuple(
    pattern
    for command in (
        "pytest",
        "python -m pytest",
        "python3 -m pytest",
        "uv run pytest",
        "npm test",
        "npm run test",
        "cargo test",
        "go test",
        "dotnet test",
    )
    for pattern in (command, f"{command} *")
)

_NEVER_ALLOWED = (
    ("git -c *", "Sets git configuration for one command, which can make it run any program"),
    ("git *--config-env*", "Sets git configuration from a variable, which can make it run any program"),
    ("git *--exec-path*", "Chooses where git finds its programs"),
    ("git * --ext-diff*", "Runs an external diff program"),
    ("git * --textconv*", "Runs text conversion programs"),
    ("git config*", "Changes git configuration, which can make git run any program"),
    ("git clean*", "Deletes untracked files"),
    ("git reset *--hard*", "Discards uncommitted changes"),
    ("git push *--force*", "Overwrites the remote branch"),
    ("git push *-f*", "Overwrites the remote branch"),
    ("git grep *", "git grep -O runs a program"),
    ("npm exec*", "Runs a package's program"),
    ("npx *", "Runs a package's program"),
    ("find *-exec*", "Runs a command on every file found"),
    ("find *-ok*", "Runs a command on every file found"),
    ("find *-delete*", "Deletes the files found"),
    ("find *-fprint*", "Writes a file"),
    ("find *-fls*", "Writes a file"),
)
"""Commands no default rule allows, asked about with a reason. They rank above the allow rules, so ``git diff
--ext-diff`` or ``find . -delete`` is asked about although ``git diff *`` and ``find *`` are allowed."""


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
        # Not upstream: a repository's configuration can make git run any program, and `src/.git` would be one.
        _rule("**/.git", "ask", 20, _GIT_FILES),
        _rule("**/.git/**", "ask", 20, _GIT_FILES),
    ),
    bash=(
        *(_rule(pattern, "allow") for pattern in _READ_ONLY_COMMANDS),
        *(_rule(pattern, "allow", 0, _TESTS) for pattern in _TEST_COMMANDS),
        *(_rule(pattern, "ask", 50, reason) for pattern, reason in _NEVER_ALLOWED),
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
        *(_rule(name, "allow") for name in ("advisor", GLOB_FILES, GREP_FILES, LIST_DIRECTORY, "load_skill")),
        # Not upstream: the todo list is the agent's own scratch state under .hive/, not the user's files.
        _rule(MANAGE_TODO, "allow"),
        # Searching goes to the search service the user configured; the pages these tools read are judged one by
        # one by the web rules.
        _rule(WEB_SEARCH, "allow"),
        _rule(DEEP_RESEARCH, "allow"),
        # Not upstream: a subagent's own calls are judged by these very rules, and asked about in the agent's name.
        _rule(DELEGATE, "allow"),
    ),
    ask_before_delete=True,
    default_action="ask",
)
"""The rules of reference §C.6 (``PermissionConfig.CreateDefault``), with the additions marked above and safe bash
rules in place of its ``git *``, ``npm *``, ``cargo *`` and ``dotnet *`` allows (which let a model run any program:
``git -c alias.x='!cmd' x``, ``npm exec``). Every other command falls to the default action, ask."""
