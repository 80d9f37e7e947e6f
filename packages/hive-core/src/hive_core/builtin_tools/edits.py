"""``edit_file``'s text replacement, on text already read: shared by the tool that edits files on disk and by
front ends that read and write through an editor (``hive acp``'s client ``fs/*``)."""

from __future__ import annotations

import re

from ._text import normalize_newlines

__all__ = ["edit_text"]

_SNIPPET_LIMIT = 1500
_LINES_SHOWN = 10


def edit_text(
    content: str, path: str, old_text: str, new_text: str, *, replace_all: bool, newline: str | None
) -> tuple[str, str]:
    """``content`` with ``old_text`` replaced by ``new_text``, and ``edit_file``'s message saying where.

    ``old_text`` must occur exactly once unless ``replace_all``; the model's text is given ``newline`` (the file's
    line ending, ``None`` for LF) first. Raises :class:`ValueError` with what to do instead when the edit cannot be
    made (empty or unchanged text, no match, several matches).
    """
    if not old_text:
        raise ValueError(
            "old_text is empty; give the exact text to replace (write_file replaces a whole file)"
        )
    if old_text == new_text:
        raise ValueError("old_text and new_text are the same, so the edit would change nothing")
    find, replacement, starts = _occurrences(content, old_text, new_text, newline or "\n")
    if not starts:
        raise ValueError(_not_found(content, old_text, path))
    lines = _line_list(content, starts)
    if len(starts) > 1 and not replace_all:
        raise ValueError(
            f"old_text occurs {len(starts)} times in {path} (at {lines}); include more of the surrounding "
            "lines so it matches only one place, or set replace_all to true to replace every occurrence"
        )
    noun = "replacement" if len(starts) == 1 else "replacements"
    return content.replace(find, replacement), f"Edited {path}: {len(starts)} {noun} (at {lines})"


def _occurrences(content: str, old: str, new: str, newline: str) -> tuple[str, str, list[int]]:
    """The spelling of ``old`` found in ``content``, its replacement, and where each occurrence starts.

    The model's text is first given the file's own line endings; the text exactly as sent is tried too, for a
    file that mixes LF and CRLF.
    """
    candidates = [(_with_newline(old, newline), _with_newline(new, newline)), (old, new)]
    for find, replacement in candidates:
        starts: list[int] = []
        index = content.find(find)
        while index >= 0:
            starts.append(index)
            index = content.find(find, index + len(find))
        if starts:
            return find, replacement, starts
    return old, new, []


def _with_newline(text: str, newline: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", newline)


def _line_of(content: str, index: int) -> int:
    return normalize_newlines(content[:index]).count("\n") + 1


def _line_list(content: str, starts: list[int]) -> str:
    numbers = [str(_line_of(content, start)) for start in starts[:_LINES_SHOWN]]
    more = f" and {len(starts) - _LINES_SHOWN} more" if len(starts) > _LINES_SHOWN else ""
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(numbers) + more


def _not_found(content: str, old: str, path: str) -> str:
    words = old.split()
    loose = re.search(r"\s+".join(map(re.escape, words)), content) if words else None
    if loose is None:
        return f"old_text does not occur in {path}; read the file again and copy the text to replace exactly"
    first, last = _line_of(content, loose.start()), _line_of(content, loose.end())
    where = f"line {first}" if first == last else f"lines {first}-{last}"
    message = (
        f"old_text does not occur in {path} exactly, but the same words with different whitespace "
        f"(indentation, tabs or line breaks) do, at {where}"
    )
    # Whole lines, so the indentation before the first word shows.
    begin = content.rfind("\n", 0, loose.start()) + 1
    end = content.find("\n", loose.end())
    lines = content[begin : len(content) if end < 0 else end]
    if len(lines) <= _SNIPPET_LIMIT:
        shown = normalize_newlines(lines).rstrip("\n")
        return f"{message}. Those lines read:\n{shown}\nCopy the text exactly from there."
    return f"{message}. Read those lines and copy the text exactly."
