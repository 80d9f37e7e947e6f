"""Search tools: find files by glob pattern, and lines by regular expression.

Patterns follow the shell's rules: ``*`` and ``?`` stay within one directory, ``**`` spans any number of them,
``[abc]`` is a set, and ``{a,b}`` is expanded (nested too). Names starting with a dot are matched only by a
pattern that spells the dot, so ``**`` does not descend into ``.git`` or ``.venv``.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

from hive_core.tools import ToolContext, tool

from ._paths import format_size, resolve
from ._text import BINARY_PROBE, looks_binary, stream_encoding

__all__ = ["expand_braces", "glob_files", "grep_files", "match_files"]

_GLOB_SHOWN = 100
_MAX_MATCHES = 100
_MAX_MATCH_FILES = 50
_LINE_WIDTH = 200
_LINE_LEAD = 60
_GREP_FILE_LIMIT = 10 * 1024 * 1024
_BRACES = re.compile(r"\{([^{}]*,[^{}]*)\}")


def expand_braces(pattern: str) -> list[str]:
    """The patterns ``{a,b}`` groups stand for: ``*.{js,ts}`` → ``*.js``, ``*.ts`` (nested groups too)."""
    group = _BRACES.search(pattern)
    if group is None:
        return [pattern]
    head, tail = pattern[: group.start()], pattern[group.end() :]
    expanded: list[str] = []
    for choice in group.group(1).split(","):
        for variant in expand_braces(head + choice + tail):
            if variant not in expanded:
                expanded.append(variant)
    return expanded


def match_files(base: Path, pattern: str) -> list[str]:
    """The files (not directories) under ``base`` that ``pattern`` matches, as sorted relative paths."""
    found: set[str] = set()
    for variant in expand_braces(pattern):
        for name in glob.glob(variant, root_dir=base, recursive=True):
            if os.path.isfile(os.path.join(base, name)):
                found.add(name)
    return sorted(found)


@tool(read_only=True)
def glob_files(ctx: ToolContext, pattern: str, path: str = ".") -> str:
    """Find files whose paths match a glob pattern, such as "**/*.py" or "src/**/test_*.{js,ts}".

    "*" matches within one directory and "**" across any depth, so "*.py" finds only the files directly in the
    search directory. Hidden files and directories (names starting with a dot) are matched only when the
    pattern spells the dot. Paths come back sorted, relative to the search directory, at most 100 of them.

    Args:
        pattern: The glob pattern, relative to the search directory.
        path: The directory to search from, relative to the working directory or absolute. Defaults to the
            working directory.
    """
    if not pattern.strip():
        raise ValueError('the pattern is empty; use "**/*" to find every file')
    base = _directory(ctx, path)
    files = match_files(base, pattern)
    if not files:
        return f"No files match {pattern!r} under {path}"
    lines = [f"Found {len(files):,} {'file' if len(files) == 1 else 'files'} matching {pattern!r}:"]
    lines += [f"  {name}" for name in files[:_GLOB_SHOWN]]
    if len(files) > _GLOB_SHOWN:
        lines.append(f"  ... and {len(files) - _GLOB_SHOWN:,} more; narrow the pattern to see them")
    return "\n".join(lines)


@tool(read_only=True)
def grep_files(
    ctx: ToolContext, pattern: str, file_pattern: str | None = None, path: str = ".", literal: bool = False
) -> str:
    """Search files for lines matching a regular expression (Python syntax), like grep.

    Matching is case-sensitive; start the pattern with (?i) to ignore case. Each line is searched on its own.
    Set literal to true to search for the text exactly as written, with no special characters. Binary files
    and files over 10 MB are skipped. Each file with matches is named, followed by its matching lines with
    their line numbers; at most 100 lines from 50 files are shown, each cut to 200 characters.

    Args:
        pattern: The regular expression to look for (or the exact text, with literal).
        file_pattern: Which files to search, as a glob such as "*.py" or "src/**/*.{ts,tsx}". A pattern
            without "/" matches file names at any depth. Leave out to search every file that is not hidden.
        path: The directory to search in (or a single file), relative to the working directory or absolute.
            Defaults to the working directory.
        literal: Take the pattern as plain text rather than a regular expression.
    """
    if not pattern:
        raise ValueError("the pattern is empty")
    try:
        regex = re.compile(re.escape(pattern) if literal else pattern)
    except re.error as exc:
        raise ValueError(
            f"the pattern is not a valid regular expression ({exc}); "
            "set literal to true to search for it as plain text"
        ) from None
    target = resolve(ctx, path)
    if target.is_file():
        candidates = [(path, target)]
    else:
        base = _directory(ctx, path)
        glob_pattern = file_pattern or "**/*"
        if "/" not in glob_pattern:
            glob_pattern = "**/" + glob_pattern
        candidates = [(name, base / name) for name in match_files(base, glob_pattern)]
        if not candidates:
            return f"No files match {file_pattern or '**/*'!r} under {path}"
    search = _Search(regex)
    for name, file in candidates:
        if not search.scan(name, file):
            break
    return search.report(pattern, len(candidates))


class _Search:
    """Matches collected across files, within the output limits."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex = regex
        self.sections: list[str] = []
        self.matches = 0
        self.cut = False
        self.binary = 0
        self.oversized = 0
        self.unreadable = 0

    def scan(self, name: str, file: Path) -> bool:
        """Search one file; false once the limits are reached and the search should stop."""
        try:
            if file.stat().st_size > _GREP_FILE_LIMIT:
                self.oversized += 1
                return True
            with file.open("rb") as raw:
                head = raw.read(BINARY_PROBE)
            if looks_binary(head):
                self.binary += 1
                return True
            lines, more = self._matching_lines(file, stream_encoding(head), _MAX_MATCHES - self.matches)
        except OSError:
            self.unreadable += 1
            return True
        if lines:
            if len(self.sections) == _MAX_MATCH_FILES:
                self.cut = True
                return False
            self.matches += len(lines)
            self.sections.append(f"{name}:\n" + "\n".join(lines))
        self.cut = more
        return not more

    def _matching_lines(self, file: Path, encoding: str, room: int) -> tuple[list[str], bool]:
        """Up to ``room`` matching lines, and whether the file holds more."""
        found: list[str] = []
        with file.open(encoding=encoding, errors="replace", newline=None) as handle:
            for number, line in enumerate(handle, start=1):
                text = line.rstrip("\n")
                match = self.regex.search(text)
                if match is None:
                    continue
                if len(found) == room:
                    return found, True
                found.append(f"  {number}: {_excerpt(text, match.start())}")
        return found, False

    def report(self, pattern: str, searched: int) -> str:
        skipped = self._skipped()
        if not self.matches:
            files = "file" if searched == 1 else "files"
            return f"No matches for {pattern!r} in {searched:,} {files} searched{skipped}"
        files = "file" if len(self.sections) == 1 else "files"
        if self.cut:
            head = (
                f"Showing the first {self.matches} matches, in {len(self.sections)} {files}; the search "
                "stopped there, so narrow the pattern, file_pattern or path to see the rest:"
            )
        else:
            matches = "match" if self.matches == 1 else "matches"
            head = f"Found {self.matches} {matches} in {len(self.sections)} {files}:"
        return head + "\n\n" + "\n\n".join(self.sections) + skipped

    def _skipped(self) -> str:
        notes: list[str] = []
        if self.binary:
            notes.append(f"{self.binary} binary")
        if self.oversized:
            notes.append(f"{self.oversized} over {format_size(_GREP_FILE_LIMIT)}")
        if self.unreadable:
            notes.append(f"{self.unreadable} unreadable")
        return f"\n(skipped files: {', '.join(notes)})" if notes else ""


def _excerpt(line: str, start: int) -> str:
    """The line, or 200 characters of it around where the match starts."""
    if len(line) <= _LINE_WIDTH:
        return line
    begin = max(0, min(start - _LINE_LEAD, len(line) - _LINE_WIDTH))
    piece = line[begin : begin + _LINE_WIDTH]
    return ("…" if begin else "") + piece + ("…" if begin + _LINE_WIDTH < len(line) else "")


def _directory(ctx: ToolContext, path: str) -> Path:
    base = resolve(ctx, path)
    if not base.exists():
        raise FileNotFoundError(f"there is no directory at {path}")
    if not base.is_dir():
        raise NotADirectoryError(f"{path} is a file, not a directory")
    return base
