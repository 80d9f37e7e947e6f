"""The goal reminder: the current task (the latest user message), restated once the turn working on it is long.

Providers fold system messages into the system prompt, so a reminder that changed with every turn would change the
prompt's start at every turn and defeat prompt caching (a provider's cache, llama.cpp's reuse of the evaluated
prefix). It therefore appears only once a task has many messages after it (a turn of several tool rounds, where
the request has scrolled away), and stays the same until the next task.
"""

from __future__ import annotations

from typing import Final

from hive_core.messages import Message
from hive_core.messages import system

__all__ = ["GOAL_MAX_CHARS", "REMINDER_AFTER", "goal_reminder"]

GOAL_MAX_CHARS: Final = 500
"""A longer goal is cut to 497 characters and ``...``."""
REMINDER_AFTER: Final = 6
"""The reminder appears once this many non-system messages follow the current task's user message."""


def goal_reminder(goal: str) -> Message:
    """``[REMINDER] Current goal: {goal}`` as a system message, the goal cut to :data:`GOAL_MAX_CHARS`."""
    if len(goal) > GOAL_MAX_CHARS:
        goal = goal[: GOAL_MAX_CHARS - 3] + "..."
    return system(f"[REMINDER] Current goal: {goal}")
