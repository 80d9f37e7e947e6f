"""hive's glob dialect: one language for the path patterns of the rules and for ``glob_files``, through wcmatch.

The language (wcmatch's globs with ``GLOBSTAR`` and ``BRACE``):

- ``*`` matches a run of characters within one path segment, ``?`` one character other than ``/``;
- ``**`` as a whole segment spans any depth, zero included (``**/*.py`` also matches ``a.py``); joined to other
  characters (``**.py``) it is a plain ``*``, so a rule file spelling it so is refused (see
  :func:`path_pattern_problem`) rather than quietly narrowed;
- ``[abc]``, ``[a-z]`` and ``[!abc]`` match one character of (or not of) a set; because Next.js and others name
  files ``[id].tsx``, a pattern also matches the path that spells its brackets literally, so a rule for
  ``pages/[id].tsx`` covers that very file and a search for it finds it;
- ``{a,b}`` and ``{1..3}`` expand (bracex), at most :data:`MAX_BRACE_VARIANTS` ways;
- ``\\`` escapes the character after it.

Two settings differ by purpose, not by language. The rules ignore case and let wildcards match names starting with
a dot, so that ``.ENV`` on a case-insensitive disk cannot slip past a deny rule for ``.env`` and ``**/*.pem`` covers
``.ssh/id.pem``. A search respects case and enters or returns a dot name only when the pattern spells the dot, so
``**/*`` does not wade through ``.git``.

Command patterns (``bash`` rules) and tool-name patterns are not paths: shell commands are full of brackets and
braces, so there only ``*`` (any characters, ``/`` included) and ``?`` are special.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Literal

import bracex
from wcmatch import fnmatch as wc_fnmatch
from wcmatch import glob as wc_glob

__all__ = [
    "MAX_BRACE_VARIANTS",
    "PatternKind",
    "command_pattern",
    "compile_glob",
    "expand_braces",
    "glob_matches",
    "literal_brackets",
    "path_pattern_problem",
    "segment_matcher",
]

PatternKind = Literal["path", "command", "name"]
"""What a pattern is matched against, which decides its language and whether case matters.

- ``path``: a project-relative or absolute path with ``/`` separators, in hive's glob dialect (the module's
  docstring); matching ignores case and wildcards match dot names.
- ``command``: a shell command line (``bash`` rules). ``*`` matches any characters, ``/`` included, so
  ``git *`` covers ``git push origin/main``; ``?`` matches one character; matching ignores case.
- ``name``: a tool name (``tools``, ``mcp_tools``, ``read_only_tools``). ``*`` matches any characters; names
  have one spelling, so matching respects case.
"""

MAX_BRACE_VARIANTS = 256
"""The most patterns one glob may expand to; more is refused rather than judged or searched one by one."""

_RULE_FLAGS = wc_glob.GLOBSTAR | wc_glob.BRACE | wc_glob.DOTGLOB | wc_glob.IGNORECASE
_SEARCH_SEGMENT_FLAGS = wc_fnmatch.CASE
# The project root's relative path is ".", which wcmatch's wildcards never match; the rules must still cover it
# (`**/*` lets the agent list the project), so it is also tried as a name no file can have.
_ROOT: dict[str, str] = {".": "\0", "./": "\0/"}


def expand_braces(pattern: str) -> list[str]:
    """The patterns the braces of ``pattern`` stand for: ``*.{js,ts}`` → ``*.js``, ``*.ts``; ``a{1..3}`` → three.

    Nested groups expand too; a group without a comma or range (``{x}``) stays as written; escapes are kept for the
    matcher. The policy and the search tools both expand with this function, so every variant a search runs is a
    variant the policy judged. Raises ``ValueError`` when there would be more than :data:`MAX_BRACE_VARIANTS`.
    """
    try:
        variants = bracex.expand(pattern, keep_escapes=True, limit=MAX_BRACE_VARIANTS)
    except bracex.ExpansionLimitException:
        raise ValueError(
            f"its braces expand to more than {MAX_BRACE_VARIANTS} patterns; use fewer {{a,b}} groups"
        ) from None
    return list(dict.fromkeys(variants))


def literal_brackets(pattern: str) -> str:
    """``pattern`` with its brackets escaped, so ``[id].tsx`` names the file ``[id].tsx``; unchanged when it has
    none."""
    return re.sub(r"(?<!\\)([\[\]])", r"\\\1", pattern)


def path_pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` cannot be a path rule, or ``None``: a ``**`` joined to other characters (which would match
    within one segment only, narrowing what its author meant) or braces expanding too many ways."""
    try:
        variants = expand_braces(pattern)
    except ValueError as error:
        return str(error)
    for variant in variants:
        if any("**" in segment and segment != "**" for segment in variant.split("/")):
            return (
                f"'**' spans directories only as a whole segment, so {pattern!r} would match within one "
                "directory; write '**/' before the name ('**/*.pem') or use '*'"
            )
    return None


@functools.lru_cache(maxsize=2048)
def compile_glob(pattern: str, kind: PatternKind = "path") -> Callable[[str], bool]:
    """A predicate telling whether ``pattern`` matches the whole of a target of ``kind``."""
    if kind == "path":
        literal = literal_brackets(pattern)
        patterns = [pattern] if literal == pattern else [pattern, literal]
        match = wc_glob.compile(patterns, flags=_RULE_FLAGS, limit=MAX_BRACE_VARIANTS).match
        return lambda target: match(target) or (target in _ROOT and match(_ROOT[target]))
    regex = _wildcards(pattern, ignore_case=kind == "command")
    return lambda target: regex.fullmatch(target) is not None


def command_pattern(pattern: str) -> re.Pattern[str]:
    """The regex a command (or name) rule ``pattern`` stands for, matched with ``fullmatch``; it has no groups."""
    return _wildcards(pattern, ignore_case=True)


def glob_matches(pattern: str, target: str, kind: PatternKind = "path") -> bool:
    """Whether ``pattern`` matches the whole of ``target``."""
    return compile_glob(pattern, kind)(target)


@functools.lru_cache(maxsize=1024)
def segment_matcher(segment: str) -> Callable[[str], bool]:
    """How a search matches one segment of a brace-free pattern against a directory entry's name: case respected,
    a leading dot only where the segment spells it."""
    return wc_fnmatch.compile(segment, flags=_SEARCH_SEGMENT_FLAGS).match


def _wildcards(pattern: str, *, ignore_case: bool) -> re.Pattern[str]:
    """``*`` (any characters) and ``?`` (one), every other character literal, anchored by ``fullmatch``."""
    parts = [".*" if char == "*" else "." if char == "?" else re.escape(char) for char in pattern]
    # DOTALL: a newline inside a command must not let it slip past a deny rule.
    flags = re.DOTALL | re.IGNORECASE if ignore_case else re.DOTALL
    return re.compile("".join(parts), flags)
