"""Anchored compaction: a structured state block (goal, files, errors, decisions) kept across compactions.

A summary is rewritten at every compaction, from the previous one and what was pruned since, so a detail the model
leaves out once is gone for good. The anchored state is merged instead: each compaction adds the files the pruned
calls touched, the errors their results reported and the decisions the summary states (its ``Decision:`` lines)
to what earlier compactions kept, and it is sent, within ``maxAnchorStateChars``, beside the summary. Past the limit
the oldest entries go first: errors, then files, then decisions; the goal is cut last.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Final

from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system

from .reminder import GOAL_MAX_CHARS

__all__ = ["ANCHOR_HEADING", "DECISION_PREFIX", "AnchorState"]

ANCHOR_HEADING: Final = "[Anchored state] (kept across compactions)"
"""The first line of the anchored state message."""
DECISION_PREFIX: Final = "Decision: "
"""How a summary line stating a decision begins (the summary request asks for it)."""

_PATH_ARGUMENTS: Final = ("path", "file_path", "source", "destination")
"""The call arguments that name a file or folder."""
_ERROR_MAX_CHARS: Final = 200
"""An error is kept as its first line, cut to this many characters."""
_DECISION_LINE: Final = re.compile(
    r"^\s*(?:[-*]\s*)?decision:\s*(?P<text>\S.*?)\s*$", re.IGNORECASE | re.MULTILINE
)


@dataclass
class AnchorState:
    """What the anchored state holds; :meth:`update` merges a compaction into it, :meth:`message` renders it."""

    goal: str | None = None
    """The task being worked on when the state was last updated."""
    files: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    """Each file or folder the pruned calls named → the tools that named it, oldest first."""
    errors: list[str] = field(default_factory=list[str])
    """``tool: first line`` of each failed pruned call, oldest first."""
    decisions: list[str] = field(default_factory=list[str])
    """The decisions the summaries stated, oldest first."""

    def update(self, pruned: Sequence[Message], *, goal: str | None, summary: str | None) -> None:
        """Merge one compaction: the ``pruned`` messages, the current ``goal`` and the new ``summary`` (if any)."""
        if goal:
            self.goal = goal
        for message in pruned:
            for part in message.parts:
                if isinstance(part, ToolCallPart):
                    for key in _PATH_ARGUMENTS:
                        value = (part.arguments or {}).get(key)
                        if isinstance(value, str) and value:
                            tools = self.files.pop(value, [])  # re-inserted: the latest touched is the newest
                            self.files[value] = [*tools, part.name] if part.name not in tools else tools
                elif isinstance(part, ToolResultPart) and part.is_error:
                    first = (part.content.strip().splitlines() or [""])[0][:_ERROR_MAX_CHARS]
                    _append_new(self.errors, f"{part.name}: {first}")
        for match in _DECISION_LINE.finditer(summary or ""):
            _append_new(self.decisions, match["text"])

    def render(self, max_chars: int) -> str:
        """The block as text, at most ``max_chars`` characters: the oldest entries dropped first."""
        files = list(self.files.items())
        errors, decisions = list(self.errors), list(self.decisions)
        goal = self.goal or ""
        if len(goal) > GOAL_MAX_CHARS:
            goal = goal[: GOAL_MAX_CHARS - 3] + "..."
        while True:
            text = _layout(goal, files, errors, decisions)
            if len(text) <= max_chars:
                return text
            if errors:
                errors.pop(0)
            elif files:
                files.pop(0)
            elif decisions:
                decisions.pop(0)
            elif goal:
                goal = (
                    goal[: max(len(goal) - (len(text) - max_chars) - 3, 0)] + "..." if len(goal) > 3 else ""
                )
            else:
                return text[:max_chars]

    def message(self, max_chars: int) -> Message:
        """The system message sent beside the summary."""
        return system(self.render(max_chars))


def _append_new(entries: list[str], entry: str) -> None:
    if entry in entries:
        entries.remove(entry)  # seen again: it becomes the newest, the last to be dropped
    entries.append(entry)


def _layout(goal: str, files: list[tuple[str, list[str]]], errors: list[str], decisions: list[str]) -> str:
    lines = [ANCHOR_HEADING]
    if goal:
        lines.append(f"Goal: {goal}")
    if files:
        lines.append("Files:")
        lines += [f"- {path} ({', '.join(tools)})" for path, tools in files]
    if errors:
        lines.append("Errors:")
        lines += [f"- {error}" for error in errors]
    if decisions:
        lines.append("Decisions:")
        lines += [f"- {decision}" for decision in decisions]
    return "\n".join(lines)
