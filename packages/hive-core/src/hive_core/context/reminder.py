"""The goal reminder: the current task (the latest user message), restated once a conversation is long."""

from __future__ import annotations

from typing import Final

from hive_core.messages import Message, system

__all__ = ["GOAL_MAX_CHARS", "REMINDER_AFTER", "goal_reminder"]

GOAL_MAX_CHARS: Final = 500
"""A longer goal is cut to 497 characters and ``...``."""
REMINDER_AFTER: Final = 6
"""The reminder appears once the conversation holds this many non-system messages."""


def goal_reminder(goal: str) -> Message:
    """``[REMINDER] Current goal: {goal}`` as a system message, the goal cut to :data:`GOAL_MAX_CHARS`."""
    if len(goal) > GOAL_MAX_CHARS:
        goal = goal[: GOAL_MAX_CHARS - 3] + "..."
    return system(f"[REMINDER] Current goal: {goal}")
