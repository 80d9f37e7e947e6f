"""ACP ``session/update`` dicts to hive events: text, thoughts, tool calls upserted by id, plans, usage, the
prompt result (TurnMapper and ToolCallTracker, fed raw dicts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hive_protocol import Event
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import PlanStepStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.acp.update_types import MessageChunk
from hive_providers.backends.acp.update_types import Plan
from hive_providers.backends.acp.update_types import PlanEntry
from hive_providers.backends.acp.update_types import PromptResult
from hive_providers.backends.acp.update_types import ThoughtChunk
from hive_providers.backends.acp.update_types import ToolCallReport
from hive_providers.backends.acp.update_types import UsageUpdate
from hive_providers.backends.acp.update_types import chunk_text
from hive_providers.backends.acp.update_types import decode_result
from hive_providers.backends.acp.update_types import decode_update
from hive_providers.backends.acp.updates import TurnMapper
from hive_providers.backends.kit.tool_calls import OUTPUT_LIMIT
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.tool_calls import normalise_id
from hive_providers.backends.kit.tool_calls import tool_name
from hive_providers.backends.kit.wire import Unknown


class Turn:
    """One turn's mapper writing to a list."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self.events: list[Event] = []
        self.tracker = ToolCallTracker(self.events.append, taken=taken)
        self.mapper = TurnMapper(self.events.append, self.tracker, plan_id="plan-t")

    def feed(self, *updates: dict[str, Any]) -> None:
        for update in updates:
            self.mapper.on_update(decode_update(update))

    def end(self, result: dict[str, Any] | None = None, *, cancelled: bool = False) -> list[Event]:
        """Finish the turn, append its turn_end, check the stream and return it."""
        self.events.append(
            self.mapper.finish(None if result is None else decode_result(result), cancelled=cancelled)
        )
        assert verify(self.events) == []
        return self.events

    def of(self, kind: type[Any]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


def chunk(kind: str, text: object) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def call(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": call_id, **fields}


def update(call_id: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": call_id, **fields}


def text_content(text: str) -> list[dict[str, Any]]:
    return [{"type": "content", "content": {"type": "text", "text": text}}]


def test_message_and_thought_chunks_become_deltas_in_order() -> None:
    turn = Turn()
    turn.feed(
        chunk("agent_thought_chunk", "hmm"),
        chunk("agent_message_chunk", "Hel"),
        chunk("agent_message_chunk", "lo"),
    )
    events = turn.end({"stopReason": "end_turn"})
    assert events[:3] == [
        ThinkingDeltaEvent(content="hmm"),
        TextDeltaEvent(content="Hel"),
        TextDeltaEvent(content="lo"),
    ]
    assert turn.mapper.streamed_text
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"


def test_odd_shapes_are_ignored_not_fatal() -> None:
    turn = Turn()
    turn.feed(
        chunk("agent_message_chunk", 42),
        {"sessionUpdate": "agent_message_chunk", "content": "plain"},
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "..."}},
        {"sessionUpdate": "agent_message_chunk"},
        {"sessionUpdate": 7},
        {},
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "the prompt"}},
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "x"}]},
        {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
        {"sessionUpdate": "config_option_update", "configOptions": None},
        {"sessionUpdate": "session_info_update", "title": ["not", "text"]},
        {"sessionUpdate": "something_from_v3", "x": 1},
        {"sessionUpdate": "plan", "entries": "not a list"},
        {"sessionUpdate": "plan", "entries": [1, None, "x"]},
        {"sessionUpdate": "usage_update", "used": "many", "size": -1},
        {"sessionUpdate": "tool_call"},
        {"sessionUpdate": "tool_call", "toolCallId": 5},
        call("c1", title=3, kind=["execute"], status="weird", rawInput="ls", content="x", locations={}),
    )
    turn.mapper.on_update(decode_update("not a dict"))
    events = turn.end({"stopReason": 1, "usage": "lots"})
    assert turn.of(TextDeltaEvent) == [TextDeltaEvent(content="plain")]
    starts = turn.of(ToolStartEvent)
    assert starts == [ToolStartEvent(tool="tool", input="ls", call_id="c1")]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert end.input_tokens is None


def test_a_tool_call_starts_once_and_ends_with_its_text_content() -> None:
    turn = Turn()
    turn.feed(
        call("call_1", title="Run ls", kind="execute", status="pending", rawInput={"command": "ls"}),
        update("call_1", status="in_progress"),
        update("call_1", status="completed", content=text_content("a\nb")),
        update("call_1", status="completed", content=text_content("again")),
    )
    turn.end({"stopReason": "end_turn"})
    assert turn.of(ToolStartEvent) == [
        ToolStartEvent(tool="execute_command", input={"command": "ls"}, call_id="call_1")
    ]
    assert turn.of(ToolEndEvent) == [
        ToolEndEvent(tool="execute_command", success=True, output="a\nb", call_id="call_1")
    ]


def test_update_before_create_creates_the_call() -> None:
    turn = Turn()
    turn.feed(
        update("gem_1", status="in_progress", title="ReadFile", kind="read", rawInput={"path": "/p/a.txt"}),
        call("gem_1", title="ReadFile", kind="read", status="in_progress"),
        update("gem_1", status="failed", rawOutput={"error": "no such file"}),
    )
    turn.end({"stopReason": "end_turn"})
    assert turn.of(ToolStartEvent) == [
        ToolStartEvent(tool="read_file", input={"path": "/p/a.txt"}, call_id="gem_1")
    ]
    [end] = turn.of(ToolEndEvent)
    assert end.success is False
    assert end.output == '{"error": "no such file"}'


def test_a_re_announced_id_merges_into_one_call() -> None:
    turn = Turn()
    turn.feed(
        call("cb_1", title="Write", kind="edit", status="pending"),
        call("cb_1", title="Write a.txt", kind="edit", status="pending", rawInput={"path": "a.txt"}),
        update(
            "cb_1",
            status="completed",
            content=[{"type": "diff", "path": "/p/a.txt", "oldText": None, "newText": "x\ny"}],
        ),
    )
    turn.end({"stopReason": "end_turn"})
    assert len(turn.of(ToolStartEvent)) == 1
    [end] = turn.of(ToolEndEvent)
    assert end.output == "created /p/a.txt (2 lines)"
    assert turn.tracker.calls[0].title == "Write a.txt"


def test_prefixed_ids_match_while_running_and_stay_distinct_after() -> None:
    turn = Turn()
    turn.feed(
        call("0:call_x", title="Shell", kind="execute", rawInput={"command": "ls"}),
        update("call_x", status="completed", content=text_content("one")),
        call("1:call_x", title="Shell", kind="execute", rawInput={"command": "pwd"}),
        update("1:call_x", status="completed", content=text_content("two")),
    )
    turn.end({"stopReason": "end_turn"})
    assert [start.call_id for start in turn.of(ToolStartEvent)] == ["0:call_x", "1:call_x"]
    assert [(end.call_id, end.output) for end in turn.of(ToolEndEvent)] == [
        ("0:call_x", "one"),
        ("1:call_x", "two"),
    ]
    assert normalise_id("12:call_x") == "call_x"
    assert normalise_id("call:x") == "call:x"


def test_a_creation_for_an_ended_id_starts_a_new_call_with_a_unique_id() -> None:
    turn = Turn()
    turn.feed(
        call("call_mock1", kind="execute", rawInput={"command": "a"}),
        update("call_mock1", status="completed"),
        update("call_mock1", status="failed"),  # late update of an ended call: dropped
        call("call_mock1", kind="execute", rawInput={"command": "b"}),
        update("call_mock1", status="completed"),
    )
    turn.end({"stopReason": "end_turn"})
    assert [start.call_id for start in turn.of(ToolStartEvent)] == ["call_mock1", "call_mock1#2"]
    assert [end.success for end in turn.of(ToolEndEvent)] == [True, True]


def test_call_ids_stay_unique_across_the_turns_of_a_session() -> None:
    taken: set[str] = set()
    for _ in range(2):
        turn = Turn(taken)
        turn.feed(call("call_0", kind="read"), update("call_0", status="completed"))
        turn.end({"stopReason": "end_turn"})
    assert taken == {"call_0", "call_0#2"}


@pytest.mark.parametrize(
    ("kind", "title", "expected"),
    [
        ("execute", None, "execute_command"),
        ("read", "x", "read_file"),
        ("edit", None, "edit_file"),
        ("delete", None, "delete_file"),
        ("move", None, "move_file"),
        ("search", None, "grep_files"),
        ("fetch", None, "web_fetch"),
        ("think", None, "think"),
        ("other", "Ask User!", "ask_user"),
        (None, None, "tool"),
        ("switch_mode", "   ", "tool"),
    ],
)
def test_tool_names_follow_the_kind_then_the_title(
    kind: str | None, title: str | None, expected: str
) -> None:
    assert tool_name(kind, title) == expected


def test_input_falls_back_to_the_title_and_output_is_cut() -> None:
    turn = Turn()
    long = "x" * (OUTPUT_LIMIT + 10)
    turn.feed(
        call("t1", title="Think hard", kind="think"),
        update("t1", status="completed", content=text_content(long)),
    )
    turn.end({"stopReason": "end_turn"})
    assert turn.of(ToolStartEvent)[0].input == {"title": "Think hard"}
    output = turn.of(ToolEndEvent)[0].output
    assert output is not None
    assert output.startswith("x" * OUTPUT_LIMIT)
    assert output.endswith("[... 10 more characters]")


def test_too_deep_raw_input_falls_back_to_the_title() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(200):
        node["a"] = {}
        node = node["a"]
    turn = Turn()
    turn.feed(call("d1", title="Deep", kind="other", rawInput=deep), update("d1", status="completed"))
    turn.end({"stopReason": "end_turn"})
    assert turn.of(ToolStartEvent)[0].input == {"title": "Deep"}


def test_cancel_closes_running_calls() -> None:
    turn = Turn()
    turn.feed(call("c1", kind="execute", status="in_progress"), call("c2", kind="read", status="pending"))
    events = turn.end(None, cancelled=True)
    ends = turn.of(ToolEndEvent)
    assert [(end.call_id, end.success) for end in ends] == [("c1", False), ("c2", False)]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "cancelled"


def test_a_failed_prompt_has_no_stop_reason() -> None:
    turn = Turn()
    turn.feed(call("c1", kind="execute"))
    events = turn.end(None)
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason is None
    assert turn.of(ToolEndEvent)[0].success is False


@pytest.mark.parametrize(
    ("acp", "hive"),
    [
        ("end_turn", "completed"),
        ("max_tokens", "output_limit"),
        ("max_turn_requests", "step_limit"),
        ("refusal", "content_filter"),
        ("cancelled", "cancelled"),
        ("success", "completed"),
    ],
)
def test_stop_reasons_map(acp: str, hive: str) -> None:
    turn = Turn()
    end = turn.end({"stopReason": acp})[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == hive


@pytest.mark.parametrize(
    "usage",
    [
        {"inputTokens": 100, "outputTokens": 20, "totalTokens": 999, "cachedReadTokens": 30},
        {"input_tokens": 100, "output_tokens": 20, "cached_read_tokens": 30},
    ],
)
def test_usage_comes_from_the_result_and_totals_add_up(usage: dict[str, Any]) -> None:
    turn = Turn()
    turn.feed({"sessionUpdate": "usage_update", "used": 5000, "size": 128000})
    end = turn.end({"stopReason": "end_turn", "usage": usage})[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.total_tokens, end.cached_input_tokens) == (
        100,
        20,
        120,
        30,
    )


def test_usage_update_is_the_fallback() -> None:
    turn = Turn()
    turn.feed({"sessionUpdate": "usage_update", "used": 5000, "size": 128000})
    end = turn.end({"stopReason": "end_turn"})[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.total_tokens) == (5000, None, None)
    assert turn.mapper.context_size == 128000


@pytest.mark.parametrize(
    "result",
    [
        {"stopReason": "end_turn", "text": "the answer"},
        {
            "stopReason": "end_turn",
            "content": [{"type": "text", "text": "the "}, {"type": "text", "text": "answer"}],
        },
        {"stopReason": "end_turn", "_meta": {"text": "the answer"}},
    ],
)
def test_a_result_with_text_but_no_stream_emits_one_delta(result: dict[str, Any]) -> None:
    turn = Turn()
    events = turn.end(result)
    assert events[:-1] == [TextDeltaEvent(content="the answer")]


def test_a_result_text_is_not_repeated_after_a_stream() -> None:
    turn = Turn()
    turn.feed(chunk("agent_message_chunk", "streamed"))
    events = turn.end({"stopReason": "end_turn", "text": "streamed"})
    assert turn.of(TextDeltaEvent) == [TextDeltaEvent(content="streamed")]
    assert len(events) == 2


def entries(*statuses: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "plan",
        "entries": [
            {"content": f"step {index}", "priority": "high", "status": status}
            for index, status in enumerate(statuses)
        ],
    }


def test_plans_map_to_plan_events() -> None:
    turn = Turn()
    turn.feed(
        entries("pending", "pending"),
        entries("in_progress", "pending"),
        entries("in_progress", "pending"),
        entries("completed", "completed"),
        entries("completed", "completed"),
    )
    turn.end({"stopReason": "end_turn"})
    assert turn.events[:-1] == [
        PlanCreatedEvent(plan_id="plan-t", step_count=2, step_descriptions=["step 0", "step 1"]),
        PlanStepStartedEvent(plan_id="plan-t", step_index=0, description="step 0"),
        PlanStepCompletedEvent(plan_id="plan-t", step_index=0, success=True),
        PlanStepStartedEvent(plan_id="plan-t", step_index=1, description="step 1"),
        PlanStepCompletedEvent(plan_id="plan-t", step_index=1, success=True),
        PlanCompletedEvent(plan_id="plan-t", success=True),
    ]


def test_a_changed_plan_ends_the_old_one_and_starts_another() -> None:
    turn = Turn()
    turn.feed(entries("in_progress"), entries("completed", "pending"))
    turn.end({"stopReason": "end_turn"})
    assert [type(event).__name__ for event in turn.events[:-1]] == [
        "PlanCreatedEvent",
        "PlanStepStartedEvent",
        "PlanCompletedEvent",
        "PlanCreatedEvent",
        "PlanStepStartedEvent",
        "PlanStepCompletedEvent",
    ]
    created = turn.of(PlanCreatedEvent)
    assert [plan.plan_id for plan in created] == ["plan-t", "plan-t-2"]
    assert turn.of(PlanCompletedEvent)[0].success is False


# -- the decoder ------------------------------------------------------------------------------------------------

_TRANSCRIPTS = Path(__file__).parent / "acp_transcripts"
_DECODED = {
    "agent_message_chunk": MessageChunk,
    "agent_thought_chunk": ThoughtChunk,
    "plan": Plan,
    "usage_update": UsageUpdate,
    "tool_call": ToolCallReport,
    "tool_call_update": ToolCallReport,
}


def _recorded_updates() -> list[dict[str, Any]]:
    updates: list[dict[str, Any]] = []
    for path in sorted(_TRANSCRIPTS.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                message = json.loads(line).get("message")
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("method") == "session/update":
                update = message.get("params", {}).get("update")
                if isinstance(update, dict):
                    updates.append(update)
    return updates


def test_every_recorded_update_decodes_to_its_kind() -> None:
    updates = _recorded_updates()
    kinds = {update["sessionUpdate"] for update in updates}
    assert {"agent_message_chunk", "tool_call", "tool_call_update"} <= kinds
    for update in updates:
        decoded = decode_update(update)
        expected = _DECODED.get(update["sessionUpdate"], Unknown)
        assert type(decoded) is expected, update
        if isinstance(decoded, MessageChunk | ThoughtChunk):
            content = update["content"]
            assert chunk_text(decoded.content) == (
                content.get("text") or None if content["type"] == "text" else None
            )


def test_unknown_and_malformed_updates_decode_to_the_unknown_value() -> None:
    assert decode_update({"sessionUpdate": "something_from_v3", "x": 1}) == Unknown(
        "something_from_v3", {"sessionUpdate": "something_from_v3", "x": 1}
    )
    assert decode_update({"sessionUpdate": 7}) == Unknown(None, {"sessionUpdate": 7})
    assert decode_update([1, 2]) == Unknown(None, {})


def test_a_field_of_the_wrong_type_reads_as_absent_and_keeps_the_rest() -> None:
    decoded = decode_update(
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "a", "status": 3}, 7, {"content": ["x"], "status": "completed"}],
            "extra": {"from": "v2"},
        }
    )
    assert decoded == Plan(entries=[PlanEntry(content="a"), PlanEntry(status="completed")])
    assert decode_update({"sessionUpdate": "usage_update", "used": 12.0, "size": "big"}) == UsageUpdate(
        used=12.0
    )
    content = [{"type": "text", "text": "a"}, {"type": "text", "text": 5}, 3, "b"]
    chunk_update = decode_update({"sessionUpdate": "agent_message_chunk", "content": content})
    assert isinstance(chunk_update, MessageChunk)
    assert chunk_text(chunk_update.content) == "ab"


def test_a_prompt_result_decodes_its_stop_reason_text_and_usage() -> None:
    result = decode_result(
        {
            "stopReason": "max_tokens",
            "_meta": {"quota": {"token_count": {"input_tokens": 7.0, "output_tokens": 2}}, "text": 3},
            "usage": "lots",
        }
    )
    assert result.stop_reason == "max_tokens"
    assert result.usage is None
    assert result.meta is not None
    assert result.meta.text is None
    assert result.meta.quota is not None
    assert result.meta.quota.token_count is not None
    assert (result.meta.quota.token_count.input, result.meta.quota.token_count.output) == (7, 2)
    assert decode_result(None) == decode_result({}) == PromptResult()
