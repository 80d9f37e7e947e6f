"""Observation masking: old tool results become placeholders naming the call; the rest is untouched."""

from __future__ import annotations

from hive_core.context import mask_boundary
from hive_core.context import mask_observations
from hive_core.context import masked_placeholder
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user


def tool_round(
    call_id: str, content: str, name: str = "read_file", arguments: str = '{"path":"a.py"}'
) -> list[Message]:
    return [
        Message("assistant", [ToolCallPart(call_id, name, arguments)]),
        Message("tool", [ToolResultPart(call_id, name, content)]),
    ]


BIG = "line\n" * 99 + "end"  # 498 characters, 100 lines


def test_the_placeholder_is_upstreams_then_names_the_call() -> None:
    call = ToolCallPart("c1", "read_file", '{"path":"a.py"}')

    assert masked_placeholder("a" * 12_345) == "[Masked: tool result, 12,345 chars, ~1 lines]"
    assert masked_placeholder(BIG, "read_file", call) == (
        '[Masked: read_file result, 498 chars, ~100 lines] Call read_file with {"path":"a.py"} again to see it.'
    )


def test_a_call_with_long_arguments_is_named_by_its_id() -> None:
    call = ToolCallPart("c9", "write_file", '{"content":"' + "w" * 300 + '"}')

    assert masked_placeholder("r" * 200, "write_file", call) == (
        "[Masked: write_file result, 200 chars, ~1 lines] Repeat call c9 (write_file) to see it."
    )


def conversation() -> list[Message]:
    return [
        user("first"),
        *tool_round("c1", BIG),
        *tool_round("c2", "s" * 199),  # below the minimum length
        user("second"),
        *tool_round("c3", BIG),
        user("third"),
        *tool_round("c4", BIG),
        user("fourth"),
        *tool_round("c5", BIG),
        Message("assistant", [TextPart("done")]),
    ]


def test_results_before_the_protected_turns_are_masked() -> None:
    messages = conversation()

    masked = mask_observations(messages)

    assert masked[2].tool_results[0].content == (
        '[Masked: read_file result, 498 chars, ~100 lines] Call read_file with {"path":"a.py"} again to see it.'
    )
    assert masked[2].tool_results[0].call_id == "c1"
    # Below the minimum length: untouched (the same object).
    assert masked[4] is messages[4]
    # The last three user turns ("second" onwards) are protected.
    assert masked[5:] == messages[5:]
    assert all(a is b for a, b in zip(masked[5:], messages[5:], strict=True))


def test_the_input_is_not_modified() -> None:
    messages = conversation()
    before = list(messages)

    mask_observations(messages)

    assert messages == before


def test_fewer_user_turns_than_protected_masks_nothing() -> None:
    messages = conversation()[:8]  # two user turns

    assert mask_boundary(messages) == 0
    assert mask_boundary(conversation()[:11]) == 0  # three: all protected
    assert mask_observations(messages) == messages


def test_protected_rounds_mask_older_rounds_inside_one_turn() -> None:
    messages = [user("only turn"), *tool_round("c1", BIG), *tool_round("c2", BIG), *tool_round("c3", BIG)]

    masked = mask_observations(messages, protected_rounds=2)

    assert masked[2].tool_results[0].content.startswith("[Masked: read_file result, 498 chars, ~100 lines]")
    assert masked[3:] == messages[3:]


def test_protected_tokens_mask_results_beyond_the_newest_tokens() -> None:
    messages = [user("only turn"), *tool_round("c1", BIG), *tool_round("c2", BIG), *tool_round("c3", BIG)]

    # Each result estimates to 125 tokens: 250 keeps the newest two.
    masked = mask_observations(messages, protected_tokens=250)

    assert masked[2].tool_results[0].content.startswith("[Masked:")
    assert masked[3:] == messages[3:]
    assert mask_observations(messages, protected_tokens=249)[4].tool_results[0].content.startswith("[Masked:")


def test_an_unknown_call_id_falls_back_to_the_results_name() -> None:
    messages = [
        Message("tool", [ToolResultPart("lost", "grep_files", BIG)]),
        user("a"),
        user("b"),
        user("c"),
    ]

    masked = mask_observations(messages)

    assert masked[0].tool_results[0].content == "[Masked: grep_files result, 498 chars, ~100 lines]"
