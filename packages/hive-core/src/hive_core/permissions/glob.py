"""Rule patterns: the small glob language of the rules file, compiled to anchored regular expressions."""

from __future__ import annotations

import functools
import re
from typing import Literal

__all__ = ["PatternKind", "compile_glob", "glob_matches"]

PatternKind = Literal["path", "command", "name"]
"""What a pattern is matched against, which decides what ``*`` may cross and whether case matters.

- ``path``: a project-relative or absolute path with ``/`` separators. ``*`` and ``?`` stop at ``/`` and ``\\``;
  matching ignores case.
- ``command``: a shell command line (``bash`` rules). ``*`` matches any characters, ``/`` included, so
  ``git *`` covers ``git push origin/main``; matching ignores case.
- ``name``: a tool name (``tools``, ``mcp_tools``, ``read_only_tools``). ``*`` matches any characters; names
  have one spelling, so matching respects case.
"""

_NOT_SEPARATOR = r"[^/\\]"


@functools.lru_cache(maxsize=2048)
def compile_glob(pattern: str, kind: PatternKind = "path") -> re.Pattern[str]:
    """Compile ``pattern`` for :meth:`re.Pattern.fullmatch`.

    ``**`` matches anything, separators included, and swallows a ``/`` right after it (so ``**/*`` also matches
    top-level names); ``*`` matches a run of characters (within one path segment for ``path`` patterns); ``?``
    matches one character (not a separator for ``path`` patterns); every other character stands for itself.
    """
    star = _NOT_SEPARATOR + "*" if kind == "path" else ".*"
    one = _NOT_SEPARATOR if kind == "path" else "."
    parts: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**", i):
            parts.append(".*")
            i += 2
            if pattern.startswith("/", i):
                i += 1
        elif char == "*":
            parts.append(star)
            i += 1
        elif char == "?":
            parts.append(one)
            i += 1
        else:
            parts.append(re.escape(char))
            i += 1
    # DOTALL: a newline inside a file name or a command must not let a target slip past a deny rule.
    flags = re.DOTALL if kind == "name" else re.DOTALL | re.IGNORECASE
    return re.compile("".join(parts), flags)


def glob_matches(pattern: str, target: str, kind: PatternKind = "path") -> bool:
    """Whether ``pattern`` matches the whole of ``target``."""
    return compile_glob(pattern, kind).fullmatch(target) is not None
