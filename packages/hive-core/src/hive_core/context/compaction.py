"""When to compact and what to prune: upstream's token trigger and planner, with budgets clamped to the window.

Upstream's ``protectRecentTokens`` (40,000) and ``minimumPruneTokens`` (20,000) are absolute; in a window of a
few thousand tokens its trigger could never fire. Here each is capped at a share of the window
(:data:`PROTECT_SHARE`, :data:`PRUNE_SHARE`), and the trigger leaves at least :data:`HEADROOM_SHARE` of the window
free, so compaction always comes before the token-budget backstop (which refuses above 80%).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from hive_core.messages import Message

from .grouping import Group
from .grouping import group_messages
from .settings import CompactionSettings

__all__ = [
    "HEADROOM_SHARE",
    "MIN_SUMMARY_TOKENS",
    "PROTECT_SHARE",
    "PRUNE_SHARE",
    "SETTLE_SHARE",
    "SUMMARY_FLOOR",
    "Budgets",
    "Plan",
    "budgets_for",
    "plan_compaction",
    "should_compact",
]

PROTECT_SHARE: Final = 0.5
"""``protect_recent_tokens`` is capped at this share of the window."""
PRUNE_SHARE: Final = 0.25
"""``minimum_prune_tokens`` is capped at this share of the window."""
HEADROOM_SHARE: Final = 0.25
"""The token trigger fires at the latest when less than this share of the window is free."""
SETTLE_SHARE: Final = 0.2
"""A compaction lands at least this share of the window below the trigger point, so the requests that follow
do not compact again at once (with the defaults: the trigger at 75% of the window, the target at most 55%)."""
SUMMARY_FLOOR: Final = 100
"""Tokens always left for the summary when deciding which important groups to keep (upstream's)."""
MIN_SUMMARY_TOKENS: Final = 32
"""Room for a summary below this is not worth a request: the ``[N earlier messages omitted]`` marker stands in."""


class Budgets(msgspec.Struct, frozen=True):
    """The figures compaction works with for one window, in tokens."""

    window: int
    """The window."""
    protect: int
    """The recent tail always kept."""
    minimum_prune: int
    """The least worth pruning."""
    target: int
    """What a compaction aims at."""
    headroom: int
    """The free space below which the token trigger fires."""


def budgets_for(settings: CompactionSettings, window: int) -> Budgets:
    """The clamped budgets of ``settings`` for ``window``."""
    protect = min(settings.protect_recent_tokens, int(window * PROTECT_SHARE))
    headroom = max(protect // 2, int(window * HEADROOM_SHARE))
    settled = window - headroom - int(window * SETTLE_SHARE)
    return Budgets(
        window=window,
        protect=protect,
        minimum_prune=min(settings.minimum_prune_tokens, int(window * PRUNE_SHARE)),
        target=min(int(window * min(settings.target_ratio, 1.0)), settled),
        headroom=headroom,
    )


def should_compact(current: int, budgets: Budgets, settings: CompactionSettings) -> bool:
    """Whether a request of ``current`` tokens triggers compaction.

    Token-based: less than the headroom free, and at least ``minimum_prune`` beyond the protected tail. Legacy
    (``use_token_based_compaction`` off): ``current >= threshold_percentage * window``.
    """
    if not settings.use_token_based_compaction:
        return current >= settings.threshold_percentage * budgets.window
    return budgets.window - current < budgets.headroom and current - budgets.protect >= budgets.minimum_prune


class Plan(msgspec.Struct, frozen=True):
    """What one compaction prunes."""

    pruned: list[Group]
    """The groups replaced by the summary, in order."""
    summary_tokens: int
    """The most tokens the summary message may take (below :data:`MIN_SUMMARY_TOKENS`: no summary is asked
    for; the marker stands in)."""

    @property
    def pruned_messages(self) -> int:
        """How many messages the summary replaces."""
        return sum(g.size for g in self.pruned)


def plan_compaction(
    messages: Sequence[Message],
    tokens: Sequence[int],
    settings: CompactionSettings,
    budgets: Budgets,
    *,
    fixed: int = 0,
    force: bool = False,
) -> Plan | None:
    """The groups of ``messages`` to prune so the request lands at or under the target, or ``None`` when
    nothing should be pruned. ``tokens[i]`` is ``messages[i]``'s estimate; ``fixed`` what the request costs
    besides (overhead, instructions, tools). ``force`` prunes whatever may be pruned even when it would fit.

    Upstream's algorithm: the protected tail is whole groups from the newest back while they fit ``protect``
    (the newest always; ``protect`` capped as commented below); system messages are always kept; of the older groups, the important ones (user
    messages, and tool groups calling a ``protected_tool_outputs`` tool) are kept unless the budget forces them
    out, oldest tool groups first, then oldest user messages.
    """
    groups = group_messages(messages)
    if not groups:
        return None
    cost = [sum(tokens[g.start : g.end]) for g in groups]
    total = fixed + sum(cost)
    if not force and total <= budgets.target:
        return None
    # The tail may take at most half of what the target leaves once the fixed costs, the system messages and
    # the summary are paid (tool definitions can fill a small window), and when forced at most half of the
    # messages, so a forced compaction always has something to prune. System messages are kept wherever they
    # are and do not count against it.
    systems = sum(c for g, c in zip(groups, cost, strict=True) if g.kind == "system")
    protect = min(budgets.protect, max((budgets.target - fixed - systems - SUMMARY_FLOOR) // 2, 0))
    if force:
        protect = min(protect, (total - fixed - systems) // 2)
    tail_start = len(groups) - 1
    tail = cost[-1]
    spent = 0 if groups[-1].kind == "system" else cost[-1]
    while tail_start > 0:
        previous = tail_start - 1
        extra = 0 if groups[previous].kind == "system" else cost[previous]
        if spent + extra > protect:
            break
        tail_start, tail, spent = previous, tail + cost[previous], spent + extra
    older = range(tail_start)
    system = sum(cost[i] for i in older if groups[i].kind == "system")
    candidates = [i for i in older if groups[i].kind != "system"]
    if not candidates:
        return None
    budget = budgets.target - fixed - system - tail
    prunable = sum(cost[i] for i in candidates)
    if not force and prunable <= budget:
        return None
    # Too little to be worth a summary, unless the request is already inside the trigger's headroom (then
    # any pruning helps: the fixed costs may be what fills the window).
    if not force and prunable < budgets.minimum_prune and total <= budgets.window - budgets.headroom:
        return None
    protected = {name.casefold() for name in settings.protected_tool_outputs}
    tools = [i for i in candidates if groups[i].kind == "tools" and groups[i].tool_names & protected]
    users = [i for i in candidates if groups[i].kind == "user"]
    kept = set(tools) | set(users)
    kept_tokens = sum(cost[i] for i in kept)
    for i in tools + users:  # demotion order: the oldest important tool groups, then the oldest user messages
        if kept_tokens <= budget - SUMMARY_FLOOR:
            break
        kept.discard(i)
        kept_tokens -= cost[i]
    pruned = [groups[i] for i in candidates if i not in kept]
    if not pruned:
        return None
    room = budget - kept_tokens
    if room < 0:
        # The target cannot be reached (the tail alone is too large): the summary may still take what is left
        # below the trigger point, rather than give way to the marker.
        room = budgets.window - budgets.headroom - fixed - system - tail - kept_tokens
    return Plan(pruned, max(min(budgets.target // 4, room), 0))
