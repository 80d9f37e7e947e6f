"""Search tools: find files by glob pattern, and lines by regular expression.

Patterns follow the shell's rules: ``*`` and ``?`` stay within one directory, ``**`` spans any number of them,
``[abc]`` is a set, and ``{a,b}`` is expanded (nested too). Names starting with a dot are matched only by a
pattern that spells the dot, so ``**`` does not descend into ``.git`` or ``.venv``.

Both tools judge every file they would list or read under the read rules (see :mod:`._reach`): a denied file is
neither listed nor read, a file the rules ask about is listed but never read by a search (``read_file`` asks for
it), and no symbolic link is followed out of the project. Every ``{a,b}`` variant of a pattern is its own search,
from its own base, so a pattern reaches exactly what the policy judged; ``..`` after a wildcard is refused.

What the project ignores (``.gitignore`` at every level, ``.ignore``, ``.git/info/exclude``) is skipped unless the
call sets ``include_ignored`` or names it in its path or a pattern's literal base; the reply names what was skipped.

Results come in order of relevance rather than directory order: files nearer the search directory first (the
project's own top-level files before ones deep in a tree), then by path; ``grep_files`` searches files in that order
and shows the files with the most matching lines first, ties in the same order.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path

from hive_core.permissions.glob import expand_braces
from hive_core.permissions.glob import literal_brackets
from hive_core.permissions.paths import split_glob
from hive_core.tool_names import GLOB_FILES
from hive_core.tool_names import GREP_FILES
from hive_core.tools import ToolContext
from hive_core.tools import tool

from ._lines import text_lines
from ._open import Handle
from ._open import NotRegular
from ._open import SharedFile
from ._open import judge_of
from ._open import open_judged
from ._paths import format_size
from ._paths import resolve
from ._reach import Node
from ._reach import Reach
from ._text import BINARY_PROBE
from ._text import READ_LIMIT
from ._text import looks_binary
from ._text import stream_encoding

__all__ = ["glob_files", "grep_files"]

_GLOB_SHOWN = 100
_MAX_MATCHES = 100
_MAX_MATCH_FILES = 50
_LINE_WIDTH = 200
_LINE_LEAD = 60
_GREP_FILE_LIMIT = 10 * 1024 * 1024


def _matches(
    reach: Reach, ctx: ToolContext, base: Path, pattern: str, *, shown: str = "."
) -> list[tuple[str, Node]]:
    """The files under ``base`` (``shown`` to the model) that ``pattern`` matches and ``reach`` lets be listed,
    shallower first, then by relative path.

    Raises ``ValueError`` for a pattern that climbs with ``..`` after a wildcard or expands to too many variants,
    and ``PermissionError`` when the rules deny reading a variant's base directory.
    """
    found: dict[str, Node] = {}
    for variant in _variants(pattern):
        split = split_glob(variant)
        if split is None:
            raise ValueError(
                f"the pattern {pattern!r} climbs out with '..' after a wildcard, so where it reaches cannot be "
                "known; put the directory in path, or spell it before the first wildcard"
            )
        prefix, segments = split
        start = resolve(ctx, os.path.join(base, prefix)) if prefix else base
        root = reach.start(start, os.path.normpath(os.path.join(shown, prefix)))
        if not segments:
            node = reach.file(root, prefix)
            if node is not None and reach.admit(node, read=False):
                found.setdefault(prefix, node)
            continue
        for node in reach.glob(root, segments):
            found.setdefault(posixpath.join(prefix, node.relative) if prefix else node.relative, node)
    return sorted(found.items(), key=lambda item: _nearness(item[0]))


def _nearness(name: str) -> tuple[int, str]:
    """The sort key of relevance: shallower paths first, then by path."""
    return name.count("/"), name


def _variants(pattern: str) -> list[str]:
    """The brace variants of ``pattern``, each also with its brackets read literally (``pages/[id].tsx`` finds
    that file as well as ``pages/i.tsx``); the literal spelling reaches no directory the variant does not."""
    try:
        variants = expand_braces(pattern)
    except ValueError as error:
        raise ValueError(f"the pattern {pattern!r} cannot be searched: {error}") from None
    return list(
        dict.fromkeys(spelling for variant in variants for spelling in (variant, literal_brackets(variant)))
    )


@tool(name=GLOB_FILES, read_only=True)
def glob_files(ctx: ToolContext, pattern: str, path: str = ".", include_ignored: bool = False) -> str:
    """Find files whose paths match a glob pattern, such as "**/*.py" or "src/**/test_*.{js,ts}".

    "*" matches within one directory and "**" across any depth, so "*.py" finds only the files directly in the
    search directory. Hidden files and directories (names starting with a dot) are matched only when the
    pattern spells the dot. Files the project ignores (.gitignore, .ignore) are skipped and named in the reply,
    unless include_ignored is set or the pattern's directory part names them. Paths come back relative to the
    search directory, shallower ones first, then by path, at most 100 of them. Files the permission rules deny
    are not listed, and links leading outside the project are not followed.

    Args:
        pattern: The glob pattern, relative to the search directory.
        path: The directory to search from, relative to the working directory or absolute. Defaults to the
            working directory.
        include_ignored: Also find files the project's .gitignore or .ignore files exclude (such as
            node_modules/ or build output).
    """
    if not pattern.strip():
        raise ValueError('the pattern is empty; use "**/*" to find every file')
    base = _directory(ctx, path)
    reach = Reach(ctx, include_ignored=include_ignored)
    files = [name for name, _ in _matches(reach, ctx, base, pattern, shown=path)]
    notes = reach.notes(read=False)
    if not files:
        return f"No files match {pattern!r} under {path}{notes}"
    lines = [f"Found {len(files):,} {'file' if len(files) == 1 else 'files'} matching {pattern!r}:"]
    lines += [f"  {name}" for name in files[:_GLOB_SHOWN]]
    if len(files) > _GLOB_SHOWN:
        lines.append(f"  ... and {len(files) - _GLOB_SHOWN:,} more; narrow the pattern to see them")
    return "\n".join(lines) + notes


@tool(name=GREP_FILES, read_only=True)
def grep_files(
    ctx: ToolContext,
    pattern: str,
    file_pattern: str | None = None,
    path: str = ".",
    literal: bool = False,
    include_ignored: bool = False,
) -> str:
    """Search files for lines matching a regular expression (Python syntax), like grep.

    Matching is case-sensitive; start the pattern with (?i) to ignore case. Each line is searched on its own.
    Set literal to true to search for the text exactly as written, with no special characters. Binary files
    and files over 10 MB are skipped, and so are files the project ignores (.gitignore, .ignore) unless
    include_ignored is set or path names them; the reply names those skipped. Files nearer the search directory
    are searched first; each file with matches is named, the files with the most matching lines first, followed
    by its matching lines with their line numbers; at most 100 lines from 50 files are shown, each cut to 200
    characters. Only files the
    permission rules allow are read: the reply names the files the rules ask about (read them with read_file,
    which asks for approval) and counts those they deny; links leading outside the project are not followed.

    Args:
        pattern: The regular expression to look for (or the exact text, with literal).
        file_pattern: Which files to search, as a glob such as "*.py" or "src/**/*.{ts,tsx}". A pattern
            without "/" matches file names at any depth. Leave out to search every file that is not hidden.
        path: The directory to search in (or a single file), relative to the working directory or absolute.
            Defaults to the working directory.
        literal: Take the pattern as plain text rather than a regular expression.
        include_ignored: Also search files the project's .gitignore or .ignore files exclude (such as
            node_modules/ or build output).
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
    reach = Reach(ctx, include_ignored=include_ignored)
    if target.is_file():
        node = reach.file(reach.start(target, path), path)
        candidates = [] if node is None else [(path, node)]
    else:
        base = _directory(ctx, path)
        glob_pattern = file_pattern or "**/*"
        if "/" not in glob_pattern:
            glob_pattern = "**/" + glob_pattern
        candidates = _matches(reach, ctx, base, glob_pattern, shown=path)
        if not candidates:
            return f"No files match {file_pattern or '**/*'!r} under {path}{reach.notes(read=True)}"
    search = _Search(regex)
    judge = judge_of(ctx, "read")
    searched = 0
    for name, node in candidates:
        if not reach.admit(node, read=True, name=name):
            continue
        searched += 1
        # The resolved path the walk checked against the project's boundary, opened and judged once more as the
        # object it is: a directory swapped for a link since the walk cannot carry the read elsewhere.
        try:
            handle = open_judged(ctx, node.real, judge=judge, shown=name, approved=False)
        except SharedFile:
            search.shared.append(name)
            continue
        except NotRegular:
            search.special += 1
            continue
        except (OSError, ValueError):
            search.unreadable += 1
            continue
        with handle:
            if not search.scan(name, handle):
                break
    return search.report(pattern, searched) + reach.notes(read=True)


class _Search:
    """Matches collected across files, within the output limits."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.regex = regex
        self.sections: list[tuple[int, int, str]] = []
        """Per file with matches: how many, the order it was searched in, and its text."""
        self.matches = 0
        self.cut = False
        self.binary = 0
        self.oversized = 0
        self.unreadable = 0
        self.special = 0
        """Pipes, devices and sockets: never opened for reading."""
        self.shared: list[str] = []
        """Files with more than one hard link: a search does not read them, read_file asks first."""
        self.long_lines = 0
        """Lines searched only in their first :data:`READ_LIMIT` characters."""

    def scan(self, name: str, file: Handle) -> bool:
        """Search one opened file; false once the limits are reached and the search should stop."""
        try:
            if os.fstat(file.fd).st_size > _GREP_FILE_LIMIT:
                self.oversized += 1
                return True
            head = os.pread(file.fd, BINARY_PROBE, 0)
            if looks_binary(head):
                self.binary += 1
                return True
            lines, more = self._matching_lines(file.fd, stream_encoding(head), _MAX_MATCHES - self.matches)
        except OSError:
            self.unreadable += 1
            return True
        if lines:
            if len(self.sections) == _MAX_MATCH_FILES:
                self.cut = True
                return False
            self.matches += len(lines)
            self.sections.append((len(lines), len(self.sections), f"{name}:\n" + "\n".join(lines)))
        self.cut = more
        return not more

    def _matching_lines(self, fd: int, encoding: str, room: int) -> tuple[list[str], bool]:
        """Up to ``room`` matching lines, and whether the file holds more."""
        found: list[str] = []
        # Streamed in chunks; a line longer than the per-call read limit is searched in its first part only.
        for line in text_lines(fd, encoding, limit=READ_LIMIT):
            text = line.text
            if line.cut:
                self.long_lines += 1
            match = self.regex.search(text)
            if match is None:
                continue
            if len(found) == room:
                return found, True
            found.append(f"  {line.number}: {_excerpt(text, match.start())}")
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
        # Most matches first; ties keep the search order (nearer files first).
        ranked = sorted(self.sections, key=lambda section: (-section[0], section[1]))
        return head + "\n\n" + "\n\n".join(text for _, _, text in ranked) + skipped

    def _skipped(self) -> str:
        notes: list[str] = []
        if self.binary:
            notes.append(f"{self.binary} binary")
        if self.oversized:
            notes.append(f"{self.oversized} over {format_size(_GREP_FILE_LIMIT)}")
        if self.unreadable:
            notes.append(f"{self.unreadable} unreadable")
        if self.special:
            notes.append(f"{self.special} not regular (pipes, devices or sockets)")
        text = f"\n(skipped files: {', '.join(notes)})" if notes else ""
        if self.shared:
            shown = ", ".join(self.shared[:10]) + (
                f" and {len(self.shared) - 10} more" if len(self.shared) > 10 else ""
            )
            text += (
                f"\n(not searched: {len(self.shared)} with more than one hard link ({shown}); read_file asks for "
                "approval to read one)"
            )
        if self.long_lines:
            text += (
                f"\n({self.long_lines} lines longer than {format_size(READ_LIMIT)} were searched in their first "
                f"{format_size(READ_LIMIT)} only)"
            )
        return text


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
