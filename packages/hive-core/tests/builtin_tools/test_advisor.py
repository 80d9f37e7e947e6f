"""The advisor's transcript: every role under its label, calls and results as arrows, long results cut, reasoning
left out."""

from __future__ import annotations

from hive_core.builtin_tools.advisor import render_transcript
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user


def test_the_transcript_labels_roles_and_leaves_reasoning_out() -> None:
    conversation = [
        system("Project rules."),
        user("Fix the bug."),
        Message(
            "assistant",
            [
                ThinkingPart("secret chain of thought", "sig"),
                TextPart("Looking."),
                ToolCallPart("c1", "grep_files", '{"pattern": "bug"}', {"pattern": "bug"}),
                ToolCallPart("c2", "read_file", "{not json", None, "bad"),
            ],
        ),
        Message(
            "tool",
            [ToolResultPart("c1", "grep_files", "a.py:3"), ToolResultPart("c2", "read_file", "y" * 10)],
        ),
        Message("assistant", [ThinkingPart("only thinking")]),
    ]
    text = render_transcript(conversation, instructions="Be careful.", max_result_chars=4)
    assert text == (
        "Here is the agent's conversation so far.\n\n"
        "[Agent instructions]\nBe careful.\n\n"
        "[Agent instructions]\nProject rules.\n\n"
        "[User]\nFix the bug.\n\n"
        '[Agent]\nLooking.\n-> calls grep_files({"pattern":"bug"})\n-> calls read_file({not json)\n\n'
        "[Tool results]\n<- a.py ... [2 more characters cut]\n<- yyyy ... [6 more characters cut]\n\n"
        "Review the work so far and advise the agent on what to do next."
    )
    assert "chain of thought" not in text
