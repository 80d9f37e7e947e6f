"""The approval gate and human approval over the wire (HitlBridge served by a SessionRunner)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest
from core_harness import WAIT
from core_harness import Rules
from core_harness import Wire
from core_harness import asked_event
from core_harness import assert_ended
from core_harness import assert_verified
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from core_harness import refused

from hive_core import Agent
from hive_core import ApprovalDecision
from hive_core import ApprovalRequest
from hive_core import HitlBridge
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import PermissionAction
from hive_core.approvals import Verdict
from hive_core.testing import Approver
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import SessionStartedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


def rules_for(**actions: PermissionAction) -> Rules:
    """Rules with one action per tool name (``allow`` for the rest) and a reason naming the tool."""
    verdicts = {
        name: Verdict.deny(f"{name} is not allowed here")
        if action == "deny"
        else Verdict.ask(f"{name} changes files", level="high")
        for name, action in actions.items()
        if action != "allow"
    }
    return Rules(**verdicts)


class Files:
    """A write tool that records what it wrote."""

    def __init__(self) -> None:
        self.written: list[tuple[str, str]] = []

        @tool
        def write_file(path: str, content: str, mode: str = "w") -> str:
            """Write a file."""
            self.written.append((path, content))
            return f"wrote {len(content)} characters to {path} ({mode})"

        self.tool = write_file


def write_call(call_id: str = "call_1", path: str = "notes.txt", content: str = "hello") -> ScriptedRound:
    return call(("write_file", {"path": path, "content": content}, call_id))


async def turn_with(approvals: Any, policy: Rules, files: Files, *, planning: bool = False) -> list[Event]:
    client = ScriptedChatClient([write_call(), reply("done")])
    agent = Agent(
        client, tools=[files.tool], policy=policy, approvals=approvals, planning=planning, clock=fixed_clock
    )
    with anyio.fail_after(WAIT):
        return await collect_turn(agent.session(), "write it")


# -- the gate -------------------------------------------------------------------------------------------


async def test_allow_runs_the_call() -> None:
    files, policy = Files(), rules_for(write_file="allow")
    events = await turn_with(None, policy, files)

    assert files.written == [("notes.txt", "hello")]
    assert of_type(events, ToolEndEvent)[0].success
    assert policy.seen == [("write_file", {"path": "notes.txt", "content": "hello"})]
    assert_verified(events, turns=1)


async def test_deny_refuses_the_call_with_the_reason() -> None:
    files = Files()
    events = await turn_with(None, rules_for(write_file="deny"), files)

    assert files.written == []
    assert of_type(events, ToolEndEvent) == [
        refused("write_file", "Permission denied: write_file is not allowed here", "denied", call_id="call_1")
    ]
    assert_ended(events, "completed")


async def test_ask_without_an_approval_service_fails_closed() -> None:
    files = Files()
    events = await turn_with(None, rules_for(write_file="ask"), files)

    assert files.written == []
    end = of_type(events, ToolEndEvent)[0]
    assert end.refusal == "approval_unavailable"
    assert end.output == "Approval required but no approval service is configured: write_file changes files"
    assert end.success is False
    assert_verified(events, turns=1)


async def test_ask_approved_runs_the_call_and_the_service_sees_the_request() -> None:
    files, approver = Files(), Approver(ApprovalDecision(approved=True))
    events = await turn_with(approver, rules_for(write_file="ask"), files)

    assert files.written == [("notes.txt", "hello")]
    assert approver.requests == [
        ApprovalRequest(
            call_id="call_1",
            tool_name="write_file",
            arguments={"path": "notes.txt", "content": "hello"},
            reason="write_file changes files",
            level="high",
        )
    ]
    assert of_type(events, ToolEndEvent)[0].success
    assert_verified(events, turns=1)


@pytest.mark.parametrize(
    ("reason", "output"),
    [("not today", "Approval rejected: not today"), (None, "Approval rejected: the operator declined")],
)
async def test_ask_rejected_refuses_the_call(reason: str | None, output: str) -> None:
    files = Files()
    events = await turn_with(
        Approver(ApprovalDecision(approved=False, reason=reason)), rules_for(write_file="ask"), files
    )

    assert files.written == []
    end = of_type(events, ToolEndEvent)[0]
    assert (end.success, end.refusal, end.output) == (False, "rejected", output)
    assert_verified(events, turns=1)


async def test_modified_arguments_replace_the_call_arguments_key_by_key() -> None:
    files = Files()
    approver = Approver(ApprovalDecision(approved=True, modified_arguments={"path": "safe.txt", "mode": "a"}))
    events = await turn_with(approver, rules_for(write_file="ask"), files)

    assert files.written == [("safe.txt", "hello")]
    assert of_type(events, ToolEndEvent)[0].output == "wrote 5 characters to safe.txt (a)"
    assert_verified(events, turns=1)


async def test_in_planning_mode_the_gate_decides_and_the_policy_judges_read_only_calls_as_usual() -> None:
    policy = Rules()

    @tool(read_only=True)
    def peek(path: str) -> str:
        """Reads."""
        return "seen"

    client = ScriptedChatClient([call(("peek", {"path": "a"})), reply("ok")])
    agent = Agent(client, tools=[peek], policy=policy, planning=True, clock=fixed_clock)
    with anyio.fail_after(WAIT):
        await collect_turn(agent.session(), "look")

    # The gate already enforced planning mode from the tool's own read-only marking (which the rules may not
    # know, e.g. for an MCP tool), so the policy judges the call as it would outside planning mode.
    assert policy.seen == [("peek", {"path": "a"})]


async def test_planning_mode_refuses_a_write_tool_before_asking_anybody() -> None:
    files, approver = Files(), Approver(ApprovalDecision(approved=True))
    events = await turn_with(approver, rules_for(write_file="ask"), files, planning=True)

    assert files.written == []
    assert approver.requests == []
    assert of_type(events, ToolEndEvent)[0].refusal == "denied"


# -- the bridge on its own ------------------------------------------------------------------------------


def request_for(call_id: str, **arguments: Any) -> ApprovalRequest:
    return ApprovalRequest(
        call_id=call_id, tool_name="write_file", arguments=arguments, reason="asks", level="low"
    )


async def test_bridge_without_a_client_rejects_at_once() -> None:
    bridge = HitlBridge()
    with anyio.fail_after(WAIT):
        decision = await bridge.request(request_for("c1"))
    assert decision == ApprovalDecision(
        approved=False, reason="no client is attached to answer approval requests"
    )


async def test_bridge_matches_answers_by_id_and_accepts_an_id_less_answer_only_when_one_waits() -> None:
    bridge = HitlBridge()
    published: list[Event] = []
    decisions: dict[str, ApprovalDecision] = {}
    both_waiting = anyio.Event()

    def emit(event: Event) -> None:
        published.append(event)
        if len(published) == 2:
            both_waiting.set()

    bridge.attach(emit)

    async def ask(call_id: str) -> None:
        decisions[call_id] = await bridge.request(request_for(call_id, path=f"{call_id}.txt"))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as group:
            group.start_soon(ask, "c1")
            group.start_soon(ask, "c2")
            await both_waiting.wait()
            assert bridge.waiting == ["hitl-c1", "hitl-c2"]
            assert bridge.answer(HitlResponseRequest(approved=True)) is False  # two wait: ambiguous
            assert bridge.answer(HitlResponseRequest(approved=True, id="hitl-zzz")) is False
            assert bridge.waiting == ["hitl-c1", "hitl-c2"]
            assert bridge.answer(HitlResponseRequest(approved=False, reason="no", id="hitl-c2")) is True
            assert (
                bridge.answer(HitlResponseRequest(approved=True, id="hitl-c2")) is False
            )  # already answered
            assert bridge.answer(HitlResponseRequest(approved=True, always_approve=True)) is True  # one left

    assert decisions == {
        "c1": ApprovalDecision(approved=True, always_approve=True),
        "c2": ApprovalDecision(approved=False, reason="no"),
    }
    assert bridge.waiting == []
    assert [e.id for e in of_type(published, HitlRequestEvent)] == ["hitl-c1", "hitl-c2"]
    assert of_type(published, HitlRequestEvent)[0].target == "c1.txt"


@pytest.mark.parametrize(
    ("arguments", "target"),
    [
        ({"path": "a.txt", "command": "ls"}, "a.txt"),
        ({"command": "rm -rf build"}, "rm -rf build"),
        ({"url": "https://example.org"}, "https://example.org"),
        ({"path": "", "query": "q"}, "q"),
        ({"other": "x"}, ""),
    ],
)
async def test_bridge_request_target_is_the_first_non_empty_known_argument(
    arguments: dict[str, Any], target: str
) -> None:
    bridge = HitlBridge(timeout=WAIT)
    published: list[Event] = []

    def emit(event: Event) -> None:
        published.append(event)
        bridge.answer(HitlResponseRequest(approved=True))

    bridge.attach(emit)
    with anyio.fail_after(WAIT):
        decision = await bridge.request(request_for("c1", **arguments))

    assert decision.approved
    assert published == [
        asked_event(
            ToolStartEvent(tool="write_file", input=arguments, call_id="c1"),
            action="asks",
            target=target,
            level="low",
        )
    ]


async def test_bridge_timeout_rejects() -> None:
    bridge = HitlBridge(timeout=0.05)
    bridge.attach(lambda event: None)
    with anyio.fail_after(WAIT):
        decision = await bridge.request(request_for("c1"))
    assert decision == ApprovalDecision(
        approved=False, reason="no answer to the approval request within 0.05s"
    )
    assert bridge.waiting == []


async def test_bridge_close_rejects_waiting_and_later_requests() -> None:
    bridge = HitlBridge()
    result: list[ApprovalDecision] = []

    def emit(event: Event) -> None:
        bridge.close()

    bridge.attach(emit)
    with anyio.fail_after(WAIT):
        result.append(await bridge.request(request_for("c1")))
        result.append(await bridge.request(request_for("c2")))
    assert result == [ApprovalDecision(approved=False, reason="the approval bridge was shut down")] * 2


async def test_bridge_detached_rejects_later_requests_until_attached_again() -> None:
    bridge = HitlBridge(timeout=WAIT)
    bridge.attach(lambda event: None)
    bridge.detach()
    with anyio.fail_after(WAIT):
        decision = await bridge.request(request_for("c1"))
    assert decision == ApprovalDecision(
        approved=False, reason="the client connection closed before answering"
    )

    def emit(event: Event) -> None:
        bridge.answer(HitlResponseRequest(approved=True))

    bridge.attach(emit)
    with anyio.fail_after(WAIT):
        assert (await bridge.request(request_for("c2"))).approved


# -- the bridge over a session --------------------------------------------------------------------------


def served(
    rounds: list[ScriptedRound], files: Files, *, timeout: float = WAIT, policy: Rules | None = None
) -> tuple[Wire, HitlBridge, ScriptedChatClient]:
    bridge = HitlBridge(timeout=timeout)
    client = ScriptedChatClient(rounds)
    agent = Agent(
        client,
        tools=[files.tool],
        policy=policy or rules_for(write_file="ask"),
        approvals=bridge,
        clock=fixed_clock,
    )
    return Wire(SessionRunner(agent.session(), session_id="s1", bridge=bridge)), bridge, client


ASKED_TURN = ["session_started", "tool_start", "hitl_request", "tool_end", "text_delta", "turn_end"]
"""The events of a session whose one turn made one call that was asked about, then answered."""


async def asked(wire: Wire) -> HitlRequestEvent:
    """Ask for the write and wait until its approval is asked for."""
    wire.send(message("write it"))
    return await wire.wait_for(HitlRequestEvent)


async def answered(wire: Wire, answer: Callable[[HitlRequestEvent], HitlResponseRequest]) -> None:
    """Serve a turn that asks for the write, send ``answer(request)`` to its approval request, and wait until
    the turn ends."""
    async with wire.running():
        wire.send(answer(await asked(wire)))
        await wire.wait_for(TurnEndEvent)


async def test_approve_over_the_wire() -> None:
    files = Files()
    wire, _, _ = served([write_call(), reply("done")], files)

    await answered(wire, lambda request: HitlResponseRequest(approved=True, id=request.id))

    start = ToolStartEvent(
        tool="write_file", input={"path": "notes.txt", "content": "hello"}, call_id="call_1"
    )
    assert wire.events == [
        SessionStartedEvent(session_id="s1", protocol_version=1),
        start,
        asked_event(start, action="write_file changes files", target="notes.txt", level="high"),
        ToolEndEvent(
            tool="write_file", success=True, output="wrote 5 characters to notes.txt (w)", call_id="call_1"
        ),
        TextDeltaEvent(content="done"),
        TurnEndEvent(stop_reason="completed", duration_ms=0),
    ]
    assert files.written == [("notes.txt", "hello")]
    assert wire.served
    assert_verified(wire.events, turns=1)


async def test_reject_with_a_reason_over_the_wire() -> None:
    files = Files()
    wire, _, client = served([write_call(), reply("ok, I won't")], files)

    await answered(wire, lambda _: HitlResponseRequest(approved=False, reason="not in that folder"))

    assert kinds(wire.events) == ASKED_TURN
    assert of_type(wire.events, ToolEndEvent)[0] == refused(
        "write_file", "Approval rejected: not in that folder", "rejected", call_id="call_1"
    )
    assert files.written == []
    # The model reads the rejection.
    assert client.requests[1][0][-1].tool_results[0].content == "Approval rejected: not in that folder"
    assert_verified(wire.events, turns=1)


async def test_modified_arguments_over_the_wire() -> None:
    files = Files()
    wire, _, _ = served([write_call(), reply("done")], files)

    await answered(
        wire,
        lambda _: HitlResponseRequest(
            approved=True, id="hitl-call_1", modified_arguments={"content": "edited"}
        ),
    )

    assert files.written == [("notes.txt", "edited")]
    assert of_type(wire.events, ToolEndEvent)[0].output == "wrote 6 characters to notes.txt (w)"
    assert_verified(wire.events, turns=1)


async def test_no_answer_within_the_timeout_is_a_rejection() -> None:
    files = Files()
    wire, bridge, _ = served([write_call(), reply("no answer")], files, timeout=0.05)

    async with wire.running():
        wire.send(message("write it"))
        await wire.wait_for(TurnEndEvent)

    end = of_type(wire.events, ToolEndEvent)[0]
    assert (end.refusal, end.output) == (
        "rejected",
        "Approval rejected: no answer to the approval request within 0.05s",
    )
    assert files.written == []
    assert bridge.waiting == []
    assert kinds(wire.events) == ASKED_TURN
    assert_verified(wire.events, turns=1)


async def test_end_of_input_while_waiting_rejects_and_the_turn_still_ends() -> None:
    files = Files()
    wire, bridge, _ = served([write_call(), reply("the client left")], files)

    async with wire.running():
        await asked(wire)
        wire.close()
        await wire.wait_for(TurnEndEvent)

    end = of_type(wire.events, ToolEndEvent)[0]
    assert (end.refusal, end.output) == (
        "rejected",
        "Approval rejected: the client connection closed before answering",
    )
    assert wire.events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)
    assert files.written == []
    assert bridge.waiting == []
    assert wire.served
    assert_verified(wire.events, turns=1)


async def test_no_approval_service_over_the_wire() -> None:
    files = Files()
    client = ScriptedChatClient([write_call(), reply("cannot")])
    agent = Agent(client, tools=[files.tool], policy=rules_for(write_file="ask"), clock=fixed_clock)
    wire = Wire(SessionRunner(agent.session(), session_id="s1"))

    events = await wire.run(message("write it"), HitlResponseRequest(approved=True))

    assert kinds(events) == ["session_started", "tool_start", "tool_end", "text_delta", "turn_end"]
    assert of_type(events, ToolEndEvent)[0].refusal == "approval_unavailable"
    assert files.written == []
    assert_verified(events, turns=1)


async def test_an_answer_without_id_is_dropped_while_two_wait() -> None:
    files = Files()
    rounds = [
        call(
            ("write_file", {"path": "a.txt", "content": "A"}, "w1"),
            ("write_file", {"path": "b.txt", "content": "B"}, "w2"),
        ),
        reply("both handled"),
    ]
    wire, bridge, _ = served(rounds, files)

    async with wire.running():
        wire.send(message("write both"))
        await wire.wait_for(HitlRequestEvent, count=2)
        wire.send(HitlResponseRequest(approved=True))
        # Requests are handled in order: once the unreadable line after it is answered, so was the answer.
        wire.send(b"not json")
        await wire.wait_for(ErrorEvent)
        assert bridge.waiting == ["hitl-w1", "hitl-w2"]
        assert of_type(wire.events, ToolEndEvent) == []
        wire.send(HitlResponseRequest(approved=False, reason="keep b", id="hitl-w2"))
        await wire.wait_for(ToolEndEvent)
        # One waits now, so an answer without id is accepted.
        wire.send(HitlResponseRequest(approved=True))
        await wire.wait_for(TurnEndEvent)

    ends = {e.call_id: e for e in of_type(wire.events, ToolEndEvent)}
    assert ends["w2"].refusal == "rejected"
    assert ends["w1"].success
    assert files.written == [("a.txt", "A")]
    assert [e.id for e in of_type(wire.events, HitlRequestEvent)] == ["hitl-w1", "hitl-w2"]
    assert_verified(wire.events, turns=1)


async def test_an_answer_reaches_a_waiting_turn_past_a_queued_message() -> None:
    files = Files()
    wire, _, client = served([write_call(), reply("first done"), reply("second done")], files)

    async with wire.running():
        await asked(wire)
        wire.send(message("and then this"))
        wire.send(HitlResponseRequest(approved=True))
        await wire.wait_for(TurnEndEvent, count=2)

    assert files.written == [("notes.txt", "hello")]
    assert [e.stop_reason for e in of_type(wire.events, TurnEndEvent)] == ["completed", "completed"]
    assert client.requests[2][0][-1].text == "and then this"
    assert_verified(wire.events, turns=2)


async def test_a_stray_answer_with_nothing_waiting_changes_nothing() -> None:
    files = Files()
    wire, _, _ = served([write_call(), reply("done")], files, policy=rules_for(write_file="allow"))

    events = await wire.run(HitlResponseRequest(approved=False, id="hitl-call_1"), message("write it"))

    assert files.written == [("notes.txt", "hello")]
    assert kinds(events) == ["session_started", "tool_start", "tool_end", "text_delta", "turn_end"]
    assert_verified(events, turns=1)
