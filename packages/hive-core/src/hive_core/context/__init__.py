"""The context engine: keeps every request inside the model's context window.

Before each model request the loop asks a :class:`ContextManager` to :meth:`~ContextManager.prepare` the
conversation: long tool results are cut to their head and tail, old ones masked with placeholders, and when the
window fills the older history is compacted into a summary the model writes. Only what is sent is reduced; the
conversation (and the stored transcript) keeps everything.

The pieces are pure functions, exported for hosts and tests: :func:`truncate_tool_result`,
:func:`mask_observations`, :func:`group_messages`, :func:`should_compact`, :func:`plan_compaction`.
"""

from .compaction import Budgets
from .compaction import Plan
from .compaction import budgets_for
from .compaction import plan_compaction
from .compaction import should_compact
from .grouping import Group
from .grouping import drop_unpaired
from .grouping import group_messages
from .manager import ContextManager
from .masking import mask_boundary
from .masking import mask_observations
from .masking import masked_placeholder
from .reminder import goal_reminder
from .report import CompactionReport
from .report import PreparedRequest
from .settings import CompactionSettings
from .summary import SUMMARY_PREFIX
from .summary import omitted_marker
from .summary import summarize
from .tokens import estimate_message_tokens
from .tokens import estimate_tokens
from .tokens import estimate_tool_tokens
from .truncation import truncate_tool_result
from .window import DEFAULT_CONTEXT_WINDOW
from .window import ContextWindow
from .window import ContextWindowSource
from .window import resolve_window

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "SUMMARY_PREFIX",
    "Budgets",
    "CompactionReport",
    "CompactionSettings",
    "ContextManager",
    "ContextWindow",
    "ContextWindowSource",
    "Group",
    "Plan",
    "PreparedRequest",
    "budgets_for",
    "drop_unpaired",
    "estimate_message_tokens",
    "estimate_tokens",
    "estimate_tool_tokens",
    "goal_reminder",
    "group_messages",
    "mask_boundary",
    "mask_observations",
    "masked_placeholder",
    "omitted_marker",
    "plan_compaction",
    "resolve_window",
    "should_compact",
    "summarize",
    "truncate_tool_result",
]
