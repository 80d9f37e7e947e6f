"""Anchored compaction: the state block (goal, files, errors, decisions) is built at a compaction, kept and merged
at the next one whatever the new summary leaves out, sent beside the summary, and held to its character limit."""

from __future__ import annotations

import json
from collections.abc import Sequence

import anyio
import pytest

from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.context import PreparedRequest
from hive_core.context.anchor import ANCHOR_HEADING
from hive_core.context.anchor import AnchorState
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user
from hive_core.testing import ScriptedChatClient
from hive_core.testing import reply

pytestmark = pytest.mark.anyio

WAIT = 10
WINDOW = 8192
ANCHORED = CompactionSettings(use_anchored_compaction=True)


def step(
    call_id: str, tool: str, arguments: dict[str, str], result: str, *, error: bool = False
) -> list[Message]:
    """One tool round and the assistant's words after it, padded so that compaction has something to prune."""
    call = ToolCallPart(call_id, tool, json.dumps(arguments), arguments)
    return [
        Message("assistant", [call]),
        Message("tool", [ToolResultPart(call_id, tool, result, is_error=error)]),
        Message("assistant", [TextPart(f"done with {call_id}: " + "a" * 300)]),
    ]


def first_part() -> list[Message]:
    return [
        system("You are hive."),
        user("Port the codec to msgspec and keep the tests green"),
        *step("c1", "read_file", {"path": "src/codec.py"}, "def encode(): ..."),
        *step("c2", "edit_file", {"path": "src/codec.py"}, "edited"),
        *step(
            "c3",
            "execute_command",
            {"command": "pytest"},
            "FAILED test_codec.py::test_round\nmore",
            error=True,
        ),
        *step("c4", "read_file", {"path": "tests/test_codec.py"}, "def test_round(): ..."),
        *step("c5", "read_file", {"path": "README.md"}, "# codec"),
    ]


def second_part() -> list[Message]:
    return [
        *step("c6", "write_file", {"path": "src/wire.py"}, "written"),
        *step("c7", "execute_command", {"command": "ruff check"}, "E501 line too long", error=True),
        *step("c8", "move_file", {"source": "src/old.py", "destination": "src/legacy.py"}, "moved"),
        *step("c9", "read_file", {"path": "CHANGELOG.md"}, "# Changelog"),
        *[
            message
            for i in range(10, 14)
            for message in step(f"c{i}", "execute_command", {"command": "ls"}, "ok")
        ],
    ]


def client(*summaries: str) -> ScriptedChatClient:
    return ScriptedChatClient(
        [reply(text) for text in summaries], capabilities=Capabilities(context_window=WINDOW)
    )


async def compact(
    manager: ContextManager, messages: Sequence[Message], chat: ScriptedChatClient
) -> PreparedRequest:
    with anyio.fail_after(WAIT):
        prepared = await manager.prepare(messages, client=chat, options=ChatOptions(), force=True)
    assert prepared.compaction is not None
    return prepared


async def test_two_compactions_keep_and_update_the_anchored_state() -> None:
    chat = client(
        "Ported encode.\nDecision: use msgspec structs for every message\nTests failed once.",
        "Wrote the wire module.\n- Decision: keep src/legacy.py importable",
    )
    manager = ContextManager(ANCHORED)
    conversation = first_part()

    first = await compact(manager, conversation, chat)

    # The summary request asks for the decisions on lines of their own.
    instructions = chat.requests[0][0][0].text
    assert "on a line of its own that begins with 'Decision: '" in instructions
    anchor, summary = first.messages[1], first.messages[2]
    assert summary.text.startswith("[Previous conversation summary]: Ported encode.")
    # The pruned calls' files and errors, the summary's decision; the read_file rounds are kept, not pruned.
    assert anchor == system(
        f"{ANCHOR_HEADING}\n"
        "Goal: Port the codec to msgspec and keep the tests green\n"
        "Files:\n- src/codec.py (edit_file)\n"
        "Errors:\n- execute_command: FAILED test_codec.py::test_round\n"
        "Decisions:\n- use msgspec structs for every message"
    )

    conversation += [user("Now add the wire module"), *second_part()]
    second = await compact(manager, conversation, chat)

    anchor = second.messages[1]
    assert second.messages[2].text.startswith("[Previous conversation summary]: Wrote the wire module.")
    # What the first compaction kept is still there, though the second summary says nothing of it; the second
    # one's files, errors and decisions come after it; the goal is the current task.
    assert anchor == system(
        f"{ANCHOR_HEADING}\n"
        "Goal: Now add the wire module\n"
        "Files:\n- src/codec.py (edit_file)\n- src/wire.py (write_file)\n- src/old.py (move_file)\n"
        "- src/legacy.py (move_file)\n"
        "Errors:\n- execute_command: FAILED test_codec.py::test_round\n- execute_command: E501 line too long\n"
        "Decisions:\n- use msgspec structs for every message\n- keep src/legacy.py importable"
    )
    # Exactly one anchored state is sent: the old one was replaced, not stacked.
    assert sum(m.text.startswith(ANCHOR_HEADING) for m in second.messages) == 1
    assert len(chat.requests) == 2


async def test_a_failed_summary_still_updates_the_anchored_state() -> None:
    chat = ScriptedChatClient([], capabilities=Capabilities(context_window=WINDOW))  # every summary fails
    prepared = await compact(ContextManager(ANCHORED), first_part(), chat)
    anchor = prepared.messages[1]
    assert anchor.text.startswith(ANCHOR_HEADING)
    assert "- src/codec.py (edit_file)" in anchor.text
    assert "Decisions:" not in anchor.text
    assert prepared.messages[2].text.endswith("earlier messages omitted]")


async def test_without_the_setting_no_anchored_state_is_sent() -> None:
    chat = client("Decision: nothing")
    prepared = await compact(ContextManager(), first_part(), chat)
    assert not any(m.text.startswith(ANCHOR_HEADING) for m in prepared.messages)
    assert "Decision: " not in chat.requests[0][0][0].text


def test_the_block_keeps_to_its_limit_dropping_the_oldest_errors_then_files_then_decisions() -> None:
    state = AnchorState()
    for i in range(3):
        pruned = step(f"c{i}", "read_file", {"path": f"f{i}.py"}, f"boom {i}", error=True)
        state.update(pruned, goal="the goal", summary=f"Decision: d{i}")
    whole = state.render(10_000)
    assert whole.count("\n- ") == 9

    no_errors = state.render(len(whole) - len("\n- read_file: boom 0"))
    assert "boom 0" not in no_errors
    assert "boom 1" in no_errors
    tight = state.render(len(ANCHOR_HEADING) + 60)
    assert len(tight) <= len(ANCHOR_HEADING) + 60
    assert "boom" not in tight
    assert "f0.py" not in tight
    assert "d2" in tight
    assert "Goal: the goal" in tight
    for limit in range(0, len(whole) + 1, 7):
        assert len(state.render(limit)) <= limit


async def test_the_limit_comes_from_the_settings() -> None:
    settings = CompactionSettings(use_anchored_compaction=True, max_anchor_state_chars=120)
    prepared = await compact(ContextManager(settings), first_part(), client("Decision: a\nDecision: b"))
    anchor = prepared.messages[1]
    assert len(anchor.text) <= 120
    assert anchor.text.startswith(ANCHOR_HEADING)
