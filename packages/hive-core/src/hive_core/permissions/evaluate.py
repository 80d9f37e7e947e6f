"""The tool-call policy: one evaluator that judges every call by its category's rules."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import Literal

from hive_core.approvals import Verdict
from hive_core.approvals import strictest
from hive_core.tool_names import DELETE_FILE
from hive_core.tool_names import EDIT_FILE
from hive_core.tool_names import EXECUTE_COMMAND
from hive_core.tool_names import EXPLORE_SITE
from hive_core.tool_names import FETCH_PAGE
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tool_names import LIST_DIRECTORY
from hive_core.tool_names import MOVE_FILE
from hive_core.tool_names import READ_FILE
from hive_core.tool_names import WRITE_FILE
from hive_protocol import RiskLevel

from .credentials import CredentialStores
from .glob import PatternKind
from .glob import command_pattern
from .glob import compile_glob
from .glob import expand_braces
from .glob import glob_matches
from .grants import GRANT_PRIORITY
from .grants import SessionGrants
from .paths import Location
from .paths import glob_base
from .paths import locate
from .paths import place_resolved
from .rules import PermissionRule
from .rules import PermissionRules
from .rules import RuleCategory
from .shell_judging import ShellRules
from .shell_judging import judge_command
from .web import WebRules
from .web import resolve_host
from .web import split_url

__all__ = ["MCP_TOOL_PREFIX", "PermissionPolicy"]

MCP_TOOL_PREFIX = "mcp__"
"""Names starting with this are MCP tools (``mcp__<plugin>__<tool>``), judged by the ``mcp_tools`` rules."""

# Which argument of a listing tool holds a glob that may reach beyond its base directory.
_LISTING_GLOB_ARGUMENT: Mapping[str, str | None] = {
    LIST_DIRECTORY: None,
    GLOB_FILES: "pattern",
    GREP_FILES: "file_pattern",
}


class _BadArgument(Exception):
    """An argument the policy needs is there but is not text."""


class PermissionPolicy:
    """Judges tool calls against a rule set for one working directory.

    Each tool has one category: ``read_file`` → ``read``; ``write_file``/``edit_file``/``delete_file``/
    ``move_file`` → ``edit``; ``execute_command`` → the always-deny list, then ``bash``; ``list_directory``/
    ``glob_files``/``grep_files`` → ``tools`` by name, then ``read`` on the directory; ``mcp__*`` → ``mcp_tools``;
    ``fetch_page``/``explore_site`` → ``web`` on the URL, after its host is resolved (:mod:`.web`); any other
    tool → ``tools``. A path outside the project, after ``.``/``..`` and symbolic links are resolved,
    is judged by ``external_directory`` alone. A credential store (``~/.ssh``, ``~/.aws``…) or the hive home is
    denied by its absolute path, whatever the project and the rules (:class:`CredentialStores`).
    """

    def __init__(
        self, rules: PermissionRules, working_dir: Path, *, credentials: CredentialStores | None = None
    ) -> None:
        self._rules = rules
        self._credentials = credentials if credentials is not None else CredentialStores.of()
        self._given_dir = os.path.abspath(working_dir)
        self._root = os.path.realpath(working_dir)
        self.grants = SessionGrants(self._project_path)
        """What "always" answers granted in this session, consulted beside the rules (never over a guard)."""
        self._with_grants: dict[RuleCategory, tuple[int, tuple[PermissionRule, ...]]] = {}
        self._path_verdicts: dict[tuple[RuleCategory, tuple[str, ...], int], Verdict] = {}
        self._handlers: dict[str, Callable[[Mapping[str, Any]], Verdict]] = {
            READ_FILE: self._read_file,
            WRITE_FILE: self._write_file,
            EDIT_FILE: self._write_file,
            DELETE_FILE: self._delete_file,
            MOVE_FILE: self._move_file,
            EXECUTE_COMMAND: self._execute_command,
            FETCH_PAGE: lambda arguments: self._web(arguments, "url"),
            EXPLORE_SITE: lambda arguments: self._web(arguments, "base_url"),
        }
        self._web_rules = WebRules(rules.web, rules.default_action)
        self._shell_rules = ShellRules(self._bash_rule, self._bash_default, self.judge_path, self._given_dir)
        self._granted_line = ShellRules(
            self._granted_rule, self._granted_default, self.judge_path, self._given_dir
        )

    @property
    def rules(self) -> PermissionRules:
        """The rule set this policy applies."""
        return self._rules

    @property
    def working_dir(self) -> Path:
        """The project root, with symbolic links resolved: the boundary between inside and outside."""
        return Path(self._root)

    def is_read_only(self, tool_name: str) -> bool:
        """Whether the rules' ``read_only_tools`` patterns name ``tool_name``, so planning mode lets it run even
        though its tool is not marked read-only."""
        return any(glob_matches(pattern, tool_name, "name") for pattern in self._rules.read_only_tools)

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        """Judge one call of ``tool_name`` with ``arguments``."""
        try:
            handler = self._handlers.get(tool_name)
            if handler is not None:
                return handler(arguments)
            if tool_name in _LISTING_GLOB_ARGUMENT:
                return self._listing(tool_name, arguments)
            category: RuleCategory = "mcp_tools" if tool_name.startswith(MCP_TOOL_PREFIX) else "tools"
            if self.grants.exact_call(tool_name, arguments):
                return self._granted(category, tool_name, "name")
            return self._decide(category, [tool_name], "name")
        except _BadArgument as error:
            return Verdict.deny(str(error), level=None)

    def judge_path(self, category: Literal["read", "edit"], path: str) -> Verdict:
        """Judge reading (``read``) or changing (``edit``) the file at ``path``.

        Inside the project the category's rules see the project-relative path; outside it only the
        ``external_directory`` rules apply. An existing directory is matched bare and with a trailing ``/``, so
        ``**/secrets/**`` covers ``secrets`` itself. The search and listing tools judge every entry they reach
        with this (:class:`~hive_core.approvals.PathJudge`).
        """
        try:
            location = self._locate(path)
        except _BadArgument as error:
            return Verdict.deny(str(error), level=None)
        return self._judge_located(category, path, location)

    def judge_resolved(self, category: Literal["read", "edit"], resolved: str) -> Verdict:
        """Judge ``resolved``, an absolute path with no ``.``, ``..`` or link left in it (the kernel's path of a file
        a tool opened), as :meth:`judge_path` judges a path leading there, without looking it up by name again: the
        file tools judge the object they hold with this."""
        if "\0" in resolved or not os.path.isabs(resolved):
            return Verdict.deny(
                f"the path {resolved!r} cannot be judged: it is not an absolute path", level=None
            )
        return self._judge_located(category, resolved, place_resolved(self._root, resolved))

    def _judge_located(self, category: Literal["read", "edit"], path: str, location: Location) -> Verdict:
        """Judge ``path``, placed at ``location``: a credential store first, then outside or inside the project."""
        credential = self._credential_store(path, location)
        if credential is not None:
            return credential
        if location.relative is None:
            return self._external(location)
        return self._decide(category, _spellings(location.relative, location.resolved), "path")

    def judge_relative(self, category: Literal["read", "edit"], relative: str, *, directory: bool) -> Verdict:
        """Judge the project-relative path ``relative`` (``/``-separated, links already resolved) as
        :meth:`judge_path` judges the path it places there: for a caller that walked the project itself and knows
        whether the entry is a ``directory``, so that nothing is placed or looked up again."""
        return self._decide(category, _spellings(relative, directory=directory), "path")

    # -- file tools ---------------------------------------------------------------------------------------------

    def _read_file(self, arguments: Mapping[str, Any]) -> Verdict:
        path = _text(arguments, "path")
        if path is None:
            return Verdict.allow("read_file names no file, so there is nothing to protect")
        return _hard_linked(self.judge_path("read", path), self._given_dir, path)

    def _write_file(self, arguments: Mapping[str, Any]) -> Verdict:
        path = _text(arguments, "path")
        return _hard_linked(self._write_target(path), self._given_dir, path)

    def _delete_file(self, arguments: Mapping[str, Any]) -> Verdict:
        return self._delete_target(_text(arguments, "path"))

    def _move_file(self, arguments: Mapping[str, Any]) -> Verdict:
        source = self._delete_target(_text(arguments, "source"))
        destination = self._write_target(_text(arguments, "destination"))
        return strictest([source, destination])

    def _write_target(self, path: str | None) -> Verdict:
        if path is None:
            return Verdict.ask("the call names no file to write", level="medium")
        return self.judge_path("edit", path)

    def _delete_target(self, path: str | None) -> Verdict:
        if path is None:
            return Verdict.ask("the call names no file to delete", level="high")
        verdict = self.judge_path("edit", path)
        if verdict.action == "allow" and self._rules.ask_before_delete:
            return Verdict.ask(f"Allow deleting this file? ({path})", level="medium")
        return verdict

    def _listing(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        verdict = self._decide("tools", [tool_name], "name")
        if verdict.action != "allow":
            return verdict
        base = _text(arguments, "path") or "."
        targets = [base]
        glob_argument = _LISTING_GLOB_ARGUMENT[tool_name]
        pattern = _text(arguments, glob_argument) if glob_argument else None
        if pattern:
            try:
                variants = expand_braces(pattern)
            except ValueError as error:
                raise _BadArgument(f"the pattern {pattern!r} cannot be judged: {error}") from error
            # Every brace variant has a base of its own: `{..,x}/outside/*` reaches `../outside` as well as `x`.
            for variant in variants:
                prefix = glob_base(variant)
                if prefix is None:
                    return Verdict.ask(
                        f"the pattern {pattern!r} climbs out with '..' after a wildcard, so where it reaches "
                        "cannot be judged from the text"
                    )
                if prefix:
                    targets.append(os.path.join(base, prefix))
        return strictest(self._directory(target, verdict) for target in dict.fromkeys(targets))

    def _directory(self, path: str, fallback: Verdict) -> Verdict:
        location = self._locate(path)
        credential = self._credential_store(path, location)
        if credential is not None:
            return credential
        if location.relative is None:
            return self._external(location)
        # A directory is matched both bare and with a trailing '/', so `**/secrets/**` covers `secrets` itself.
        rule = _winner(self._category("read"), _spellings(location.relative, directory=True), "path")
        return fallback if rule is None else _from_rule("read", rule, location.relative)

    def _credential_store(self, path: str, location: Location) -> Verdict | None:
        """A deny for a path in a credential store or the hive home, by where it is written and where it leads."""
        store = self._credentials.holding(location.resolved, location.spelled)
        if store is None:
            return None
        return Verdict.deny(
            f"{path!r} is in {store}, which holds credentials: hive's tools never read or change it; "
            "copy what the task needs into the project yourself"
        )

    def _locate(self, path: str) -> Location:
        try:
            return locate(self._root, self._given_dir, path)
        except ValueError as error:
            raise _BadArgument(f"the path {path!r} cannot be judged: {error}") from error

    def _external(self, location: Location) -> Verdict:
        # The rules see where the path really leads and how it was written; the stricter reading wins, so a link
        # can neither carry a path into an allowed directory nor out of a denied one.
        spellings = dict.fromkeys([location.resolved, location.spelled])
        return strictest(
            self._decide("external_directory", _spellings(spelling, location.resolved), "path")
            for spelling in spellings
        )

    # -- web ----------------------------------------------------------------------------------------------------

    def judge_url(self, url: str, addresses: Sequence[str]) -> Verdict:
        """Judge requesting ``url``, whose host resolved to ``addresses`` (empty: it did not resolve), by the
        ``web`` rules (:class:`~hive_core.permissions.web.WebRules`): the web tools judge every URL they reach,
        redirects included, with this (:class:`~hive_core.permissions.web.UrlJudge`)."""
        verdict = self._web_rules.judge_url(url, addresses)
        if verdict.action == "ask" and self.grants.exact_url(url):
            return Verdict.allow(f'{url!r} was allowed for this session by an "always" answer')
        return verdict

    def _web(self, arguments: Mapping[str, Any], name: str) -> Verdict:
        url = _text(arguments, name)
        if url is None:
            return Verdict.deny(f"the call names no URL ({name!r})", level=None)
        split = split_url(url)
        addresses = resolve_host(split[1], split[2]) if split is not None else []
        return self.judge_url(url, addresses)

    # -- shell --------------------------------------------------------------------------------------------------

    def _execute_command(self, arguments: Mapping[str, Any]) -> Verdict:
        command = (_text(arguments, "command") or "").strip()
        if not command:
            return Verdict.deny("the command is empty", level=None)
        if self.grants.exact_command(command):
            return judge_command(command, self._granted_line)
        return judge_command(command, self._shell_rules)

    def _bash_rule(self, command: str, level: RiskLevel) -> Verdict | None:
        rule = _winner(self._category("bash"), [command], "command")
        return None if rule is None else _from_rule("bash", rule, command, ask_level=level)

    def _bash_default(self, command: str, level: RiskLevel) -> Verdict:
        return self._decide("bash", [command], "command", ask_level=level)

    # -- session grants -----------------------------------------------------------------------------------------

    def _project_path(self, path: str) -> str | None:
        """``path`` relative to the project, or ``None`` outside it or when it cannot be placed."""
        try:
            return locate(self._root, self._given_dir, path).relative
        except ValueError:
            return None

    def _category(self, category: RuleCategory) -> tuple[PermissionRule, ...]:
        """The category's rules with the session's grants first (so they win ties at their priority).

        The same tuple is returned until the grants change, so the ranked rules are compiled once per change.
        """
        version = self.grants.version
        cached = self._with_grants.get(category)
        if cached is not None and cached[0] == version:
            return cached[1]
        granted = self.grants.rules(category)
        rules = self._rules.category(category)
        combined = granted + rules if granted else rules
        self._with_grants[category] = (version, combined)
        return combined

    def _granted(self, category: RuleCategory, target: str, kind: PatternKind) -> Verdict:
        """The verdict on a target granted exactly: allowed, unless a rule above the grants' priority (a guard) or
        any deny rule matches it."""
        rule = _winner(self._rules.category(category), [target], kind)
        if rule is not None and (rule.priority > GRANT_PRIORITY or rule.action == "deny"):
            return _from_rule(category, rule, target)
        return Verdict.allow("always allowed for this session")

    def _granted_rule(self, command: str, level: RiskLevel) -> Verdict | None:
        verdict = self._granted("bash", command, "command")
        return Verdict.ask(verdict.reason, level=level) if verdict.action == "ask" else verdict

    def _granted_default(self, command: str, level: RiskLevel) -> Verdict:
        return Verdict.allow("always allowed for this session")

    # -- rules --------------------------------------------------------------------------------------------------

    def _decide(
        self,
        category: RuleCategory,
        targets: Sequence[str],
        kind: PatternKind,
        *,
        ask_level: RiskLevel = "medium",
    ) -> Verdict:
        # A path's verdict depends only on its spellings, the rules and the grants, and a file tool judges the
        # same path twice (by name at the gate, then the object it opened): remembered, matching the rules' globs
        # is paid once (about 60% of judging a path; measured with benchmarks/file_open.py).
        key = (
            (category, tuple(targets), self.grants.version)
            if kind == "path" and ask_level == "medium"
            else None
        )
        if key is not None:
            known = self._path_verdicts.get(key)
            if known is not None:
                return known
        rule = _winner(self._category(category), targets, kind)
        if rule is not None:
            verdict = _from_rule(category, rule, targets[0], ask_level=ask_level)
        else:
            action = self._rules.default_action
            target = targets[0] if targets else ""
            reason = f"no {category} rule matches {target!r}, so the default action ({action}) applies"
            verdict = Verdict.of(action, reason, ask_level=ask_level)
        if key is not None:
            if len(self._path_verdicts) >= _PATH_VERDICTS_KEPT:
                self._path_verdicts.clear()
            self._path_verdicts[key] = verdict
        return verdict


_PATH_VERDICTS_KEPT = 16_384
"""How many path verdicts a policy remembers before it starts afresh (a few MB at most)."""


def _hard_linked(verdict: Verdict, working_dir: str, path: str | None) -> Verdict:
    """``verdict``, but ``ask`` instead of ``allow`` when ``path`` is a regular file with more than one hard link.

    A hard link is the same file under another name: the name the rules judged may be inside the project while
    the other is a protected or outside file, and no path tells which. The file tools check the link count again
    on the file they open, and touch such a file only in a call a person approved.
    """
    if verdict.action != "allow" or path is None:
        return verdict
    try:
        info = os.stat(os.path.join(working_dir, path))  # follows links as an open would; no realpath needed
    except (OSError, ValueError):
        return verdict
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return verdict
    return Verdict.ask(
        f"{path} has {info.st_nlink} hard links: it is also another file's name, perhaps one outside the project "
        "or one the rules protect",
        level="high",
    )


def _winner(
    rules: Sequence[PermissionRule], targets: Sequence[str], kind: PatternKind
) -> PermissionRule | None:
    """The matching rule with the highest priority; among equals, the one listed first."""
    ranked = _ranked(rules, kind)
    present = [target for target in targets if target]
    if ranked.combined is not None:
        # One alternation of every pattern, in rank order: the group that matches is the best rule for a target.
        best: int | None = None
        for target in present:
            match = ranked.combined.fullmatch(target)
            if match is not None and match.lastindex is not None:
                best = match.lastindex if best is None else min(best, match.lastindex)
        return None if best is None else ranked.rules[best - 1]
    for matches, rule in zip(ranked.matchers, ranked.rules, strict=True):
        if any(matches(target) for target in present):
            return rule
    return None


@dataclass(frozen=True)
class _Ranked:
    """A rule sequence, highest priority first and in listed order among equals, with its compiled patterns."""

    rules: tuple[PermissionRule, ...]
    matchers: tuple[Callable[[str], bool], ...]
    combined: re.Pattern[str] | None
    """For command patterns: all of them as one regex, a group per rule."""


_RANKED: dict[tuple[int, PatternKind], tuple[Sequence[PermissionRule], _Ranked]] = {}


def _ranked(rules: Sequence[PermissionRule], kind: PatternKind) -> _Ranked:
    """``rules`` ranked so the first that matches wins, kept per rule sequence (the judge asks several times for
    every command)."""
    key = (id(rules), kind)
    entry = _RANKED.get(key)
    if entry is not None and entry[0] is rules:
        return entry[1]
    ordered = tuple(sorted(rules, key=lambda rule: -rule.priority))
    combined = None
    if kind == "command" and ordered:
        combined = re.compile(
            "|".join(f"({command_pattern(rule.pattern).pattern})" for rule in ordered),
            re.DOTALL | re.IGNORECASE,
        )
    ranked = _Ranked(ordered, tuple(compile_glob(rule.pattern, kind) for rule in ordered), combined)
    if len(_RANKED) > 64:
        _RANKED.clear()
    _RANKED[key] = (rules, ranked)
    return ranked


def _from_rule(
    category: str, rule: PermissionRule, target: str, *, ask_level: RiskLevel = "medium"
) -> Verdict:
    source = f"{category} rule '{rule.pattern}' ({rule.action}) for {target!r}"
    reason = f"{rule.reason} [{source}]" if rule.reason else f"the {source}"
    return Verdict.of(rule.action, reason, ask_level=ask_level)


def _spellings(path: str, resolved: str | None = None, *, directory: bool = False) -> list[str]:
    """How a rule may name ``path``: bare, and also with a trailing ``/`` when it is a directory (``directory``,
    or an existing directory at ``resolved``)."""
    if path in (".", "/") or path.endswith("/"):
        return [path]
    if directory or (resolved is not None and os.path.isdir(resolved)):
        return [path, path + "/"]
    return [path]


def _text(arguments: Mapping[str, Any], name: str) -> str | None:
    """The text argument ``name``; ``None`` when absent, null or empty."""
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise _BadArgument(f"the {name!r} argument must be text, not {type(value).__name__}")
    return value
