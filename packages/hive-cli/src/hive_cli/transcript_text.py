"""A session's transcript as text: ``hive sessions show`` prints all of it, a resumed session its last exchanges.

User messages start ``you:`` (never ``>``, the prompt's own mark), the assistant's text follows as written, and
each tool call is one line (``→ name arguments``) with its result as one line under it (``← first line (N
lines)``, or ``✗`` for a failure).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .session_documents import TranscriptItem

__all__ = ["RECAP_TURNS", "recent_exchanges", "transcript_lines"]

RECAP_TURNS: Final = 3
"""The user turns a resumed session reprints."""
_RECAP_CHARS: Final = 600
"""A message longer than this is cut in a recap (``sessions show`` prints it whole)."""


def _indented(text: str, first: str, rest: str) -> list[str]:
    lines = text.splitlines() or [""]
    return [first + lines[0], *(rest + line for line in lines[1:])]


def transcript_lines(items: Sequence[TranscriptItem], *, cut: bool = False) -> list[str]:
    """The lines of ``items``; with ``cut``, long messages cut to a few hundred characters (a recap)."""
    lines: list[str] = []
    for item in items:
        text = item.text
        if cut and len(text) > _RECAP_CHARS:
            text = text[: _RECAP_CHARS - 3] + "..."
        match item.kind:
            case "user":
                if lines:
                    lines.append("")
                lines.extend(_indented(text, "you: ", "     "))
            case "assistant":
                lines.extend(_indented(text, "", ""))
            case "tool_call":
                lines.append(f"  → {item.tool} {text}")
            case "tool_result":
                mark = "✗" if item.is_error else "←"
                size = f" ({item.lines} lines)" if item.lines and item.lines > 1 else ""
                lines.append(f"    {mark} {text or '(empty)'}{size}")
    return lines


def recent_exchanges(items: Sequence[TranscriptItem], turns: int = RECAP_TURNS) -> list[TranscriptItem]:
    """The items of the last ``turns`` user turns (from the ``turns``-th last user message on)."""
    starts = [index for index, item in enumerate(items) if item.kind == "user"]
    if len(starts) <= turns:
        return list(items)
    return list(items[starts[-turns] :])
