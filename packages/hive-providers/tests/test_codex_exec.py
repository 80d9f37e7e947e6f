"""``codex exec --json`` as the Codex backend's fallback: recorded lines (Codex 0.171.0 against the scripted model)
mapped to hive events, its command lines (read-only unless the mode says otherwise, the bypass only when asked),
and the fallback itself against a fake ``codex`` that rejects ``app-server`` (a real subprocess): the turn runs as
``exec``, the next as ``exec resume <thread>``, a fork as ``exec fork``, with one warning.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest
from backend_harness import clean
from backend_harness import replay
from backend_harness import text_of

from hive_core.failures import ChatError
from hive_core.runners import collect_turn
from hive_protocol import AgentWorkEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import PlanCompletedEvent
from hive_protocol import PlanCreatedEvent
from hive_protocol import PlanStepCompletedEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.codex.exec_events import ExecTurn
from hive_providers.backends.codex.exec_mode import APPROVAL_WARNING
from hive_providers.backends.codex.exec_mode import exec_arguments
from hive_providers.backends.codex.exec_wire import ExecItemEvent
from hive_providers.backends.codex.exec_wire import ThreadStarted
from hive_providers.backends.codex.exec_wire import ThreadUsage
from hive_providers.backends.codex.exec_wire import TurnCompleted
from hive_providers.backends.codex.exec_wire import TurnFailed
from hive_providers.backends.codex.exec_wire import UnknownExecItem
from hive_providers.backends.codex.exec_wire import decode_exec_event
from hive_providers.backends.codex.subagents import SubThreads
from hive_providers.backends.codex.wire import AgentState
from hive_providers.backends.codex.wire import CollabAgentToolCall
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.wire import Unknown
from hive_providers.backends.registry import resolve_backend

THREAD: Final = "01a2327d-c1da-77f3-8827-86754225cc36"
COMMAND: Final = "/bin/bash -lc 'touch hive_tool_ran.txt'"

# `codex exec --json --skip-git-repo-check --sandbox danger-full-access "RUNTOOL go"`, Codex 0.171.0.
TOOL_RUN: Final[list[dict[str, Any]]] = [
    {"type": "thread.started", "thread_id": THREAD},
    {
        "type": "item.completed",
        "item": {
            "id": "item_0",
            "type": "error",
            "message": "Model metadata for `local-model` not found. Defaulting to fallback metadata",
        },
    },
    {"type": "turn.started"},
    {
        "type": "item.started",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": COMMAND,
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": COMMAND,
            "aggregated_output": "",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "MOCK_REPLY done"}},
    {
        "type": "turn.completed",
        "usage": {
            "input_tokens": 20333,
            "cached_input_tokens": 0,
            "cache_write_input_tokens": 0,
            "output_tokens": 10,
            "reasoning_output_tokens": 0,
        },
    },
]


def mapped(
    lines: list[dict[str, Any]], *, before: tuple[int, int, int] | None = (0, 0, 0)
) -> tuple[list[Event], ExecTurn]:

    def make(emit: Callable[[Event], None], tracker: ToolCallTracker) -> ExecTurn:
        subthreads = SubThreads()
        subthreads.emit = emit
        return ExecTurn(emit, tracker, subthreads, usage_before=before)

    turn, events = replay(make, lambda turn, line: turn.on_event(decode_exec_event(line)), lines)
    return events, turn


def test_a_recorded_tool_run_maps_to_a_call_text_and_usage() -> None:
    events, turn = mapped(TOOL_RUN)
    clean(events)
    assert turn.thread_id == THREAD
    assert turn.warnings == ["Model metadata for `local-model` not found. Defaulting to fallback metadata"]
    [start] = [e for e in events if isinstance(e, ToolStartEvent)]
    [end] = [e for e in events if isinstance(e, ToolEndEvent)]
    assert (start.tool, start.input, end.call_id, end.success) == (
        "execute_command",
        {"command": "touch hive_tool_ran.txt"},
        start.call_id,
        True,
    )
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["MOCK_REPLY done"]
    last = events[-1]
    assert isinstance(last, TurnEndEvent)
    assert (last.input_tokens, last.output_tokens, last.total_tokens, last.stop_reason) == (
        20333,
        10,
        20343,
        "completed",
    )


def test_usage_is_the_thread_total_less_the_previous_turns_and_unknown_after_a_resume() -> None:
    events, turn = mapped(TOOL_RUN, before=(20000, 4, 0))
    last = events[-1]
    assert isinstance(last, TurnEndEvent)
    assert (last.input_tokens, last.output_tokens) == (333, 6)
    assert turn.usage_after == (20333, 10, 0)
    events, _ = mapped(TOOL_RUN, before=None)
    last = events[-1]
    assert isinstance(last, TurnEndEvent)
    assert (last.input_tokens, last.output_tokens, last.total_tokens) == (None, None, None)


def test_declined_and_failed_calls_reasoning_plans_and_collab_calls() -> None:
    lines: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "item.completed", "item": {"id": "r", "type": "reasoning", "text": "thinking it over"}},
        {
            "type": "item.started",
            "item": {
                "id": "p",
                "type": "todo_list",
                "items": [{"text": "a", "completed": False}, {"text": "b", "completed": False}],
            },
        },
        {
            "type": "item.updated",
            "item": {
                "id": "p",
                "type": "todo_list",
                "items": [{"text": "a", "completed": True}, {"text": "b", "completed": False}],
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "c",
                "type": "command_execution",
                "command": "rm -rf x",
                "aggregated_output": "",
                "exit_code": None,
                "status": "declined",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "f",
                "type": "file_change",
                "changes": [{"path": "a.txt", "kind": "add"}],
                "status": "failed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "s",
                "type": "collab_tool_call",
                "tool": "spawn_agent",
                "sender_thread_id": THREAD,
                "receiver_thread_ids": ["child-1"],
                "prompt": "look around",
                "agents_states": {"child-1": {"status": "pending_init", "message": None}},
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "p",
                "type": "todo_list",
                "items": [{"text": "a", "completed": True}, {"text": "b", "completed": False}],
            },
        },
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 5, "cached_input_tokens": 0, "output_tokens": 1},
        },
    ]
    events, _ = mapped(lines)
    clean(events)
    assert [e.content for e in events if isinstance(e, ThinkingDeltaEvent)] == ["thinking it over"]
    ends = {e.tool: e for e in events if isinstance(e, ToolEndEvent)}
    assert (ends["execute_command"].success, ends["execute_command"].refusal) == (False, "rejected")
    assert (ends["edit_file"].success, ends["edit_file"].refusal) == (False, None)
    [created] = [e for e in events if isinstance(e, PlanCreatedEvent)]
    assert created.step_descriptions == ["a", "b"]
    assert [e.step_index for e in events if isinstance(e, PlanStepCompletedEvent)] == [0]
    [plan_end] = [e for e in events if isinstance(e, PlanCompletedEvent)]
    assert plan_end.success is False
    [work] = [e for e in events if isinstance(e, AgentWorkEvent)]
    [child] = work.items
    assert (child.id, child.status, child.title) == ("codex:child-1", "running", "look around")


def test_a_failed_turn_raises_codex_s_message() -> None:
    lines: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": THREAD},
        {"type": "error", "message": "stream disconnected before completion"},
        {"type": "turn.failed", "error": {"message": "unexpected status 500: boom"}},
    ]
    with pytest.raises(ChatError, match="unexpected status 500: boom"):
        mapped(lines)


def test_command_lines_fail_closed() -> None:
    fresh = exec_arguments(prompt="-hi", model="m")
    assert fresh == [
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-m",
        "m",
        "-c",
        'sandbox_mode="read-only"',
        "--",
        "-hi",
    ]
    assert exec_arguments(prompt="p", thread_id="t", mode="untrusted")[:2] == ["exec", "resume"]
    assert 'sandbox_mode="read-only"' in exec_arguments(prompt="p", thread_id="t", mode="on-request")
    assert exec_arguments(prompt="p", thread_id="t", fork=True)[-2:] == ["t", "p"]
    assert exec_arguments(prompt="p", thread_id="t", fork=True)[1] == "fork"
    assert 'sandbox_mode="workspace-write"' in exec_arguments(prompt="p", mode="never")
    for mode in (None, "untrusted", "never", "workspace-write", "danger-full-access"):
        assert "--dangerously-bypass-approvals-and-sandbox" not in exec_arguments(prompt="p", mode=mode)
    assert "--dangerously-bypass-approvals-and-sandbox" in exec_arguments(prompt="p", mode="yolo")


# -- the fallback, against a fake codex -------------------------------------------------------------------------

FAKE_CODEX: Final = """
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_CODEX_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[:1] == ["app-server"]:
    sys.stderr.write("error: unrecognized subcommand 'app-server'\\n"); sys.exit(2)
if os.environ.get("FAKE_CODEX_EXEC") == "broken":
    sys.stderr.write("error: exec is broken too\\n"); sys.exit(2)
assert sys.stdin.read() == "", "stdin is not empty"
def send(m): sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
thread = "thr-1"
if args[1] == "resume":
    thread = args[args.index("--") + 1]
elif args[1] == "fork":
    thread = "thr-copy"
send({"type": "thread.started", "thread_id": thread})
send({"type": "turn.started"})
print("not json")
prompt = args[-1]
send({"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "echo: " + prompt}})
send({"type": "turn.completed", "usage": {"input_tokens": 10 * len(open(os.environ["FAKE_CODEX_LOG"]).readlines()),
      "cached_input_tokens": 0, "output_tokens": 2}})
"""


def fake_codex(tmp_path: Path, **more: Any) -> tuple[CodexBackend, Path]:
    script = tmp_path / "codex"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(FAKE_CODEX))
    script.chmod(0o755)
    log = tmp_path / "calls.jsonl"
    options = BackendOptions(
        cwd=tmp_path,
        executable=str(script),
        startup_timeout=10.0,
        cancel_grace=1.0,
        environment={"FAKE_CODEX_LOG": str(log), **more.pop("environment", {})},
        **more,
    )
    return CodexBackend(resolve_backend("codex"), options), log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


@pytest.mark.anyio
async def test_a_codex_without_app_server_runs_its_turns_with_exec(tmp_path: Path) -> None:
    backend, log = fake_codex(tmp_path, model="m1")
    try:
        with anyio.fail_after(30):
            first = clean(await collect_turn(backend, "hello"))
            second = clean(await collect_turn(backend, "again"))
    finally:
        await backend.aclose()
    assert text_of(first) == "echo: hello"
    assert text_of(second) == "echo: again"
    assert backend.session_id == "thr-1"
    assert backend.uses_exec
    made = calls(log)
    assert [call[:2] for call in made] == [["app-server", "--listen"], ["exec", "--json"], ["exec", "resume"]]
    assert made[1][-2:] == ["--", "hello"]
    assert made[2][-3:] == ["--", "thr-1", "again"]
    assert 'sandbox_mode="read-only"' in made[1]
    assert 'sandbox_mode="read-only"' in made[2]
    assert not any("--dangerously-bypass-approvals-and-sandbox" in call for call in made)
    # One warning for the fallback, one that approvals are not available: not one per turn.
    assert len(backend.notes) == 2
    assert "unrecognized subcommand 'app-server'" in backend.notes[0]
    assert backend.notes[1] == APPROVAL_WARNING
    end = second[-1]
    assert isinstance(end, TurnEndEvent)
    # The thread's total was 20 after the first turn (10 per call logged) and 30 after the second.
    assert (end.input_tokens, end.output_tokens) == (10, 0)


@pytest.mark.anyio
async def test_a_fork_in_exec_continues_in_the_copy(tmp_path: Path) -> None:
    backend, log = fake_codex(tmp_path, resume="thr-1", fork=True, arguments=("exec",), mode="yolo")
    try:
        with anyio.fail_after(30):
            clean(await collect_turn(backend, "forked"))
            clean(await collect_turn(backend, "then"))
    finally:
        await backend.aclose()
    made = calls(log)
    assert [call[:2] for call in made] == [["exec", "fork"], ["exec", "resume"]]
    assert made[0][-3:] == ["--", "thr-1", "forked"]
    assert made[1][-3:] == ["--", "thr-copy", "then"]
    assert "--dangerously-bypass-approvals-and-sandbox" in made[0]
    assert backend.session_id == "thr-copy"
    assert backend.notes == []  # the bypass mode asks nothing: no warning


@pytest.mark.anyio
async def test_when_exec_fails_too_the_error_names_both(tmp_path: Path) -> None:
    backend, _ = fake_codex(tmp_path, environment={"FAKE_CODEX_EXEC": "broken"})
    events: list[Event] = []
    try:
        with anyio.fail_after(30), pytest.raises(BackendStartError) as caught:
            await backend(UserMessageRequest(content="hi"), events.append)
    finally:
        await backend.aclose()
    message = str(caught.value)
    assert "unrecognized subcommand 'app-server'" in message
    assert "exec is broken too" in message
    assert not backend.uses_exec
    assert not [e for e in events if isinstance(e, ErrorEvent)]


# -- the decoder ------------------------------------------------------------------------------------------------


def test_every_recorded_line_decodes_to_its_kind() -> None:
    kinds = {"thread.started": ThreadStarted, "turn.completed": TurnCompleted, "turn.failed": TurnFailed}
    for line in TOOL_RUN:
        decoded = decode_exec_event(line)
        kind = line["type"]
        if kind.startswith("item."):
            assert isinstance(decoded, ExecItemEvent)
            assert decoded.completed == (kind == "item.completed")
            assert not isinstance(decoded.item, UnknownExecItem), line
            assert decoded.item.id == line["item"]["id"]
        else:
            assert type(decoded) is kinds.get(kind, Unknown), line
    assert decode_exec_event({"type": "turn.started"}) == Unknown("turn.started", {"type": "turn.started"})


def test_unknown_and_malformed_lines_decode_to_the_unknown_values() -> None:
    assert decode_exec_event({"type": "thread.archived"}) == Unknown(
        "thread.archived", {"type": "thread.archived"}
    )
    assert decode_exec_event([1]) == Unknown(None, {})
    event = decode_exec_event(
        {"type": "item.started", "item": {"type": "web_search", "id": "w", "query": "q"}}
    )
    assert event == ExecItemEvent(item=UnknownExecItem(id="w", type="web_search"), completed=False)
    failed = decode_exec_event({"type": "turn.failed", "error": "boom"})
    assert failed == TurnFailed()
    usage = decode_exec_event(
        {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": False}}
    )
    assert usage == TurnCompleted(usage=ThreadUsage(input_tokens=5))


def test_a_collab_call_decodes_as_the_app_servers() -> None:
    event = decode_exec_event(
        {
            "type": "item.completed",
            "item": {
                "type": "collab_tool_call",
                "id": "c1",
                "tool": "spawn_agent",
                "receiver_thread_ids": ["t1"],
                "agents_states": {"t1": {"status": "pending_init", "message": None}},
                "prompt": "go",
            },
        }
    )
    assert event == ExecItemEvent(
        item=CollabAgentToolCall(
            id="c1",
            tool="spawn_agent",
            prompt="go",
            receiver_thread_ids=["t1"],
            agents_states={"t1": AgentState(status="pending_init")},
        ),
        completed=True,
    )
