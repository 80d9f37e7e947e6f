"""Judging a command line: every simple command against the bash rules, every file it touches against the path
rules, and anything that cannot be analysed asked about.

The strictest verdict of all parts wins. A line with a part the parser or the command table cannot resolve is never
allowed; a simple command on the always-deny list anywhere in it (inside ``$(...)``, after a comment line, in a
``bash -c`` payload) denies the whole line.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import Literal

from hive_core.approvals import Verdict
from hive_core.approvals import strictest
from hive_protocol import RiskLevel

from .paths import glob_base
from .shell import always_denied
from .shell import risk_level
from .shell_commands import Access
from .shell_commands import CommandReach
from .shell_commands import analyse
from .shell_commands import program_name
from .shell_syntax import CommandLine
from .shell_syntax import ShellWord
from .shell_syntax import SimpleCommand
from .shell_syntax import parse_command

__all__ = ["ShellRules", "judge_command"]

_MAX_SCRIPT_DEPTH = 8
_MAX_GLOB_MATCHES = 1_000
_MAX_TREE_ENTRIES = 5_000
# Pathspec patterns and magic (`*key*`, `:(icase)KEY`, `:/secrets`), which git matches against files itself.
_GIT_PATHSPEC_MAGIC = re.compile(r"[*?\[]|^:")
_HARMLESS_DEVICES: dict[Access, frozenset[str]] = {
    "read": frozenset({"/dev/null", "/dev/zero", "/dev/stdin", "/dev/urandom", "/dev/random"}),
    "edit": frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}),
}


@dataclass(frozen=True)
class ShellRules:
    """What the judge needs from a policy."""

    rule: Callable[[str, RiskLevel], Verdict | None]
    """The verdict of the winning bash rule for a command text, ``None`` when no rule matches."""
    default: Callable[[str, RiskLevel], Verdict]
    """The verdict when no bash rule matches."""
    path: Callable[[Literal["read", "edit"], str], Verdict]
    """The verdict on reading or changing the file at an absolute path."""
    working_dir: str
    """Where the command runs (absolute)."""


@dataclass
class _Findings(CommandReach):
    commands: list[SimpleCommand] = field(default_factory=list[SimpleCommand])
    programs: set[str] = field(default_factory=set[str])


def judge_command(command: str, rules: ShellRules) -> Verdict:
    """Judge the command line ``command`` (already stripped, not empty) under ``rules``."""
    denied = always_denied(command)
    if denied is not None:
        return Verdict.deny(f"the command is never allowed: {denied}")
    findings = _Findings()
    _collect(parse_command(command), findings, 0)
    texts = [simple.text() for simple in findings.commands]
    level = risk_level(command, texts)
    for text in texts + [_program_text(simple) for simple in findings.commands]:
        denied = findings.denied or (always_denied(text) if text else None)
        if denied is not None:
            return Verdict.deny(f"the command is never allowed: {denied}")
    verdicts: list[Verdict] = []
    for simple in findings.commands:
        text = simple.text()
        if not text:
            continue
        verdicts.append(rules.rule(text, level) or rules.default(text, level))
        # A command run by xargs gets more arguments: a rule like `rm -rf *` must still see one.
        foreign = f"{text} ARGUMENT" if simple.foreign_arguments else ""
        for spelling in (simple.source, _program_text(simple), foreign):
            extra = rules.rule(spelling, level) if spelling and spelling != text else None
            if extra is not None and extra.action != "allow":
                verdicts.append(extra)
    whole = rules.rule(command, level)
    if whole is not None and whole.action != "allow":
        verdicts.append(whole)
    directories = _directories(findings, rules, verdicts)
    if len(directories) > 1 and "git" in findings.programs:
        # git finds its repository, and the configuration that can make it run programs, from where it runs: in
        # a directory the agent can write, a repository of the agent's making.
        verdicts.append(
            Verdict.ask("git would run in another directory than the project's, with its repository")
        )
    for access, word in findings.paths:
        verdicts.extend(_judge_path(access, word, directories, rules))
    for word, certain in findings.repository_paths:
        verdicts.extend(_judge_repository_path(word, certain, directories, rules))
    verdicts.extend(_options_from_patterns(findings.commands, directories))
    verdict = strictest(verdicts) if verdicts else Verdict.allow("the command runs nothing")
    if verdict.action == "allow" and not findings.problems:
        # Walking a directory costs the most, so it is only done for a line that would otherwise run.
        for word in findings.trees:
            verdict = strictest([verdict, *_judge_tree(word, directories, rules)])
    if findings.problems and verdict.action != "deny":
        return Verdict.ask(
            f"part of the command cannot be judged from its text: {findings.problems[0]}", level=level
        )
    if verdict.action == "ask":
        return Verdict.ask(verdict.reason, level=level)
    return verdict


def _collect(line: CommandLine, findings: _Findings, depth: int) -> None:
    findings.problems.extend(line.problems)
    findings.paths.extend((redirect.access, redirect.target) for redirect in line.redirects)
    # Each command with whether the bash rules judge it: a program a launcher starts (`uv run pytest`) is analysed
    # as its own, but the rules judge the line as written.
    pending = [(simple, True) for simple in line.commands]
    while pending:
        simple, judged = pending.pop(0)
        if judged:
            findings.commands.append(simple)
        if simple.name is not None:
            findings.programs.add(program_name(simple.name))
        invocation = analyse(simple)
        findings.add(invocation)
        pending[:0] = [(nested, judged) for nested in invocation.nested] + [
            (launched, False) for launched in invocation.launched
        ]
        for script in invocation.scripts:
            if depth >= _MAX_SCRIPT_DEPTH:
                findings.problems.append("shells nest too deeply to be analysed")
                continue
            _collect(parse_command(script), findings, depth + 1)


def _program_text(simple: SimpleCommand) -> str:
    """The command with its program named without a directory (``/bin/rm -rf x`` → ``rm -rf x``)."""
    name = simple.name
    if name is None or "/" not in name.value:
        return ""
    return " ".join([os.path.basename(name.value), *(word.value for word in simple.words[1:])])


def _directories(findings: _Findings, rules: ShellRules, verdicts: list[Verdict]) -> list[str]:
    """Every directory a relative path of the line may be relative to: where it starts and where a ``cd`` in it
    may lead (in any order, which over-counts and so errs on the strict side)."""
    directories = [rules.working_dir]
    for word in findings.directories:
        if not word.literal:
            verdicts.append(Verdict.ask(f"the directory {word.source!r} is not fixed text"))
            continue
        for base in list(directories):
            target = os.path.normpath(os.path.join(base, word.value))
            verdicts.append(rules.path("read", target))
            if target not in directories:
                directories.append(target)
    return directories


def _options_from_patterns(commands: list[SimpleCommand], directories: list[str]) -> list[Verdict]:
    """An ask for a wildcard argument that expands to a name starting with ``-``, which the program would take for
    an option (a file named ``-delete`` turns ``find *`` into ``find -delete``)."""
    for simple in commands:
        for word in simple.words[1:]:
            if word.pattern is None or word.pattern[0] not in "*?[":
                continue
            for base in directories:
                if any(match.startswith("-") for match in glob.glob(word.pattern, root_dir=base)):
                    return [
                        Verdict.ask(f"the pattern {word.source!r} expands to a name bash passes as an option")
                    ]
    return []


def _judge_path(access: Access, word: ShellWord, directories: list[str], rules: ShellRules) -> list[Verdict]:
    if word.substitution:
        return []
    if not word.literal:
        return [Verdict.ask(f"the file {word.source!r} is not fixed text, so it cannot be judged")]
    if not word.value or word.value in _HARMLESS_DEVICES[access]:
        return []
    if word.pattern is None:
        return [rules.path(access, os.path.join(base, word.value)) for base in directories]
    if glob_base(word.pattern) is None:
        return [Verdict.ask(f"the pattern {word.source!r} climbs out with '..' after a wildcard")]
    verdicts: list[Verdict] = []
    for base in directories:
        matches = glob.glob(word.pattern, root_dir=base)
        if len(matches) > _MAX_GLOB_MATCHES:
            return [Verdict.ask(f"the pattern {word.source!r} names more than {_MAX_GLOB_MATCHES:,} files")]
        # No match: bash passes the pattern on as it is.
        for match in matches or [word.value]:
            verdicts.append(rules.path(access, os.path.join(base, match)))
    return verdicts


def _judge_repository_path(
    word: ShellWord, certain: bool, directories: list[str], rules: ShellRules
) -> list[Verdict]:
    """An operand of ``git diff``/``log``/``show``/``blame``: judged as reading the file when it is a path (after
    ``--``, or a file that exists), and asked about when it lies outside the project, where git compares it as
    ``--no-index`` would, or when it is a pattern git matches itself (``'*key*'``, ``:(icase)...``)."""
    value = word.value
    expanded = word.pattern is not None and all(
        glob.glob(word.pattern, root_dir=base) for base in directories
    )
    if _GIT_PATHSPEC_MAGIC.search(value) and not expanded:
        # Bash passes a pattern that matches nothing on as it is, and git matches it against its history too.
        return [
            Verdict.ask(
                f"git matches the pattern {word.source!r} against files itself, so it cannot be judged"
            )
        ]
    if value in _HARMLESS_DEVICES["read"]:
        return []
    bases = [
        base
        for base in directories
        if certain or os.path.isabs(value) or os.path.lexists(os.path.join(base, value))
    ]
    if not bases:
        return []
    verdicts = _judge_path("read", word, bases, rules)
    project = os.path.realpath(rules.working_dir)
    for base in bases:
        real = os.path.realpath(os.path.join(base, value))
        if real != project and not real.startswith(project.rstrip(os.sep) + os.sep):
            verdicts.append(
                Verdict.ask(
                    f"git would read {value!r}, outside the repository, comparing it as --no-index does"
                )
            )
            break
    return verdicts


def _judge_tree(word: ShellWord, directories: list[str], rules: ShellRules) -> list[Verdict]:
    """The verdicts on every file under the directory ``word`` that the read rules do not simply allow."""
    if not word.literal or word.substitution:
        return []
    verdicts: list[Verdict] = []
    for base in directories:
        tops = glob.glob(word.pattern, root_dir=base) if word.pattern is not None else [word.value]
        for top in (os.path.join(base, name) for name in tops):
            if not os.path.isdir(top) or os.path.islink(top):
                continue
            seen = 0
            for folder, subfolders, files in os.walk(top):
                seen += len(subfolders) + len(files)
                if seen > _MAX_TREE_ENTRIES:
                    return [
                        Verdict.ask(f"{word.value!r} holds more than {_MAX_TREE_ENTRIES:,} files to judge")
                    ]
                links = [name for name in subfolders if os.path.islink(os.path.join(folder, name))]
                for name in (*files, *links):
                    path = os.path.join(folder, name)
                    verdict = rules.path("read", path)
                    if verdict.action == "deny":
                        # The command names the directory, not the denied file, so a person may still run it
                        # knowing what it reaches: asked about (loudly), not refused.
                        relative = os.path.relpath(path, base)
                        verdicts.append(
                            Verdict.ask(
                                f"{word.value!r} holds {relative!r}, which the read rules deny "
                                f"({verdict.reason}); the command would read it",
                                level="high",
                            )
                        )
                        return verdicts
                    if verdict.action != "allow":
                        verdicts.append(verdict)
    return verdicts
