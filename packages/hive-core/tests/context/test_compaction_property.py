"""Property: over random histories, compaction keeps groups whole and in order, keeps the newest group, keeps
every call with its result, and lands at or under the target whenever that is possible."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from collections.abc import Sequence

import anyio
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.context import budgets_for
from hive_core.context import estimate_message_tokens
from hive_core.context import group_messages
from hive_core.context import omitted_marker
from hive_core.context import should_compact
from hive_core.context.tokens import CONVERSATION_OVERHEAD
from hive_core.failures import ChatError
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user

TOOLS = ("read_file", "shell", "grep_files", "write_file")


class Unreachable:
    """A model whose every request fails: compaction falls back to the marker, whose size is known."""

    capabilities = Capabilities()

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        raise ChatError("unreachable")
        yield  # pragma: no cover - makes this an async generator


class Verbose:
    """A model that answers every summary request at length: the summary must be cut to its room."""

    capabilities = Capabilities()

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        yield TextUpdate("summary " * 5000)
        yield FinishUpdate("stop")


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    messages = [system("s" * draw(st.integers(0, 400)))] if draw(st.booleans()) else []
    for index in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["user", "assistant", "tools", "tools"]))
        size = draw(st.integers(0, 2400))
        if kind == "user":
            messages.append(user(f"u{index} " + "u" * size))
        elif kind == "assistant":
            messages.append(Message("assistant", [TextPart(f"a{index} " + "a" * size)]))
        else:
            names = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=3))
            ids = [f"c{index}_{i}" for i in range(len(names))]
            messages.append(
                Message("assistant", [ToolCallPart(i, n, "{}") for i, n in zip(ids, names, strict=True)])
            )
            if draw(st.booleans()):  # one tool message with every result, or one message a result
                messages.append(
                    Message(
                        "tool", [ToolResultPart(i, n, "r" * size) for i, n in zip(ids, names, strict=True)]
                    )
                )
            else:
                messages += [
                    Message("tool", [ToolResultPart(i, n, "r" * size)])
                    for i, n in zip(ids, names, strict=True)
                ]
    return messages


@settings(max_examples=300, deadline=None)
@given(
    messages=histories(),
    window=st.integers(300, 20_000),
    protect=st.integers(0, 40_000),
    minimum=st.integers(0, 20_000),
    ratio=st.floats(0.3, 0.9),
    force=st.booleans(),
    verbose=st.booleans(),
)
def test_compaction_keeps_groups_order_pairs_and_the_target(
    messages: list[Message], window: int, protect: int, minimum: int, ratio: float, force: bool, verbose: bool
) -> None:
    compaction = CompactionSettings(
        protect_recent_tokens=protect,
        minimum_prune_tokens=minimum,
        target_ratio=ratio,
        enable_observation_masking=False,
        enable_tool_result_compaction=False,
        goal_reminder=False,
    )
    before = list(messages)
    manager = ContextManager(compaction, window=window)

    prepared = anyio.run(
        functools.partial(
            manager.prepare,
            messages,
            client=Verbose() if verbose else Unreachable(),
            options=ChatOptions(),
            force=force,
        )
    )
    assert messages == before  # never mutated

    # Every message sent is one of the conversation's (the same object), in order, or the marker.
    position = {id(m): i for i, m in enumerate(messages)}
    body = [m for m in prepared.messages if id(m) in position]
    inserted = [m for m in prepared.messages if id(m) not in position]
    indices = [position[id(m)] for m in body]
    assert indices == sorted(indices)
    report = prepared.compaction
    if report is None:
        assert inserted == []
    else:
        marker = system(omitted_marker(report.messages_before - report.messages_after))
        if report.summarized:
            assert len(inserted) == 1
            assert inserted[0].text.startswith("[Previous conversation summary]: summary summary")
        else:
            assert inserted == [marker]
        assert report.messages_after == len(body)

    # Groups move whole; the newest group is always sent.
    kept = set(indices)
    groups = group_messages(messages)
    for group in groups:
        members = {i in kept for i in range(group.start, group.end)}
        assert len(members) == 1, f"group {group} split"
    assert all(i in kept for i in range(groups[-1].start, groups[-1].end))

    # Every call sent has its result sent, and every result its call.
    called = {c.id for m in body for c in m.tool_calls}
    answered = {r.call_id for m in body for r in m.tool_results}
    assert called == answered

    # At or under the target when possible: when the system messages, the newest group and the marker fit.
    budgets = budgets_for(compaction, window)
    systems = sum(estimate_message_tokens(messages[g.start]) for g in groups if g.kind == "system")
    newest = sum(estimate_message_tokens(m) for m in messages[groups[-1].start :])
    floor = CONVERSATION_OVERHEAD + systems + newest + estimate_message_tokens(system(omitted_marker(99999)))
    fired = force or should_compact(
        CONVERSATION_OVERHEAD + sum(map(estimate_message_tokens, messages)), budgets, compaction
    )
    if report is not None or (force and floor <= budgets.target):
        assert fired
    if fired and floor <= budgets.target and (force or report is not None):
        assert prepared.estimated_tokens <= budgets.target
