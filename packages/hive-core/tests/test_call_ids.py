"""Call ids are hive's to keep unique: a model that repeats one gets a fresh id for the repeat.

The id of a call pairs its ``tool_start`` with its ``tool_end``, its ``hitl_request`` with the answer, its result
with the call in the history sent back to the model, and its entries in the session store. A model that sends
the same id twice (in one response, or again in a later turn, as servers that number every response's calls from
0 do) must not make any of these pair the wrong call.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from core_harness import WAIT
from core_harness import Rules
from core_harness import Wire
from core_harness import assert_verified
from core_harness import of_type

from hive_core import Agent
from hive_core import ChatOptions
from hive_core import HitlBridge
from hive_core import Message
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.approvals import Verdict
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


class Notes:
    """``write_note`` (asks) and ``read_note`` (allowed), recording what really ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []

        @tool
        def write_note(path: str) -> str:
            """Write a note."""
            self.ran.append(("write_note", path))
            return f"wrote {path}"

        @tool(read_only=True)
        def read_note(path: str) -> str:
            """Read a note."""
            self.ran.append(("read_note", path))
            return f"read {path}"

        self.tools = [write_note, read_note]


def pairs(messages: Sequence[Message]) -> tuple[list[str], list[str]]:
    """The call ids of every tool call and of every tool result in ``messages``, in order."""
    calls = [p.id for m in messages for p in m.parts if isinstance(p, ToolCallPart)]
    results = [p.call_id for m in messages for p in m.parts if isinstance(p, ToolResultPart)]
    return calls, results


def check_history(messages: Sequence[Message], _options: ChatOptions) -> None:
    """What the model is sent: every call id once, and every result answering its own call."""
    calls, results = pairs(messages)
    assert len(set(calls)) == len(calls), calls
    assert results == calls


def checked(round_: ScriptedRound) -> ScriptedRound:
    round_.check = check_history
    return round_


def started(events: Sequence[Event]) -> list[str]:
    return [e.call_id for e in of_type(events, ToolStartEvent)]


async def test_a_repeated_id_in_one_response_gets_its_own_and_the_approval_reaches_its_call() -> None:
    notes = Notes()
    bridge = HitlBridge(timeout=60)  # far beyond the test's bound: a lost answer fails the test, not the turn
    client = ScriptedChatClient(
        [
            call(("read_note", {"path": "a"}, "dup"), ("write_note", {"path": "b"}, "dup")),
            checked(reply("done")),
        ]
    )
    policy = Rules(write_note=Verdict.ask("writes a note"))
    agent = Agent(client, tools=notes.tools, policy=policy, approvals=bridge, clock=fixed_clock)

    def react(event: Event, wire: Wire) -> None:
        if isinstance(event, HitlRequestEvent):
            wire.send(HitlResponseRequest(approved=True, id=event.id))

    wire = Wire(SessionRunner(agent.session(), session_id="s1", bridge=bridge), react=react)
    async with wire.running():
        wire.send(UserMessageRequest(content="go"))
        await wire.wait_for(TurnEndEvent)
    events = wire.events[1:]  # after session_started

    assert started(events) == ["dup", "dup_2"]
    (asked,) = of_type(events, HitlRequestEvent)
    assert (asked.call_id, asked.id, asked.tool_name) == ("dup_2", "hitl-dup_2", "write_note")
    ends = {e.call_id: (e.tool, e.success, e.output) for e in of_type(events, ToolEndEvent)}
    assert ends == {"dup": ("read_note", True, "read a"), "dup_2": ("write_note", True, "wrote b")}
    assert sorted(notes.ran) == [("read_note", "a"), ("write_note", "b")]
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)
    assert_verified(events, turns=1)
    client.assert_consumed()


async def test_an_id_a_later_turn_repeats_is_replaced_so_the_history_stays_paired() -> None:
    notes = Notes()
    client = ScriptedChatClient(
        [
            call(("read_note", {"path": "a"}, "call_0")),
            checked(reply("first")),
            checked(call(("read_note", {"path": "b"}, "call_0"))),
            checked(reply("second")),
        ]
    )
    session = Agent(client, tools=notes.tools, clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        first = await collect_turn(session, "one")
        second = await collect_turn(session, "two")

    assert started(first) == ["call_0"]
    assert started(second) == ["call_0_2"]
    assert [e.output for e in of_type(second, ToolEndEvent)] == ["read b"]
    assert pairs(session.conversation) == (["call_0", "call_0_2"], ["call_0", "call_0_2"])
    client.assert_consumed()


async def test_a_generated_id_that_meets_a_model_id_is_replaced_too() -> None:
    # A call without an id is named call_<messages>_<index>: here call_1_1, the id the model gave the other call.
    notes = Notes()
    client = ScriptedChatClient(
        [
            call(("read_note", {"path": "a"}, "call_1_1"), ("read_note", {"path": "b"}, "")),
            checked(reply("done")),
        ]
    )
    with anyio.fail_after(WAIT):
        events = await collect_turn(
            Agent(client, tools=notes.tools, clock=fixed_clock, policy=ALLOW_ALL).session(), "go"
        )

    assert started(events) == ["call_1_1", "call_1_1_2"]
    assert_verified(events, turns=1)
    client.assert_consumed()


async def test_many_repeats_of_one_id_each_get_their_own() -> None:
    notes = Notes()
    client = ScriptedChatClient(
        [
            call(*[("read_note", {"path": str(i)}, "x") for i in range(4)]),
            checked(call(("read_note", {"path": "4"}, "x_2"))),
            checked(reply("done")),
        ]
    )
    with anyio.fail_after(WAIT):
        events = await collect_turn(
            Agent(client, tools=notes.tools, clock=fixed_clock, policy=ALLOW_ALL).session(), "go"
        )

    assert started(events) == ["x", "x_2", "x_3", "x_4", "x_2_2"]
    # Parallel calls end in any order; each id must end with its own call's output.
    ends = {e.call_id: e.output for e in of_type(events, ToolEndEvent)}
    assert ends == {call_id: f"read {i}" for i, call_id in enumerate(["x", "x_2", "x_3", "x_4", "x_2_2"])}
    assert_verified(events, turns=1)


async def test_the_stored_session_keeps_the_ids_the_events_showed(tmp_path: Path) -> None:
    notes = Notes()
    client = ScriptedChatClient(
        [
            call(("read_note", {"path": "a"}, "dup"), ("read_note", {"path": "b"}, "dup")),
            reply("done"),
            checked(call(("read_note", {"path": "c"}, "dup"))),
            reply("again"),
        ]
    )
    agent = Agent(client, tools=notes.tools, clock=fixed_clock, policy=ALLOW_ALL)
    with SqliteSessionStore(tmp_path / "sessions.db") as store:
        info = store.create(project_path=tmp_path)
        recorder = TranscriptRecorder(agent.session(), store, info.id)
        with anyio.fail_after(WAIT):
            first = await collect_turn(recorder, "one")
        restored = store.restore(info.id)
        assert pairs(restored) == (["dup", "dup_2"], ["dup", "dup_2"])
        # A restarted process continues from the store: the repeat is still recognised as one.
        recorder = TranscriptRecorder(agent.session(restored), store, info.id)
        with anyio.fail_after(WAIT):
            second = await collect_turn(recorder, "two")
        assert pairs(store.restore(info.id)) == (["dup", "dup_2", "dup_3"], ["dup", "dup_2", "dup_3"])

    assert started(first) == ["dup", "dup_2"]
    assert started(second) == ["dup_3"]
    client.assert_consumed()
