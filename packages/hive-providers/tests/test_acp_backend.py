"""The ACP backend driven through hive's runner against the fake agent replaying recorded transcripts."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest
from acp_fake_agent import read_log
from backend_harness import SPEC
from backend_harness import clean
from backend_harness import kinds
from backend_harness import one_turn
from backend_harness import options
from backend_harness import run_and_cancel
from backend_harness import text_of

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.approvals import Verdict
from hive_core.runners import SessionRunner
from hive_core.runners import collect_turn
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.pool import AcpSessionPool

pytestmark = pytest.mark.anyio

WAIT = 20.0


def update(session_id: str, text: str) -> dict[str, Any]:
    """A ``session/update`` notification streaming ``text``."""
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": session_id, "update": chunk},
    }


async def test_a_basic_turn_maps_thoughts_text_tools_and_usage(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "basic-turn"))
    events = clean(await one_turn(backend, "hello"))
    assert kinds(events) == [
        ThinkingDeltaEvent,
        ToolStartEvent,
        ToolEndEvent,
        TextDeltaEvent,
        TextDeltaEvent,
        TurnEndEvent,
    ]
    assert text_of(events) == "Hello world"
    start = events[1]
    assert isinstance(start, ToolStartEvent)
    assert start.tool == "read_file"
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert (end.input_tokens, end.output_tokens, end.total_tokens) == (100, 20, 120)
    assert backend.session_id == "sess_basic_1"
    sent = read_log(tmp_path / "log.jsonl")
    assert [message.get("method") for message in sent] == ["initialize", "session/new", "session/prompt"]
    initialize = sent[0]["params"]
    assert initialize["protocolVersion"] == 1
    assert initialize["clientInfo"]["name"] == "hive"
    assert initialize["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert sent[1]["params"]["cwd"] == str(tmp_path)
    assert sent[2]["params"]["prompt"] == [{"type": "text", "text": "hello"}]


class AskEverything:
    """A policy that asks about every call: the approval service decides."""

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        return Verdict.ask(f"{tool_name} needs approval")

    def is_read_only(self, tool_name: str) -> bool:
        return False


class RecordingApprovals:
    """Answers every request with ``decision`` (or runs ``on_request`` and waits forever), recording them."""

    def __init__(
        self, decision: ApprovalDecision | None = None, on_request: Callable[[], None] | None = None
    ) -> None:
        self.decision = decision
        self.on_request = on_request
        self.requests: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        if self.decision is not None:
            return self.decision
        if self.on_request is not None:
            self.on_request()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


def answer_to(sent: list[dict[str, Any]], request_id: object) -> dict[str, Any]:
    """The client's response to the agent request ``request_id``."""
    answers = [message for message in sent if "method" not in message and message.get("id") == request_id]
    assert len(answers) == 1, sent
    return answers[0]


@pytest.mark.parametrize(
    ("transcript", "request_id", "decision", "option"),
    [
        ("permission-approve", 5, ApprovalDecision(approved=True), "proceed_once"),
        ("permission-approve", 5, ApprovalDecision(approved=True, always_approve=True), "proceed_always"),
        ("permission-reject", "perm-1", ApprovalDecision(approved=False, reason="no"), "cancel"),
    ],
)
async def test_a_permission_request_is_answered_by_hives_approvals_choosing_the_option_by_kind(
    tmp_path: Path, transcript: str, request_id: object, decision: ApprovalDecision, option: str
) -> None:
    approvals = RecordingApprovals(decision)
    backend = AcpBackend(SPEC, options(tmp_path, transcript, policy=AskEverything(), approvals=approvals))
    events = clean(await one_turn(backend, "create marker.txt"))
    assert len(approvals.requests) == 1
    asked = approvals.requests[0]
    assert asked.tool_name == "execute_command"
    assert asked.arguments.get("command") == "touch marker.txt"
    starts = [event for event in events if isinstance(event, ToolStartEvent)]
    assert [start.call_id for start in starts] == [asked.call_id]
    answer = answer_to(read_log(tmp_path / "log.jsonl"), request_id)
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": option}}
    end = next(event for event in events if isinstance(event, ToolEndEvent))
    assert end.success is decision.approved
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert turn_end.stop_reason == "completed"


async def test_cancel_mid_tool_answers_the_pending_permission_cancelled_and_closes_the_tool(
    tmp_path: Path,
) -> None:
    runner_box: list[SessionRunner] = []
    started: list[float] = []

    def cancel() -> None:
        started.append(time.monotonic())
        runner_box[0].cancel()

    approvals = RecordingApprovals(on_request=cancel)
    backend = AcpBackend(
        SPEC, options(tmp_path, "cancel-mid-tool", policy=AskEverything(), approvals=approvals)
    )
    runner = SessionRunner(backend)
    runner_box.append(runner)
    events: list[Event] = []
    try:
        with anyio.fail_after(WAIT):
            await runner.run_turn(UserMessageRequest(content="delete build"), events.append)
        took = time.monotonic() - started[0]
        pid = backend.last_connection.pid if backend.last_connection else None
        faulted = backend.last_connection.faulted if backend.last_connection else True
    finally:
        await backend.aclose()
    clean(events)
    assert took < 1.0  # the agent answered session/cancel: no grace period waited out
    assert pid is not None
    assert not faulted  # a cancel the agent honoured keeps its process usable
    sent = read_log(tmp_path / "log.jsonl")
    assert "session/cancel" in [message.get("method") for message in sent]
    assert answer_to(sent, 9)["result"] == {"outcome": {"outcome": "cancelled"}}
    tool_ends = [event for event in events if isinstance(event, ToolEndEvent)]
    assert len(tool_ends) == 1
    assert not tool_ends[0].success
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "cancelled"


async def test_cancel_mid_text_ends_the_turn_cancelled_once_the_agent_answers(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "cancel-mid-text"))
    try:
        with anyio.fail_after(WAIT):
            events, took, _ = await run_and_cancel(
                backend, when=lambda event: isinstance(event, TextDeltaEvent)
            )
    finally:
        await backend.aclose()
    clean(events)
    assert took < 1.0
    assert text_of(events).startswith("Once upon ")
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "cancelled"
    assert [type(event) for event in events].count(TurnEndEvent) == 1


async def test_two_turns_of_one_backend_reuse_one_process_and_session(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "two-turns"))
    try:
        with anyio.fail_after(WAIT):
            first = clean(await collect_turn(backend, "first"))
            pid = backend.last_connection.pid if backend.last_connection else None
            second = clean(await collect_turn(backend, "second"))
            assert backend.last_connection is not None
            assert backend.last_connection.pid == pid
    finally:
        await backend.aclose()
    assert (text_of(first), text_of(second)) == ("One.", "Two.")
    methods = [message.get("method") for message in read_log(tmp_path / "log.jsonl")]
    assert methods == ["initialize", "session/new", "session/prompt", "session/prompt"]


async def test_a_faulted_process_is_replaced_and_the_session_resumed(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "dies-mid-turn", "resume-load"))
    try:
        with anyio.fail_after(WAIT):
            failed = clean(await collect_turn(backend, "do it"))
            first = backend.last_connection
            assert first is not None
            assert first.faulted
            again = clean(await collect_turn(backend, "continue"))
            assert backend.last_connection is not None
            assert backend.last_connection is not first
            assert backend.last_connection.pid != first.pid
    finally:
        await backend.aclose()
    assert any(isinstance(event, ErrorEvent) for event in failed)
    assert text_of(again) == "Continuing."  # the replayed history of session/load is not turn output
    load = [
        message for message in read_log(tmp_path / "log.jsonl") if message.get("method") == "session/load"
    ]
    assert [message["params"]["sessionId"] for message in load] == ["sess_resumable"]


@pytest.mark.parametrize(
    ("transcript", "method"), [("resume-load", "session/load"), ("resume-resume", "session/resume")]
)
async def test_resume_continues_the_clis_own_session(tmp_path: Path, transcript: str, method: str) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, transcript, resume="sess_resumable"))
    assert backend.session_id == "sess_resumable"
    events = clean(await one_turn(backend, "continue"))
    assert "REPLAYED" not in text_of(events)
    assert text_of(events) in ("Continuing.", "Resumed.")
    assert backend.session_id == "sess_resumable"
    methods = [message.get("method") for message in read_log(tmp_path / "log.jsonl")]
    assert methods == ["initialize", method, "session/prompt"]


async def test_a_refused_resume_runs_the_turn_in_a_new_session_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "resume-refused", resume="sess_gone"))
    events = clean(await one_turn(backend, "continue"))
    assert text_of(events) == "Starting afresh."
    assert backend.session_id == "sess_fresh"  # what hive records, so the next resume asks for this one
    assert any("could not resume session sess_gone" in record.getMessage() for record in caplog.records)
    methods = [message.get("method") for message in read_log(tmp_path / "log.jsonl")]
    assert methods == ["initialize", "session/load", "session/new", "session/prompt"]


async def test_pooled_turns_reuse_one_warm_process_and_a_faulted_one_is_replaced(tmp_path: Path) -> None:
    pool: AcpSessionPool[Any] = AcpSessionPool()
    resume = tmp_path / "resume-two.jsonl"
    steps: list[dict[str, Any]] = [
        {"from": "client", "message": {"id": 0, "method": "initialize"}},
        {
            "from": "agent",
            "message": {"id": 0, "result": {"agentCapabilities": {"loadSession": True}}},
        },
        {"from": "client", "message": {"id": 1, "method": "session/load"}},
        {"from": "agent", "message": {"id": 1, "result": {}}},
        {"from": "client", "message": {"id": 2, "method": "session/prompt"}},
        {"from": "agent", "message": update("sess_two", "Three.")},
        {"from": "agent", "message": {"id": 2, "result": {"stopReason": "end_turn"}}},
    ]
    resume.write_text("".join(json.dumps(step) + "\n" for step in steps))
    settings = options(tmp_path, "two-turns", resume, session_key="hive-session-1")
    try:
        with anyio.fail_after(WAIT):
            backend = AcpBackend(SPEC, settings, pool=pool)
            first = clean(await collect_turn(backend, "first"))
            warm = backend.last_connection
            assert warm is not None
            # A second backend of the same hive session (a new request of a server, say) gets the warm process.
            again = AcpBackend(SPEC, settings, pool=pool)
            second = clean(await collect_turn(again, "second"))
            assert again.last_connection is warm
            assert again.session_id == "sess_two"
            assert (pool.stats.hits, pool.stats.misses) == (1, 1)
            assert (text_of(first), text_of(second)) == ("One.", "Two.")
            await backend.aclose()  # a pooled process stays the pool's
            assert not warm.faulted
            assert warm.process is not None
            assert warm.process.returncode is None
            # Kill it behind hive's back: the next lease finds it faulted and starts another.
            os.killpg(warm.process.pid, signal.SIGKILL)
            with anyio.fail_after(WAIT):
                while not warm.faulted:  # noqa: ASYNC110 - the process's end has no event to wait on here
                    await anyio.sleep(0.01)
            third = clean(await collect_turn(again, "third"))
            assert text_of(third) == "Three."
            assert again.last_connection is not warm
            assert pool.stats.faults + pool.stats.evictions >= 1
            assert pool.stats.misses == 2
    finally:
        await pool.aclose()
    loads = [
        message for message in read_log(tmp_path / "log.jsonl") if message.get("method") == "session/load"
    ]
    assert [message["params"]["sessionId"] for message in loads] == ["sess_two"]


async def test_updates_keep_their_order_and_none_leaks_past_the_prompt_result(tmp_path: Path) -> None:
    chunks = [f"{index:03d} " for index in range(300)]
    steps: list[dict[str, Any]] = [
        {"from": "client", "message": {"id": 0, "method": "initialize"}},
        {"from": "agent", "message": {"id": 0, "result": {"protocolVersion": 1}}},
        {"from": "client", "message": {"id": 1, "method": "session/new"}},
        {"from": "agent", "message": {"id": 1, "result": {"sessionId": "sess_order"}}},
        {"from": "client", "message": {"id": 2, "method": "session/prompt"}},
        *[{"from": "agent", "message": update("sess_order", chunk)} for chunk in chunks],
        {"from": "agent", "message": {"id": 2, "result": {"stopReason": "end_turn"}}},
        {"from": "agent", "message": update("sess_order", "LATE")},
        {"from": "agent", "message": update("another_session", "FOREIGN")},
        {"from": "client", "message": {"id": 3, "method": "session/prompt"}},
        {"from": "agent", "message": update("another_session", "FOREIGN")},
        {"from": "agent", "message": update("sess_order", "second")},
        {"from": "agent", "message": {"id": 3, "result": {"stopReason": "end_turn"}}},
    ]
    path = tmp_path / "order.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in steps))
    backend = AcpBackend(SPEC, options(tmp_path, path))
    try:
        with anyio.fail_after(WAIT):
            first = clean(await collect_turn(backend, "count"))
            second = clean(await collect_turn(backend, "again"))
    finally:
        await backend.aclose()
    assert text_of(first) == "".join(chunks)
    assert text_of(second) == "second"


def session_setup_transcript(tmp_path: Path, *client_steps: tuple[str, dict[str, Any]]) -> Path:
    """A turn whose session offers modes and a config option; ``client_steps`` are the requests expected
    between ``session/new`` and ``session/prompt`` with their results."""
    opened = {
        "sessionId": "sess_modes",
        "modes": {
            "currentModeId": "normal",
            "availableModes": [{"id": "normal"}, {"id": "ask"}, {"id": "yolo"}],
        },
        "configOptions": [{"id": "tool_approval", "type": "select", "currentValue": "workspace-write"}],
    }
    steps: list[dict[str, Any]] = [
        {"from": "client", "message": {"id": 0, "method": "initialize"}},
        {"from": "agent", "message": {"id": 0, "result": {"protocolVersion": 1}}},
        {"from": "client", "message": {"id": 1, "method": "session/new"}},
        {"from": "agent", "message": {"id": 1, "result": opened}},
    ]
    for index, (method, result) in enumerate(client_steps, start=10):
        steps += [
            {"from": "client", "message": {"id": index, "method": method}},
            {"from": "agent", "message": {"id": index, "result": result}},
        ]
    steps += [
        {"from": "client", "message": {"id": 2, "method": "session/prompt"}},
        {"from": "agent", "message": update("sess_modes", "ok")},
        {"from": "agent", "message": {"id": 2, "result": {"stopReason": "end_turn"}}},
    ]
    path = tmp_path / "modes.jsonl"
    path.write_text("".join(json.dumps(step) + "\n" for step in steps))
    return path


async def test_the_session_is_put_in_its_asking_mode_and_configuration(tmp_path: Path) -> None:
    path = session_setup_transcript(
        tmp_path, ("session/set_mode", {}), ("session/set_config_option", {"configOptions": []})
    )
    spec = msgspec.structs.replace(SPEC, ask_mode="ask", ask_config={"tool_approval": "read-only"})
    backend = AcpBackend(spec, options(tmp_path, path))
    events = clean(await one_turn(backend, "hello"))
    assert text_of(events) == "ok"
    sent = {message.get("method"): message.get("params") for message in read_log(tmp_path / "log.jsonl")}
    assert sent["session/set_mode"] == {"sessionId": "sess_modes", "modeId": "ask"}
    assert sent["session/set_config_option"] == {
        "sessionId": "sess_modes",
        "configId": "tool_approval",
        "value": "read-only",
    }


async def test_a_mode_the_session_is_already_in_is_not_set_again(tmp_path: Path) -> None:
    path = session_setup_transcript(tmp_path)
    backend = AcpBackend(msgspec.structs.replace(SPEC, ask_mode="normal"), options(tmp_path, path))
    clean(await one_turn(backend, "hello"))
    methods = [message.get("method") for message in read_log(tmp_path / "log.jsonl")]
    assert methods == ["initialize", "session/new", "session/prompt"]


async def test_a_mode_the_user_asked_for_that_the_cli_lacks_is_a_clear_error(tmp_path: Path) -> None:
    path = session_setup_transcript(tmp_path)
    backend = AcpBackend(SPEC, options(tmp_path, path, mode="bypass"))
    events = clean(await one_turn(backend, "hello"))
    error = events[-2]
    assert isinstance(error, ErrorEvent)
    assert error.code == "request_rejected"
    assert "no mode 'bypass'" in error.message
    assert "ask, normal, yolo" in error.message
