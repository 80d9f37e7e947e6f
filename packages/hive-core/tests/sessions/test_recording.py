"""Recording real turns (Agent + scripted model + runner) and restoring them into a new session."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from core_harness import WAIT
from core_harness import Wire
from core_harness import assert_verified
from core_harness import kinds
from core_harness import message
from sessions_harness import cut_short
from sessions_harness import thinking_round

from hive_core import Agent
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import TextUpdate
from hive_core.chat import ToolCallUpdate
from hive_core.execution_log import ModelRequestRecord
from hive_core.execution_log import ToolRecord
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ThinkingPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.sessions import INTERRUPTED_NOTE
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions import execution_log
from hive_core.sessions import replay
from hive_core.testing import Block
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import fail
from hive_core.testing import reply
from hive_core.tools import Tool
from hive_core.turn_request import TurnRequest
from hive_protocol import ContextUpdateRequest
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

pytestmark = pytest.mark.anyio


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Fail."""
    raise RuntimeError(reason)


@tool
async def hang() -> str:
    """Never return."""
    await anyio.sleep_forever()
    return ""


TOOLS: list[Tool] = [add, explode, hang]


def recorded(
    store: SharedSessionStore,
    session_id: str,
    rounds: Sequence[ScriptedRound],
    history: Sequence[Message] = (),
) -> tuple[TranscriptRecorder, ScriptedChatClient]:
    client = ScriptedChatClient(rounds)
    agent = Agent(client, tools=TOOLS, clock=lambda: 0.0, policy=ALLOW_ALL)
    return TranscriptRecorder(agent.session(history), store, session_id, model="scripted"), client


def rich_round() -> ScriptedRound:
    """Thinking with a signature, text, and four calls: one runs, one fails, one is unknown, one is malformed."""
    return thinking_round(
        ("I should add", " first"),
        ("Let me ", "compute."),
        ToolCallUpdate(0, "c_add", "add", '{"a": 2,'),
        ToolCallUpdate(0, arguments=' "b": 3}'),
        ToolCallUpdate(1, "c_boom", "explode", '{"reason": "kaput"}'),
        ToolCallUpdate(2, "c_none", "no_such_tool", "{}"),
        ToolCallUpdate(3, "c_bad", "add", '{"a": 1, "b"'),
        signature="opaque-sig",
        provider="anthropic",
    )


async def test_a_turn_with_tool_calls_is_recorded_as_it_ran_and_restored_exactly(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project, model="scripted")
    recorder, client = recorded(store, info.id, [rich_round(), reply("The sum is ", "5.", usage=(10, 4))])
    events = await collect_turn(recorder, "add 2 and 3")
    assert_verified(events, turns=1)
    client.assert_consumed()

    restored = store.restore(info.id)
    assert restored == recorder.session.conversation
    user_message, calls, results, answer = restored
    assert user_message == user("add 2 and 3")
    assert calls.parts[0] == ThinkingPart("I should add first", "opaque-sig", "anthropic")
    assert calls.parts[1] == TextPart("Let me compute.")
    assert calls.tool_calls[0] == ToolCallPart("c_add", "add", '{"a": 2, "b": 3}', {"a": 2, "b": 3})
    bad = calls.tool_calls[3]
    assert (bad.arguments_text, bad.arguments, bad.parse_error is not None) == ('{"a": 1, "b"', None, True)
    by_id = {r.call_id: r for r in results.tool_results}
    assert by_id["c_add"] == ToolResultPart("c_add", "add", "5")
    assert (by_id["c_boom"].is_error, by_id["c_boom"].error) == (True, "RuntimeError: kaput")
    assert by_id["c_none"].is_error
    assert "no tool named 'no_such_tool'" in by_id["c_none"].content
    assert (by_id["c_bad"].is_error, by_id["c_bad"].refusal) == (True, "invalid_arguments")
    assert answer == Message("assistant", [TextPart("The sum is 5.")])

    # One row per round and per tool outcome (with the execution log's record of each), never one per delta.
    entries = store.entries(info.id)
    assert [e.kind for e in entries] == [
        "turn_start",
        "message",
        "model_request",
        "message",
        *["tool", "tool_end"] * 4,
        "message",
        "model_request",
        "message",
        "spending",  # the usage of the round that reported some, after that round's message
        "turn_end",
    ]
    log = list(execution_log(entries))
    requests = [r for r in log if isinstance(r, ModelRequestRecord)]
    assert [(r.input_tokens, r.output_tokens, r.model, r.error) for r in requests] == [
        (None, None, "scripted", None),
        (10, 4, "scripted", None),
    ]
    assert all(r.request_bytes > 0 and r.duration_ms >= 0 for r in requests)
    outcomes = {r.call_id: (r.name, r.outcome) for r in log if isinstance(r, ToolRecord)}
    assert outcomes == {
        "c_add": ("add", "ok"),
        "c_boom": ("explode", "error"),
        "c_none": ("no_such_tool", "error"),
        "c_bad": ("add", "invalid_arguments"),
    }
    assert entries[0].payload == TurnRequest(content="add 2 and 3")
    assert entries[-1].payload == TurnEndEvent(
        input_tokens=10, output_tokens=4, total_tokens=14, stop_reason="completed", duration_ms=0
    )
    assert replay(entries).last_turn == "ended"
    row = store.get(info.id)
    assert row is not None
    assert (row.message_count, row.first_message) == (3, "add 2 and 3")


async def test_a_resumed_session_shows_the_model_the_earlier_tool_calls(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    first, _ = recorded(store, info.id, [rich_round(), reply("5.")])
    await collect_turn(first, "add 2 and 3")

    seen: list[list[Message]] = []

    def check(messages: Sequence[Message], options: ChatOptions) -> None:
        seen.append(list(messages))
        earlier_calls = [c.id for m in messages if m.role == "assistant" for c in m.tool_calls]
        assert earlier_calls == ["c_add", "c_boom", "c_none", "c_bad"]
        earlier_results = {r.call_id: r.content for m in messages if m.role == "tool" for r in m.tool_results}
        assert earlier_results["c_add"] == "5"
        assert messages[-1] == user("and now add 5 and 5")

    # A new process: a new agent and session, the history from the store.
    second, client = recorded(
        store,
        info.id,
        [ScriptedRound(call(("add", {"a": 5, "b": 5}, "c2")).updates, check=check), reply("10.")],
        history=store.restore(info.id),
    )
    assert second.session.conversation == first.session.conversation
    events = await collect_turn(second, "and now add 5 and 5")
    client.assert_consumed()
    assert len(seen) == 1
    assert [e for e in events if isinstance(e, ToolEndEvent)] == [
        ToolEndEvent(tool="add", success=True, output="10", call_id="c2")
    ]
    # The model's second request of that turn had both turns' calls and results.
    assert [c.id for m in client.requests[1][0] for c in m.tool_calls] == [
        "c_add",
        "c_boom",
        "c_none",
        "c_bad",
        "c2",
    ]
    assert store.restore(info.id) == second.session.conversation
    assert len(store.restore(info.id)) == 4 + 4


async def test_each_event_is_written_before_the_client_sees_it(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    recorder, _ = recorded(
        store, info.id, [call(("add", {"a": 1, "b": 1}, "c1"), text="adding"), reply("two", " it is")]
    )
    checked: list[str] = []

    def client(event: Event) -> None:
        entries = store.entries(info.id)
        last = entries[-1].payload
        if isinstance(event, ToolStartEvent):
            assert isinstance(last, Message)
            assert [c.id for c in last.tool_calls] == ["c1"]
            checked.append("tool_start")
        elif isinstance(event, ToolEndEvent):
            assert last == event
            checked.append("tool_end")
        elif isinstance(event, TextDeltaEvent) and event.content == "two":
            assert isinstance(last, Message)
            assert last.role == "tool"  # the tool round is in before the next round streams
            checked.append("next round")
        elif isinstance(event, TurnEndEvent):
            assert last == event
            assert isinstance(entries[-2].payload, Message)
            assert entries[-2].payload.text == "two it is"
            checked.append("turn_end")

    await recorder(message("1+1"), client)
    assert checked == ["tool_start", "tool_end", "next round", "turn_end"]


async def cancelled_at(recorder: TranscriptRecorder, content: str, kind: type[Event]) -> list[Event]:
    """Run a turn and cancel it when the first event of ``kind`` reaches the client."""
    events: list[Event] = []
    with anyio.fail_after(WAIT), anyio.CancelScope() as scope:

        def client(event: Event) -> None:
            events.append(event)
            if isinstance(event, kind):
                scope.cancel()

        await recorder(message(content), client)
    assert scope.cancelled_caught
    return events


async def test_a_cancelled_turn_keeps_what_the_user_saw(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    recorder, _ = recorded(store, info.id, [call(("hang", {}, "h1"))])
    await cancelled_at(recorder, "wait forever", ToolStartEvent)
    conversation = recorder.session.conversation
    assert [m.role for m in conversation] == ["user", "assistant", "tool"]
    assert conversation[-1].tool_results[0].content.startswith("Cancelled")
    assert store.restore(info.id) == conversation
    entries = store.entries(info.id)
    assert entries[-1].payload == TurnEndEvent(stop_reason="cancelled")
    assert replay(entries).last_turn == "ended"

    # Cancelled mid-stream: the partial text is kept, as the live session keeps it.
    streaming, _ = recorded(
        store, info.id, [ScriptedRound([TextUpdate("half an ans"), Block()])], history=store.restore(info.id)
    )
    await cancelled_at(streaming, "again", TextDeltaEvent)
    assert streaming.session.conversation[-1] == Message("assistant", [TextPart("half an ans")])
    assert store.restore(info.id) == streaming.session.conversation
    assert store.entries(info.id)[-1].payload == TurnEndEvent(stop_reason="cancelled")


async def test_a_failed_turn_records_its_error(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    recorder, _ = recorded(
        store,
        info.id,
        [
            call(("add", {"a": 1, "b": 2}, "c1")),
            fail(ChatError("slow down", code="rate_limit"), "never kept"),
        ],
    )
    events = await collect_turn(recorder, "add")
    assert kinds(events)[-2:] == ["error", "turn_end"]
    entries = store.entries(info.id)
    assert [e.payload for e in entries[-2:]] == [
        ErrorEvent(message="slow down", code="rate_limit"),
        TurnEndEvent(),
    ]
    assert store.restore(info.id) == recorder.session.conversation
    assert [m.role for m in store.restore(info.id)] == ["user", "assistant", "tool"]


async def test_a_rejected_request_leaves_no_message(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    recorder, client = recorded(store, info.id, [])
    request = message("go", tool_names=["missing"])
    events = await collect_turn(recorder, request)
    assert kinds(events) == ["error", "turn_end"]
    assert client.requests == []
    assert [e.kind for e in store.entries(info.id)] == ["turn_start", "error", "turn_end"]
    assert store.restore(info.id) == [] == recorder.session.conversation


async def test_the_working_path_is_a_field_of_the_recorded_request(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    recorder, client = recorded(store, info.id, [reply("ok")])
    wire = Wire(SessionRunner(recorder, session_id=info.id))
    await wire.run(ContextUpdateRequest(working_path="/home/user/docs"), message("fix it"))

    assert store.entries(info.id)[0].payload == TurnRequest(content="fix it", working_path="/home/user/docs")
    assert client.requests[0][0][-1] == user("[WorkingPath: /home/user/docs]\n\nfix it")
    found = store.get(info.id)
    assert found is not None
    assert found.first_message == "fix it"
    assert store.restore(info.id) == recorder.session.conversation


# -- turns a crash cut short --------------------------------------------------------------------------------


def test_a_turn_cut_before_its_user_message_was_written_gets_it_back_and_the_note(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    store.append(info.id, TurnRequest(content="are you there"))
    result = replay(store.entries(info.id))
    assert result.last_turn == "interrupted"
    assert result.messages == [user("are you there"), user(INTERRUPTED_NOTE)]
    assert result.suspension is None


def test_a_user_message_got_back_carries_the_working_path_as_the_model_read_it(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    store.append(info.id, TurnRequest(content="are you there", working_path="/w"))
    assert replay(store.entries(info.id)).messages[0] == user("[WorkingPath: /w]\n\nare you there")


def test_a_tool_round_cut_short_answers_every_call(store: SharedSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    calls = Message(
        "assistant",
        [ToolCallPart("c1", "add", '{"a":1,"b":1}', {"a": 1, "b": 1}), ToolCallPart("c2", "hang", "{}", {})],
    )
    for payload in (
        TurnRequest(content="go"),
        user("go"),
        calls,
        ToolEndEvent(tool="add", success=True, output="2", call_id="c1"),
    ):
        store.append(info.id, payload)
    assert store.restore(info.id) == cut_short("go", calls, ToolResultPart("c1", "add", "2"), ("c2", "hang"))


async def test_continuing_after_an_interrupted_turn_restores_the_same_conversation_again(
    store: SharedSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    store.append(info.id, TurnRequest(content="first"))
    store.append(info.id, user("first"))

    def check(messages: Sequence[Message], options: ChatOptions) -> None:
        assert messages == [user("first"), user(INTERRUPTED_NOTE), user("second")]

    recorder, _ = recorded(
        store, info.id, [ScriptedRound(reply("ok").updates, check=check)], store.restore(info.id)
    )
    await collect_turn(recorder, "second")
    assert store.restore(info.id) == recorder.session.conversation
    assert recorder.session.conversation[-1] == Message("assistant", [TextPart("ok")])
    assert replay(store.entries(info.id)).last_turn == "ended"
