"""The trigger, the clamped budgets and the planner."""

from __future__ import annotations

import msgspec
import pytest

from hive_core.context import Budgets
from hive_core.context import CompactionSettings
from hive_core.context import budgets_for
from hive_core.context import drop_unpaired
from hive_core.context import group_messages
from hive_core.context import plan_compaction
from hive_core.context import should_compact
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user

DEFAULTS = CompactionSettings()


def test_large_windows_keep_upstreams_figures() -> None:
    # Upstream's protect and prune figures; the target settles 20% of the window below the trigger (75%).
    assert budgets_for(DEFAULTS, 200_000) == Budgets(
        window=200_000, protect=40_000, minimum_prune=20_000, target=110_000, headroom=50_000
    )
    # A lower targetRatio is honoured as it is.
    low = msgspec.structs.replace(DEFAULTS, target_ratio=0.4)
    assert budgets_for(low, 200_000).target == 80_000


@pytest.mark.parametrize(
    ("window", "protect", "minimum_prune", "target", "headroom"),
    [(2048, 1024, 512, 1127, 512), (8192, 4096, 2048, 4506, 2048), (32_768, 16_384, 8192, 18_023, 8192)],
)
def test_small_windows_clamp_the_budgets(
    window: int, protect: int, minimum_prune: int, target: int, headroom: int
) -> None:
    assert budgets_for(DEFAULTS, window) == Budgets(window, protect, minimum_prune, target, headroom)


def test_the_token_trigger() -> None:
    budgets = budgets_for(DEFAULTS, 200_000)
    # Fires when less than the headroom is free and enough lies beyond the protected tail.
    assert not should_compact(150_000, budgets, DEFAULTS)  # 50,000 free: not less than the headroom
    assert should_compact(150_001, budgets, DEFAULTS)
    # Upstream's own rule (max - current < protect / 2) would fire only at 180,001: it is never later here.
    assert should_compact(180_001, budgets, DEFAULTS)


def test_the_token_trigger_needs_enough_to_prune() -> None:
    settings = CompactionSettings(protect_recent_tokens=1000, minimum_prune_tokens=1000)
    budgets = Budgets(window=2000, protect=1000, minimum_prune=1000, target=1400, headroom=500)
    assert not should_compact(1999, budgets, settings)  # 999 beyond the tail < 1000
    budgets = Budgets(window=2000, protect=900, minimum_prune=1000, target=1400, headroom=500)
    assert should_compact(1900, budgets, settings)


def test_a_small_window_compacts() -> None:
    budgets = budgets_for(DEFAULTS, 2048)
    assert not should_compact(1536, budgets, DEFAULTS)
    assert should_compact(1537, budgets, DEFAULTS)


def test_the_legacy_trigger() -> None:
    settings = CompactionSettings(use_token_based_compaction=False)
    budgets = budgets_for(settings, 10_000)
    assert not should_compact(9199, budgets, settings)
    assert should_compact(9200, budgets, settings)


# -- grouping ----------------------------------------------------------------------------------------------


def calls(*names: str, prefix: str = "c") -> Message:
    return Message("assistant", [ToolCallPart(f"{prefix}{i}", n, "{}") for i, n in enumerate(names)])


def results(*names: str, prefix: str = "c") -> Message:
    return Message("tool", [ToolResultPart(f"{prefix}{i}", n, "r" * 40) for i, n in enumerate(names)])


def test_a_call_and_its_results_form_one_group() -> None:
    messages = [
        system("s"),
        user("u"),
        calls("read_file", "Shell"),
        results("read_file", "Shell"),
        Message("assistant", [TextPart("a")]),
        Message("tool", [ToolResultPart("nobody", "x", "r")]),
    ]

    groups = group_messages(messages)

    assert [(g.start, g.end, g.kind) for g in groups] == [
        (0, 1, "system"),
        (1, 2, "user"),
        (2, 4, "tools"),
        (4, 5, "assistant"),
        (5, 6, "orphan"),
    ]
    assert groups[2].tool_names == frozenset({"read_file", "shell"})


def test_unpaired_tool_content_is_dropped() -> None:
    messages = [
        Message("tool", [ToolResultPart("gone", "x", "r")]),
        Message("assistant", [TextPart("t"), ToolCallPart("lost", "x", "{}")]),
        user("u"),
        calls("read_file"),
    ]

    assert drop_unpaired(messages) == [Message("assistant", [TextPart("t")]), user("u"), calls("read_file")]


# -- planning ----------------------------------------------------------------------------------------------


def test_nothing_is_pruned_under_the_target() -> None:
    messages = [user("a"), user("b")]
    assert plan_compaction(messages, [10, 10], DEFAULTS, Budgets(1000, 500, 100, 700, 250)) is None


def test_important_groups_are_kept_and_the_rest_pruned() -> None:
    messages = [
        system("s"),
        user("goal"),  # important
        calls("read_file", prefix="a"),  # protected tool output: important
        results("read_file", prefix="a"),
        calls("shell", prefix="b"),  # not important
        results("shell", prefix="b"),
        Message("assistant", [TextPart("chatter")]),  # not important
        user("latest"),
    ]
    tokens = [10, 10, 50, 50, 100, 200, 300, 10]
    budgets = Budgets(window=1000, protect=10, minimum_prune=50, target=700, headroom=250)

    plan = plan_compaction(messages, tokens, DEFAULTS, budgets)

    assert plan is not None
    assert [(g.start, g.end) for g in plan.pruned] == [(4, 6), (6, 7)]
    assert plan.pruned_messages == 3


def test_the_upstream_casing_bug_stays_out() -> None:
    messages = [
        user("goal"),
        calls("READ_FILE"),
        results("READ_FILE"),
        calls("shell", prefix="x"),
        results("shell", prefix="x"),
        user("latest"),
    ]
    tokens = [10, 100, 100, 300, 300, 10]
    budgets = Budgets(window=1000, protect=10, minimum_prune=50, target=600, headroom=250)

    plan = plan_compaction(messages, tokens, DEFAULTS, budgets)

    assert plan is not None
    assert [(g.start, g.end) for g in plan.pruned] == [(3, 5)]  # read_file matched case-insensitively: kept


def test_important_tool_groups_are_demoted_before_user_messages_oldest_first() -> None:
    messages = [
        user("one"),
        calls("read_file", prefix="a"),
        results("read_file", prefix="a"),
        user("two"),
        calls("grep_files", prefix="b"),
        results("grep_files", prefix="b"),
        user("latest"),
    ]
    tokens = [50, 100, 100, 50, 100, 100, 10]
    # budget = 560 - 10 (tail) = 550; everything older costs 500 but the 100-token summary floor leaves 450:
    # the oldest important tool group goes first.
    budgets = Budgets(window=1000, protect=10, minimum_prune=50, target=560, headroom=250)

    plan = plan_compaction(messages, tokens, DEFAULTS, budgets, force=True)

    assert plan is not None
    assert [(g.start, g.end) for g in plan.pruned] == [(1, 3)]
    assert plan.summary_tokens == 140  # target / 4 = 140 < what is left (550 - 300 = 250)


def test_a_prunable_part_below_the_minimum_is_kept() -> None:
    messages = [Message("assistant", [TextPart("x")]), user("latest")]
    budgets = Budgets(window=1000, protect=10, minimum_prune=500, target=100, headroom=250)

    assert plan_compaction(messages, [400, 10], DEFAULTS, budgets) is None
    assert plan_compaction(messages, [400, 10], DEFAULTS, budgets, force=True) is not None
    # Inside the headroom (here through the fixed costs), any pruning helps.
    assert plan_compaction(messages, [400, 10], DEFAULTS, budgets, fixed=400) is not None


def test_the_newest_group_is_always_protected() -> None:
    messages = [Message("assistant", [TextPart("x")]), calls("shell"), results("shell")]
    budgets = Budgets(window=1000, protect=10, minimum_prune=1, target=100, headroom=250)

    plan = plan_compaction(messages, [300, 400, 400], DEFAULTS, budgets)

    assert plan is not None
    assert [(g.start, g.end) for g in plan.pruned] == [(0, 1)]
