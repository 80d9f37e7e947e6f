""" "Always" answers: the rules a person grants for the rest of a session, each no wider than the call approved.

An always-answer to an asked call records :class:`Grant` s that :class:`~hive_core.permissions.PermissionPolicy`
consults beside its rules, so a grant never takes a guard's place:

- ``execute_command``: the command is read with the shell parser, and each simple command gives a prefix rule of
  its program and subcommand (``pytest *``, ``npm test *``, ``git status *``, ``uv run pytest *``). A command
  whose prefix would let through any code (interpreters with ``-c``/``-e`` or a script, shells, wrappers such as
  ``env`` or ``xargs``, a program named by a path), that changes or deletes files (``rm``, ``mv``, ``chmod``…),
  reaches the network (``curl``, ``ssh``…) or installs packages, sets variables, or has an option before its
  subcommand (``git -C dir status``) is remembered as the exact command line instead, for the whole line, and
  matched as that very text (a ``*`` in ``print(6*7)`` is no wildcard). A line the parser cannot fully read is not
  remembered: it is asked about every time anyway.
- a file edit (``write_file``/``edit_file``) or read: that file's project-relative path, exactly. Not its folder:
  ``src/**`` would cover files the person never saw, and a path is all the call showed. ``delete_file`` and
  ``move_file`` and paths outside the project are not remembered (deleting is asked each time by design).
- ``fetch_page`` / ``explore_site``: that very URL, as the call spelled it (not its site: other pages would be
  pages the person never saw). The tools' own check of every URL they request consults it too, so the next call
  for that URL runs, while its redirects elsewhere are judged as ever.
- any other tool: its name where its arguments do not choose what it does (the listing tools, ``manage_todo``…;
  their paths are still judged), otherwise the tool with exactly these arguments (MCP tools and the rest).

Grants rank at :data:`GRANT_PRIORITY` (paths at :data:`PATH_GRANT_PRIORITY`): over the plain allow/ask rules,
under every guard of the default rules (``git reset --hard``, ``push --force``, ``git -c`` at 50, ``rm -rf`` and
``sudo`` at 100, ``.env``, ``secrets`` and ``.git`` paths at 10-20), which still ask or refuse, and the always-deny
list is consulted before any rule.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Final

import msgspec
from wcmatch import glob as wc_glob

from hive_core import tool_names as named
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import Grant

from .rules import PermissionRule
from .rules import RuleCategory
from .shell_commands import SHELLS
from .shell_commands import analyse
from .shell_syntax import SimpleCommand
from .shell_syntax import parse_command

__all__ = [
    "GRANT_PRIORITY",
    "PATH_GRANT_PRIORITY",
    "Grant",
    "Recorded",
    "SessionGrants",
    "command_grant_patterns",
    "derive_grants",
    "grant_rules",
]

GRANT_PRIORITY: Final = 0
"""The priority of a command or tool grant: that of ``--allow`` rules, under every guard (50 and 100)."""
PATH_GRANT_PRIORITY: Final = 5
"""The priority of a file grant: over the "configuration file" asks (5, listed after), under the guards of secrets,
``.env`` files and ``.git`` (10-20)."""

_REASON: Final = "always allowed for this session"

# Words a prefix may be made of: a program or subcommand name, never a path, an option or a wildcard.
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+:@-]*")
_INTERPRETER = re.compile(
    r"(?:python|pypy|ipython)[0-9.]*|node(?:js)?|deno|bun|ruby|irb|perl[0-9.]*|php[0-9.]*|lua(?:jit)?[0-9.]*"
    r"|r|rscript|julia|[gmn]?awk|sed|gsed|osascript|pwsh|powershell|tclsh|wish|expect|java|jshell|groovy|scala"
    r"|kotlinc?|swift|ghci|runghc|runhaskell|elixir|iex|erl|escript|guile|racket|sbcl|clojure|clj|dotnet-script"
    r"|make|gmake|cmake|ninja|just|rake|sqlite3|psql|mysql",
    re.IGNORECASE,
)
"""Programs that run code given as an argument, a script file, or a build file the agent may write: their prefix
would allow any code, so they are remembered exactly (``make`` too: ``make --eval`` runs anything)."""
_EXACT_PROGRAMS: Final = frozenset(
    {
        *SHELLS,
        # Wrappers run the command they are given; what they run is the call, not their name.
        *("env", "timeout", "nice", "nohup", "xargs", "watch", "sudo", "doas", "su", "exec", "command"),
        *("builtin", "time", "strace", "ltrace", "gdb", "chroot", "unshare", "setsid", "stdbuf", "flock"),
        *("uvx", "npx", "pipx", "bunx"),
        # Programs that change or delete files, processes or permissions.
        *("rm", "rmdir", "mv", "cp", "ln", "chmod", "chown", "chgrp", "dd", "truncate", "shred", "kill"),
        *("pkill", "killall", "install", "tee", "touch", "mkdir", "tar", "unzip", "zip", "gzip", "gunzip"),
        *("patch", "crontab", "at", "rsync", "find", "mount", "umount", "systemctl", "service", "chattr"),
        # Programs that reach the network.
        *("curl", "wget", "ssh", "scp", "sftp", "ftp", "nc", "ncat", "netcat", "socat", "telnet"),
    }
)
"""Programs remembered as the exact command (with :data:`_INTERPRETER`)."""
_SUBCOMMAND_PROGRAMS: Final = frozenset(
    {
        *(
            "git",
            "npm",
            "pnpm",
            "yarn",
            "cargo",
            "go",
            "uv",
            "pip",
            "pip3",
            "poetry",
            "pipenv",
            "hatch",
            "pdm",
        ),
        *("rye", "docker", "podman", "kubectl", "helm", "terraform", "dotnet", "gh", "bundle", "gem", "mvn"),
        *("gradle", "brew", "apt", "apt-get", "conda", "mamba", "rustup", "tox", "nox", "pre-commit"),
        *("composer", "mix", "stack", "cabal", "bazel", "nix", "flutter", "dart", "cargo-nextest"),
    }
)
"""Programs whose first word chooses what they do: remembered as program and subcommand (``git status *``)."""
_RUNNERS: Final = frozenset(
    {
        *(
            ("npm", "run"),
            ("pnpm", "run"),
            ("yarn", "run"),
            ("uv", "run"),
            ("poetry", "run"),
            ("pipenv", "run"),
        ),
        *(("hatch", "run"), ("pdm", "run"), ("rye", "run"), ("bundle", "exec"), ("conda", "run")),
        ("mamba", "run"),
    }
)
"""Subcommands that run a script or program named by the next word, which belongs in the prefix too
(``npm run test *``, ``uv run pytest *``); what they run is judged like a program of its own."""
_EXACT_SUBCOMMANDS: Final = frozenset(
    {
        # Run any image, program or file.
        *(("docker", "run"), ("docker", "exec"), ("podman", "run"), ("podman", "exec"), ("kubectl", "exec")),
        *(
            ("go", "run"),
            ("npm", "exec"),
            ("pnpm", "exec"),
            ("pnpm", "dlx"),
            ("yarn", "exec"),
            ("yarn", "dlx"),
        ),
        *(("uv", "tool"), ("nix", "run"), ("nix", "shell"), ("git", "config"), ("gh", "api")),
        # Install a package, whose install scripts run.
        *(("pip", "install"), ("pip3", "install"), ("npm", "install"), ("npm", "i"), ("npm", "add")),
        *(("pnpm", "install"), ("pnpm", "add"), ("pnpm", "i"), ("yarn", "add"), ("yarn", "install")),
        *(("cargo", "install"), ("gem", "install"), ("uv", "add"), ("uv", "pip"), ("go", "install")),
        *(("brew", "install"), ("apt", "install"), ("apt-get", "install"), ("poetry", "add")),
        *(("conda", "install"), ("mamba", "install"), ("bundle", "add"), ("composer", "require")),
    }
)
"""Subcommands whose prefix would allow any code or package: remembered exactly."""
_MODULE_TOOLS: Final = frozenset({"pytest", "mypy", "ruff", "black", "isort", "flake8", "pylint", "unittest"})
"""Modules an interpreter may run by name (``python3 -m pytest``), remembered as that prefix."""
_NAME_ONLY_TOOLS: Final = frozenset(
    {
        named.LIST_DIRECTORY,
        named.GLOB_FILES,
        named.GREP_FILES,
        named.MANAGE_TODO,
        named.DELEGATE,
        "advisor",
        "load_skill",
    }
)
"""Tools whose grant is their name: their arguments either do not matter or are paths the policy still judges
one by one."""
_FILE_TOOLS: Final[Mapping[str, RuleCategory]] = {
    named.WRITE_FILE: "edit",
    named.EDIT_FILE: "edit",
    named.READ_FILE: "read",
}
_URL_TOOLS: Final[Mapping[str, str]] = {named.FETCH_PAGE: "url", named.EXPLORE_SITE: "base_url"}
"""The web tools judged by the URL they name, and the argument naming it."""


def grant_rules(grant: Grant) -> tuple[PermissionRule, ...]:
    """The glob rules ``grant`` stands for in its category (none for an exact grant, matched separately)."""
    if grant.exact:
        return ()
    if grant.category in ("read", "edit"):
        rule = PermissionRule(
            pattern=wc_glob.escape(grant.pattern),
            action="allow",
            priority=PATH_GRANT_PRIORITY,
            reason=_REASON,
        )
        return (rule,)
    patterns = [grant.pattern]
    if grant.category == "bash" and grant.pattern.endswith(" *"):
        patterns.append(grant.pattern[:-2])  # `pytest *` needs a space: the bare `pytest` too
    return tuple(
        PermissionRule(pattern=pattern, action="allow", priority=GRANT_PRIORITY, reason=_REASON)
        for pattern in patterns
    )


class Recorded(msgspec.Struct, frozen=True, kw_only=True):
    """What an always-answer recorded."""

    grants: tuple[Grant, ...]
    """The grants added (empty when nothing could be remembered)."""
    message: str
    """One line for the person: what is allowed from now on, or why it is asked again next time."""


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """``arguments`` as one canonical JSON text (sorted keys, no spaces), so equal arguments compare equal."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def command_grant_patterns(command: str) -> list[str] | None:
    """The prefix patterns (``pytest *``) an always-answer to ``command`` grants, or ``None`` when it must be the
    exact line (see the module's docstring). Raises ``ValueError`` when the line cannot be fully read."""
    line = parse_command(command)
    if line.problems:
        raise ValueError(line.problems[0])
    if not line.commands:
        return None
    patterns: list[str] = []
    for simple in line.commands:
        problems = analyse(simple).problems
        if problems:
            raise ValueError(problems[0])
        prefix = _prefix(simple)
        if prefix is None:
            return None
        patterns.append(f"{prefix} *")
    return list(dict.fromkeys(patterns))


def derive_grants(
    tool_name: str, arguments: Mapping[str, Any], relative: Callable[[str], str | None]
) -> tuple[Grant, ...] | str:
    """The grants an always-answer to a call of ``tool_name`` with ``arguments`` makes, or why there are none.

    ``relative`` places a path argument in the project (``None`` outside it).
    """
    if tool_name == named.EXECUTE_COMMAND:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return "the call names no command"
        command = command.strip()
        try:
            patterns = command_grant_patterns(command)
        except ValueError as error:
            return f"part of the command cannot be judged from its text ({error})"
        if patterns is None:
            return (Grant(tool=tool_name, category="bash", pattern=command, exact=True),)
        return tuple(Grant(tool=tool_name, category="bash", pattern=pattern) for pattern in patterns)
    if tool_name in _FILE_TOOLS:
        path = arguments.get("path")
        if not isinstance(path, str) or not path:
            return "the call names no file"
        place = relative(path)
        if place is None or place == ".":
            return "the file is outside the project"
        return (Grant(tool=tool_name, category=_FILE_TOOLS[tool_name], pattern=place),)
    if tool_name in (named.DELETE_FILE, named.MOVE_FILE):
        return "deleting or moving a file is asked about every time"
    if tool_name in _URL_TOOLS:
        url = arguments.get(_URL_TOOLS[tool_name])
        if not isinstance(url, str) or not url.strip():
            return "the call names no URL"
        return (Grant(tool=tool_name, category="web", pattern=url.strip(), exact=True),)
    category: RuleCategory = "mcp_tools" if tool_name.startswith("mcp__") else "tools"
    if tool_name in _NAME_ONLY_TOOLS and "*" not in tool_name and "?" not in tool_name:
        return (Grant(tool=tool_name, category=category, pattern=tool_name),)
    return (
        Grant(
            tool=tool_name,
            category=category,
            pattern=tool_name,
            exact=True,
            arguments=canonical_arguments(arguments),
        ),
    )


class SessionGrants:
    """The grants of one session, in the order they were made; what :class:`PermissionPolicy` consults.

    ``listeners`` are called with every grant after each change (to keep them with the session).
    """

    def __init__(self, relative: Callable[[str], str | None] = lambda _path: None) -> None:
        self._relative = relative
        self._grants: list[Grant] = []
        self.version = 0
        """Counts the changes, so a reader can tell that its copy of the rules is stale."""
        self.listeners: list[Callable[[tuple[Grant, ...]], object]] = []
        """Called with all grants after each change."""

    @property
    def all(self) -> tuple[Grant, ...]:
        """Every grant, oldest first."""
        return tuple(self._grants)

    def record(self, request: ApprovalRequest) -> Recorded:
        """Remember an always-answer to ``request``; returns what was added and the line to show."""
        derived = derive_grants(request.tool_name, request.arguments, self._relative)
        if isinstance(derived, str):
            return Recorded(grants=(), message=f"approved this once; not remembered: {derived}")
        added = self.add(derived)
        shown = ", ".join(grant.describe() for grant in derived)
        return Recorded(grants=added, message=f"always allowed for this session: {shown}")

    def add(self, grants: Sequence[Grant]) -> tuple[Grant, ...]:
        """Add ``grants`` (those not already there); returns the ones added."""
        added = tuple(grant for grant in dict.fromkeys(grants) if grant not in self._grants)
        if added:
            self._grants.extend(added)
            self._changed()
        return added

    def revoke(self, number: int) -> Grant:
        """Remove the grant numbered ``number`` (1 is the oldest) and return it; ``IndexError`` when none is."""
        if not 1 <= number <= len(self._grants):
            raise IndexError(number)
        grant = self._grants.pop(number - 1)
        self._changed()
        return grant

    def restore(self, grants: Iterable[Grant]) -> None:
        """Replace every grant by ``grants`` (a session's kept grants), without telling the listeners."""
        self._grants = list(dict.fromkeys(grants))
        self.version += 1

    def rules(self, category: RuleCategory) -> tuple[PermissionRule, ...]:
        """The glob rules of the category's grants."""
        return tuple(
            rule for grant in self._grants if grant.category == category for rule in grant_rules(grant)
        )

    def exact_command(self, command: str) -> bool:
        """Whether the command line ``command`` (stripped) was granted as it is."""
        return any(g.exact and g.category == "bash" and g.pattern == command for g in self._grants)

    def exact_url(self, url: str) -> bool:
        """Whether the URL ``url`` (stripped) was granted as it is, by either web tool."""
        url = url.strip()
        return any(g.exact and g.category == "web" and g.pattern == url for g in self._grants)

    def exact_call(self, tool_name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the tool was granted with exactly these arguments."""
        text = canonical_arguments(arguments)
        return any(
            g.exact and g.category not in ("bash", "web") and g.pattern == tool_name and g.arguments == text
            for g in self._grants
        )

    def _changed(self) -> None:
        self.version += 1
        grants = self.all
        for listener in list(self.listeners):
            listener(grants)


def _prefix(simple: SimpleCommand) -> str | None:
    """The program-and-subcommand prefix one simple command is remembered by, or ``None`` for the exact line."""
    words = simple.words
    if not words or simple.assignments or simple.foreign_arguments:
        return None
    # Only leading plain words may form a prefix.
    leading: list[str] = []
    for word in words:
        if not (word.literal and word.pattern is None and _PLAIN.fullmatch(word.value)):
            break
        leading.append(word.value)
    if not leading:
        return None
    program = leading[0]
    if program in _EXACT_PROGRAMS or program.lower() in _EXACT_PROGRAMS:
        return None
    invocation = analyse(simple)
    if invocation.nested or invocation.scripts or invocation.problems or invocation.denied:
        return None
    if _INTERPRETER.fullmatch(program):
        # `python3 -m pytest …`: the module names what runs, like a subcommand.
        rest = [word.value for word in words[1:]]
        if (
            len(rest) >= 2
            and rest[0] == "-m"
            and rest[1] in _MODULE_TOOLS
            and program.lower().startswith("python")
        ):
            return f"{program} -m {rest[1]}"
        return None
    if program in _SUBCOMMAND_PROGRAMS:
        return _subcommand_prefix(program, leading)
    if program in _PLAIN_TOOLS:
        return program
    # An unknown program: its first word may choose what it does, so it belongs in the prefix; without one, what
    # its options do is unknown, so the line is remembered exactly.
    if len(leading) >= 2:
        return f"{program} {leading[1]}"
    return None


def _subcommand_prefix(program: str, leading: list[str]) -> str | None:
    if len(leading) < 2 or leading[1].startswith("-"):
        return None  # bare, or an option before the subcommand (`git -C dir`, `npm --prefix x`)
    sub = leading[1]
    if (program, sub) in _EXACT_SUBCOMMANDS:
        return None
    if (program, sub) in _RUNNERS:
        if len(leading) < 3 or leading[2].startswith("-"):
            return None
        target = leading[2]
        if target in _EXACT_PROGRAMS or _INTERPRETER.fullmatch(target) or os.sep in target:
            return None
        return f"{program} {sub} {target}"
    return f"{program} {sub}"


_PLAIN_TOOLS: Final = frozenset(
    {
        *("pytest", "ruff", "mypy", "pyright", "basedpyright", "black", "isort", "flake8", "pylint", "tsc"),
        *("eslint", "prettier", "jest", "vitest", "mocha", "shellcheck", "hadolint", "rustfmt", "gofmt"),
        *("ls", "cat", "head", "tail", "wc", "grep", "rg", "echo", "pwd", "tree", "diff", "which", "file"),
        *("stat", "du", "df", "date", "whoami", "uname", "true", "false", "sort", "uniq", "cut", "tr", "jq"),
        *("cd", "basename", "dirname", "realpath", "test"),
    }
)
"""Programs whose arguments are options and files only (which the policy still judges): their name is the prefix."""
