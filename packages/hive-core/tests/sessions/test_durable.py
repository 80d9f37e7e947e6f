"""Durable approval waits: written before they are sent, closed when answered, and resumed after a crash.

A crash is simulated in process by a store that stops writing at a chosen event (everything after it is lost,
as when the process dies there); ``test_processes.py`` does the same with a real process and SIGKILL.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from core_harness import WAIT
from core_harness import Rules
from core_harness import kinds
from core_harness import message
from core_harness import of_type
from core_harness import refused
from sessions_harness import SENT_AT
from sessions_harness import Deploys
from sessions_harness import agent_with
from sessions_harness import restart_and_resume

from hive_core import ChatOptions
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core.hitl import hitl_id
from hive_core.messages import Message
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import user
from hive_core.sessions import ABANDONED_APPROVAL_TEXT
from hive_core.sessions import RESUMED_NOTE
from hive_core.sessions import ApprovalClosed
from hive_core.sessions import ApprovalWait
from hive_core.sessions import DurableHitlBridge
from hive_core.sessions import EntryPayload
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import SuspendedTurn
from hive_core.sessions import TranscriptRecorder
from hive_core.sessions import TurnResume
from hive_core.sessions import replay
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


@pytest.fixture
def store(home: Path) -> Iterator[SqliteSessionStore]:
    """The store of the hive home, its clock stopped at ``SENT_AT``: every wait is sent then."""
    with SqliteSessionStore(home / "sessions.db", clock=lambda: SENT_AT) as opened:
        yield opened


class Crashable:
    """A store that stops writing once :meth:`crash` is called, as if the process had died there."""

    def __init__(self, inner: SqliteSessionStore) -> None:
        self.inner = inner
        self.dead = False

    def crash(self) -> None:
        self.dead = True

    def append(self, session_id: str, payload: EntryPayload) -> int:
        return 0 if self.dead else self.inner.append(session_id, payload)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def crash_while_waiting(
    store: SqliteSessionStore,
    session_id: str,
    rounds: Sequence[ScriptedRound],
    *,
    crashed: Callable[[list[Event]], bool] = lambda events: any(
        isinstance(e, HitlRequestEvent) for e in events
    ),
    request: UserMessageRequest | None = None,
) -> list[Event]:
    """Run a turn until ``crashed`` holds for its events, then let the "process" die there."""
    crashable = Crashable(store)
    bridge = DurableHitlBridge(crashable, session_id, timeout=60)  # type: ignore[arg-type]
    agent, _ = agent_with(rounds, bridge, Deploys())
    recorder = TranscriptRecorder(agent.session(store.restore(session_id)), crashable, session_id)  # type: ignore[arg-type]
    events: list[Event] = []
    with anyio.fail_after(WAIT), anyio.CancelScope() as scope:

        def emit(event: Event) -> None:
            events.append(event)
            if crashed(events):
                crashable.crash()
                scope.cancel()

        bridge.attach(emit)
        await SessionRunner(recorder).run_turn(request or message("ship it"), emit)
    assert crashable.dead
    return events


def deploy_round(text: str = "Deploying.") -> ScriptedRound:
    return call(("deploy", {"target": "prod"}, "d1"), text=text)


def payloads(store: SqliteSessionStore, session_id: str, kind: type[Any]) -> list[Any]:
    return [e.payload for e in store.entries(session_id) if isinstance(e.payload, kind)]


# -- in one process -----------------------------------------------------------------------------------------


async def test_a_wait_is_written_before_it_is_sent_and_closed_when_answered(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    deploys = Deploys()
    bridge = DurableHitlBridge(store, info.id, timeout=60)
    agent, _ = agent_with([deploy_round(), reply("done")], bridge, deploys)
    recorder = TranscriptRecorder(agent.session(), store, info.id)
    events: list[Event] = []

    def client(event: Event) -> None:
        events.append(event)
        if isinstance(event, HitlRequestEvent):
            waits = payloads(store, info.id, ApprovalWait)
            assert [w.request for w in waits] == [event]
            assert waits[0].timeout == 60
            assert bridge.answer(HitlResponseRequest(approved=True, reason="ok", id=event.id))

    bridge.attach(client)
    with anyio.fail_after(WAIT):
        await SessionRunner(recorder, bridge=bridge).run_turn(message("ship it"), client)
    assert deploys.done == ["prod"]
    assert kinds(events) == ["text_delta", "tool_start", "hitl_request", "tool_end", "text_delta", "turn_end"]
    assert payloads(store, info.id, ApprovalClosed) == [
        ApprovalClosed(request_id="hitl-d1", outcome="approved", reason="ok")
    ]
    assert store.pending_approvals(info.id) == []
    assert replay(store.entries(info.id)).last_turn == "ended"
    assert store.restore(info.id) == recorder.session.conversation


@pytest.mark.parametrize(
    ("how", "outcome"),
    [("cancel", "cancelled"), ("client leaves", "rejected")],
)
async def test_a_wait_that_ends_without_a_crash_is_closed(
    store: SqliteSessionStore, project: Path, how: str, outcome: str
) -> None:
    info = store.create(project_path=project)
    bridge = DurableHitlBridge(store, info.id, timeout=60)
    agent, _ = agent_with([deploy_round(), reply("ok")], bridge, Deploys())
    recorder = TranscriptRecorder(agent.session(), store, info.id)
    with anyio.fail_after(WAIT), anyio.CancelScope() as scope:

        def client(event: Event) -> None:
            if isinstance(event, HitlRequestEvent):
                if how == "cancel":
                    scope.cancel()
                else:
                    bridge.detach()

        bridge.attach(client)
        await SessionRunner(recorder).run_turn(message("ship it"), client)
    closed = payloads(store, info.id, ApprovalClosed)
    assert [(c.request_id, c.outcome) for c in closed] == [("hitl-d1", outcome)]
    assert store.pending_approvals(info.id) == []
    assert SuspendedTurn.load(store, info.id) is None


# -- across a crash ---------------------------------------------------------------------------------------


async def test_a_crash_while_waiting_suspends_the_turn(store: SqliteSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    events = await crash_while_waiting(store, info.id, [deploy_round()])
    sent = of_type(events, HitlRequestEvent)[0]
    entries = store.entries(info.id)
    pending = store.pending_approvals(info.id)
    assert len(pending) == 1
    assert pending[0].request == sent
    assert pending[0].call == ToolCallPart("d1", "deploy", '{"target":"prod"}', {"target": "prod"})
    assert pending[0].sent_at == next(e.ts for e in entries if e.kind == "approval_wait")
    assert pending[0].expires_at == pending[0].sent_at + 60

    # Restored for an ordinary resume (hive -c), the waiting call is answered as not run; no interrupted note.
    result = replay(entries)
    assert result.last_turn == "suspended"
    assert result.messages[-1] == Message(
        "tool",
        [
            ToolResultPart(
                "d1", "deploy", ABANDONED_APPROVAL_TEXT, is_error=True, refusal="approval_unavailable"
            )
        ],
    )
    assert [m.role for m in result.messages] == ["user", "assistant", "tool"]


async def test_a_resumed_wait_is_sent_again_with_its_id_and_an_approval_runs_the_call(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    before = await crash_while_waiting(store, info.id, [deploy_round()])

    def check(messages: Sequence[Message], options: ChatOptions) -> None:
        assert messages[-3].tool_calls[0].id == "d1"
        assert messages[-2] == Message("tool", [ToolResultPart("d1", "deploy", "deployed prod")])
        assert messages[-1] == user(RESUMED_NOTE)

    def started(events: list[Event]) -> None:
        # Re-sent before any request is read: the answer cannot miss its wait.
        assert kinds(events) == ["session_started", "tool_start", "hitl_request"]
        assert events[2] == of_type(before, HitlRequestEvent)[0]

    resumed = await restart_and_resume(
        store,
        info.id,
        [ScriptedRound(reply("Deployed.").updates, check=check)],
        answer=HitlResponseRequest(approved=True, id=hitl_id("d1")),
        on_started=started,
    )
    assert resumed.deploys.done == ["prod"]
    resumed.client.assert_consumed()
    assert of_type(resumed.events, ToolEndEvent) == [
        ToolEndEvent(tool="deploy", success=True, output="deployed prod", call_id="d1")
    ]
    assert of_type(resumed.events, TurnEndEvent)[0].stop_reason == "completed"
    assert payloads(store, info.id, TurnResume) == [TurnResume(request_ids=["hitl-d1"])]
    assert payloads(store, info.id, ApprovalClosed) == [
        ApprovalClosed(request_id="hitl-d1", outcome="approved")
    ]
    assert store.pending_approvals(info.id) == []
    assert replay(store.entries(info.id)).last_turn == "ended"
    assert [m.role for m in store.restore(info.id)] == ["user", "assistant", "tool", "user", "assistant"]

    # The session goes on with the same recorder: the next turn adds only its own messages.
    resumed.client.add(reply("You are welcome."))
    await collect_turn(resumed.recorder, "thanks")
    assert [m.role for m in store.restore(info.id)] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert store.restore(info.id) == resumed.recorder.session.conversation


async def test_a_rejection_after_the_restart_refuses_the_call(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])
    resumed = await restart_and_resume(
        store,
        info.id,
        [reply("Not deployed.")],
        answer=HitlResponseRequest(approved=False, reason="not today", id="hitl-d1"),
    )
    assert resumed.deploys.done == []
    assert of_type(resumed.events, ToolEndEvent) == [
        refused("deploy", "Approval rejected: not today", "rejected", call_id="d1")
    ]
    assert payloads(store, info.id, ApprovalClosed)[-1] == ApprovalClosed(
        request_id="hitl-d1", outcome="rejected", reason="not today"
    )


async def test_a_wait_that_expired_while_nobody_served_it_is_rejected_without_asking(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])
    resumed = await restart_and_resume(store, info.id, [reply("Too late.")], now=SENT_AT + 61)
    assert resumed.deploys.done == []
    assert of_type(resumed.events, HitlRequestEvent) == []
    (end,) = of_type(resumed.events, ToolEndEvent)
    assert (end.refusal, end.output) == (
        "rejected",
        "Approval rejected: no answer to the approval request within 60s",
    )
    assert payloads(store, info.id, ApprovalClosed)[-1].outcome == "expired"
    assert store.pending_approvals(info.id) == []


async def test_the_timeout_counts_from_the_first_send(store: SqliteSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])
    # 59.95 of the 60 seconds are gone: the re-sent request expires after the remaining 50 ms, unanswered.
    resumed = await restart_and_resume(store, info.id, [reply("Too late.")], now=SENT_AT + 59.95)
    assert len(of_type(resumed.events, HitlRequestEvent)) == 1
    (end,) = of_type(resumed.events, ToolEndEvent)
    assert end.refusal == "rejected"
    assert end.output is not None
    assert "within 60s" in end.output
    assert payloads(store, info.id, ApprovalClosed)[-1].outcome == "expired"


@pytest.mark.parametrize(
    ("options", "tools"),
    [
        ({"tool_names": ["status"], "tool_mode": "require:deploy"}, ["status", "deploy"]),
        ({"tool_mode": "require:deploy"}, ["deploy", "status"]),
        ({"tool_names": ["deploy"]}, ["deploy"]),
    ],
)
async def test_a_resumed_turn_offers_the_tools_the_turn_offered(
    store: SqliteSessionStore, project: Path, options: dict[str, Any], tools: list[str]
) -> None:
    info = store.create(project_path=project)
    offered: list[tuple[list[str], object]] = []

    def record(messages: Sequence[Message], options: ChatOptions) -> None:
        offered.append(([spec.name for spec in options.tools], options.tool_choice))

    first = ScriptedRound(deploy_round().updates, check=record)
    request = message("ship it", **options)
    await crash_while_waiting(store, info.id, [first], request=request)
    resumed = await restart_and_resume(
        store,
        info.id,
        [ScriptedRound(reply("Deployed.").updates, check=record)],
        answer=HitlResponseRequest(approved=True, id=hitl_id("d1")),
    )
    # The waiting call is one of the turn's tools, so it runs; the model goes on with the same tools, and a
    # call the turn required was made already, so the model is free to choose.
    assert resumed.deploys.done == ["prod"]
    assert [names for names, _ in offered] == [tools, tools]
    assert offered[1][1] == "auto"
    resumed.client.assert_consumed()


async def test_a_call_that_finished_beside_the_wait_keeps_its_result(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    both = call(("status", {}, "s1"), ("deploy", {"target": "prod"}, "d1"))

    def crashed(events: list[Event]) -> bool:
        return bool(of_type(events, ToolEndEvent)) and bool(of_type(events, HitlRequestEvent))

    await crash_while_waiting(store, info.id, [both], crashed=crashed)

    def check(messages: Sequence[Message], options: ChatOptions) -> None:
        assert messages[-2] == Message(
            "tool",
            [ToolResultPart("s1", "status", "all green"), ToolResultPart("d1", "deploy", "deployed prod")],
        )

    resumed = await restart_and_resume(
        store,
        info.id,
        [ScriptedRound(reply("Both done.").updates, check=check)],
        answer=HitlResponseRequest(approved=True),
    )
    # Only the waiting call is started again; the finished one is not run twice.
    assert [e.call_id for e in of_type(resumed.events, ToolStartEvent)] == ["d1"]
    assert resumed.deploys.done == ["prod"]
    resumed.client.assert_consumed()


async def test_a_call_the_rules_now_allow_runs_without_asking(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])

    resumed = await restart_and_resume(store, info.id, [reply("Done.")], policy=Rules())
    assert of_type(resumed.events, HitlRequestEvent) == []
    assert resumed.deploys.done == ["prod"]
    assert payloads(store, info.id, ApprovalClosed)[-1].outcome == "superseded"
    assert store.pending_approvals(info.id) == []


async def test_a_second_crash_while_waiting_again_keeps_the_first_send_time(
    store: SqliteSessionStore, project: Path
) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])
    first = store.pending_approvals(info.id)

    deploys = Deploys()
    crashable = Crashable(store)
    bridge = DurableHitlBridge(crashable, info.id, timeout=60, clock=lambda: SENT_AT + 5)  # type: ignore[arg-type]
    agent, _ = agent_with([], bridge, deploys)
    recorder = TranscriptRecorder(agent.session(store.restore(info.id)), crashable, info.id)  # type: ignore[arg-type]
    suspended = SuspendedTurn.load(store, info.id)
    assert suspended is not None
    bridge.attach(lambda event: None)
    with anyio.fail_after(WAIT), anyio.CancelScope() as scope:
        async with anyio.create_task_group() as group:
            await group.start(partial(suspended.resume, recorder, bridge, lambda event: None))
            crashable.crash()
            scope.cancel()
    assert store.pending_approvals(info.id) == first
    assert replay(store.entries(info.id)).last_turn == "suspended"


async def test_a_new_turn_abandons_the_suspended_one(store: SqliteSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])

    def check(messages: Sequence[Message], options: ChatOptions) -> None:
        assert messages[-2].tool_results[0].content == ABANDONED_APPROVAL_TEXT
        assert messages[-1] == user("never mind")

    bridge = DurableHitlBridge(store, info.id)
    agent, _ = agent_with([ScriptedRound(reply("ok").updates, check=check)], bridge, Deploys())
    recorder = TranscriptRecorder(agent.session(store.restore(info.id)), store, info.id)
    with anyio.fail_after(WAIT):
        await SessionRunner(recorder).run_turn(message("never mind"), lambda event: None)
    assert store.pending_approvals(info.id) == []
    assert SuspendedTurn.load(store, info.id) is None
    assert store.restore(info.id) == recorder.session.conversation


async def test_resume_refuses_a_bridge_of_another_session(store: SqliteSessionStore, project: Path) -> None:
    info = store.create(project_path=project)
    await crash_while_waiting(store, info.id, [deploy_round()])
    suspended = SuspendedTurn.load(store, info.id)
    assert suspended is not None
    bridge = DurableHitlBridge(store, "another")
    agent, _ = agent_with([], bridge, Deploys())
    recorder = TranscriptRecorder(agent.session(), store, info.id)
    with pytest.raises(ValueError, match="another"):
        await suspended.resume(recorder, bridge, lambda event: None)
