"""Codex app-server notifications (recorded from Codex 0.171.0 against the scripted model) as hive events, and
the backend's failures against fake app-servers: not installed, exits at start, prints no JSON, dies mid-turn.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import msgspec
import pytest
from backend_harness import of
from codex_fake_server import SERVER

from hive_core.failures import ChatError
from hive_core.runners import collect_turn
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.codex import TurnItems
from hive_providers.backends.codex.backend import approval_decision
from hive_providers.backends.codex.items import command_line
from hive_providers.backends.codex.items import error_code
from hive_providers.backends.codex.wire import AgentMessageDelta
from hive_providers.backends.codex.wire import CommandExecution
from hive_providers.backends.codex.wire import ErrorNotification
from hive_providers.backends.codex.wire import FileChange
from hive_providers.backends.codex.wire import FileUpdate
from hive_providers.backends.codex.wire import ItemNotification
from hive_providers.backends.codex.wire import ReasoningDelta
from hive_providers.backends.codex.wire import TokenBreakdown
from hive_providers.backends.codex.wire import TokenUsage
from hive_providers.backends.codex.wire import TokenUsageUpdated
from hive_providers.backends.codex.wire import TurnNotification
from hive_providers.backends.codex.wire import UnknownItem
from hive_providers.backends.codex.wire import UnknownNotification
from hive_providers.backends.codex.wire import decode_item
from hive_providers.backends.codex.wire import decode_notification
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.registry import resolve_backend

THREAD: Final = "01a2322e-9703-7a73-ab99-a70d38d5c6ee"
TURN: Final = "01a2322e-971e-7c33-ba9a-0b3ba4e86104"
COMMAND: Final = "/bin/bash -lc 'touch hive_tool_ran.txt'"


def command_item(status: str, **more: Any) -> dict[str, Any]:
    return {
        "type": "commandExecution",
        "id": "call_hive0",
        "command": COMMAND,
        "cwd": "/project",
        "processId": None,
        "source": "agent",
        "status": status,
        "commandActions": [{"type": "unknown", "command": "touch hive_tool_ran.txt"}],
        "aggregatedOutput": None,
        "exitCode": None,
        "durationMs": None,
        **more,
    }


def usage(total_in: int, total_out: int, last_in: int, last_out: int) -> dict[str, Any]:
    return {
        "threadId": THREAD,
        "turnId": TURN,
        "tokenUsage": {
            "total": {
                "totalTokens": total_in + total_out,
                "inputTokens": total_in,
                "outputTokens": total_out,
            },
            "last": {"totalTokens": last_in + last_out, "inputTokens": last_in, "outputTokens": last_out},
            "modelContextWindow": 258400,
        },
    }


def at(params: dict[str, Any]) -> dict[str, Any]:
    return {"threadId": THREAD, "turnId": TURN, **params}


# The approved-command turn of Codex 0.171.0 (trimmed of fields hive does not read).
TOOL_TURN: Final[list[tuple[str, dict[str, Any]]]] = [
    ("turn/started", {"threadId": THREAD, "turn": {"id": TURN, "status": "inProgress"}}),
    ("item/started", at({"item": {"type": "userMessage", "id": "u1", "content": [{"type": "text"}]}})),
    ("item/started", at({"item": command_item("inProgress")})),
    ("serverRequest/resolved", {"threadId": THREAD, "requestId": 0}),
    ("item/completed", at({"item": command_item("completed", exitCode=0, durationMs=0)})),
    ("thread/tokenUsage/updated", usage(10297, 5, 10297, 5)),
    ("item/started", at({"item": {"type": "agentMessage", "id": "msg_1", "text": ""}})),
    ("item/agentMessage/delta", at({"itemId": "msg_1", "delta": "MOCK_REPLY"})),
    ("item/agentMessage/delta", at({"itemId": "msg_1", "delta": " done"})),
    ("item/completed", at({"item": {"type": "agentMessage", "id": "msg_1", "text": "MOCK_REPLY done"}})),
    ("thread/tokenUsage/updated", usage(20691, 10, 10394, 5)),
    ("turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "status": "completed", "durationMs": 205}}),
]


def notify(items: TurnItems, method: str, params: dict[str, Any]) -> None:
    items.on_notification(decode_notification(method, params))


def mapped(notifications: list[tuple[str, dict[str, Any]]], **finish: bool) -> list[Event]:
    events: list[Event] = []
    items = TurnItems(events.append, ToolCallTracker(events.append))
    for method, params in notifications:
        notify(items, method, params)
    events.append(items.finish(**finish))
    return events


def test_a_recorded_tool_turn_maps_to_a_call_text_and_usage() -> None:
    events = mapped(TOOL_TURN)
    assert verify(events, turns=1) == []
    assert [type(e) for e in events] == [
        ToolStartEvent,
        ToolEndEvent,
        TextDeltaEvent,
        TextDeltaEvent,
        TurnEndEvent,
    ]
    [start], [end] = of(events, ToolStartEvent), of(events, ToolEndEvent)
    assert (start.tool, start.call_id, start.input) == (
        "execute_command",
        "call_hive0",
        {"command": "touch hive_tool_ran.txt"},
    )
    assert (end.call_id, end.success) == ("call_hive0", True)
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert (turn_end.input_tokens, turn_end.output_tokens, turn_end.total_tokens) == (20691, 10, 20701)
    assert (turn_end.stop_reason, turn_end.duration_ms) == ("completed", 205)


def test_a_later_turn_counts_only_its_own_tokens() -> None:
    # The thread had 20691 + 10 tokens before; this turn's one request used 10421 + 5.
    events = mapped(
        [
            ("thread/tokenUsage/updated", usage(31112, 15, 10421, 5)),
            ("turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "status": "completed"}}),
        ]
    )
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens) == (10421, 5)


def test_a_declined_command_ends_refused_and_a_whole_message_is_one_delta() -> None:
    events = mapped(
        [
            ("item/started", at({"item": command_item("inProgress")})),
            ("item/completed", at({"item": command_item("declined")})),
            ("item/completed", at({"item": {"type": "agentMessage", "id": "m", "text": "MOCK_REPLY ok"}})),
            ("turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "status": "completed"}}),
        ]
    )
    assert verify(events, turns=1) == []
    end = next(e for e in events if isinstance(e, ToolEndEvent))
    assert (end.success, end.refusal) == (False, "rejected")
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["MOCK_REPLY ok"]


def test_reasoning_deltas_are_thinking_and_file_changes_are_edits() -> None:
    change = {"path": "/project/a.txt", "kind": {"type": "add"}, "diff": "+hello\n"}
    file_item = {"type": "fileChange", "id": "patch_1", "changes": [change], "status": "inProgress"}
    events = mapped(
        [
            ("item/reasoning/summaryTextDelta", at({"itemId": "r", "delta": "Plan", "summaryIndex": 0})),
            ("item/reasoning/textDelta", at({"itemId": "r", "delta": "ning", "contentIndex": 0})),
            ("item/started", at({"item": file_item})),
            ("item/completed", at({"item": {**file_item, "status": "completed"}})),
            ("turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "status": "completed"}}),
        ]
    )
    assert verify(events, turns=1) == []
    assert [e.content for e in events if isinstance(e, ThinkingDeltaEvent)] == ["Plan", "ning"]
    start = next(e for e in events if isinstance(e, ToolStartEvent))
    assert (start.tool, start.input) == ("edit_file", {"path": "/project/a.txt", "diff": "+hello"})
    end = next(e for e in events if isinstance(e, ToolEndEvent))
    assert (end.success, end.output) == (True, "created /project/a.txt")


def test_another_turns_notifications_are_ignored_and_an_interrupt_is_a_cancel() -> None:
    events: list[Event] = []
    items = TurnItems(events.append, ToolCallTracker(events.append))
    items.turn_id = TURN
    notify(items, "item/agentMessage/delta", {"threadId": THREAD, "turnId": "other", "delta": "no"})
    notify(items, "item/started", at({"item": command_item("inProgress")}))
    notify(items, "turn/completed", {"threadId": THREAD, "turn": {"id": "other", "status": "completed"}})
    assert items.completed is None
    notify(items, "turn/completed", {"threadId": THREAD, "turn": {"id": TURN, "status": "interrupted"}})
    end = items.finish()
    events.append(end)
    assert verify(events, turns=1) == []
    assert end.stop_reason == "cancelled"
    assert not any(isinstance(e, TextDeltaEvent) for e in events)
    assert [type(e) for e in events] == [ToolStartEvent, ToolEndEvent, TurnEndEvent]


@pytest.mark.parametrize(
    ("info", "code"),
    [
        ("contextWindowExceeded", "context_limit"),
        ("unauthorized", "auth"),
        ({"responseStreamDisconnected": {"httpStatusCode": 502}}, "network"),
        ("somethingNew", "unknown"),
        (None, "unknown"),
    ],
)
def test_a_failed_turn_raises_the_classified_error(info: object, code: str) -> None:
    failed = {"id": TURN, "status": "failed", "error": {"message": "boom", "codexErrorInfo": info}}
    items = TurnItems(lambda event: None, ToolCallTracker(lambda event: None))
    notify(items, "turn/completed", {"threadId": THREAD, "turn": failed})
    with pytest.raises(ChatError, match="boom") as caught:
        items.finish()
    assert caught.value.code == code
    assert error_code(info) == code


def test_command_lines_and_decisions() -> None:
    assert command_line(COMMAND) == "touch hive_tool_ran.txt"
    assert command_line("ls -la") == "ls -la"
    assert command_line("/bin/bash -lc 'unclosed") == "/bin/bash -lc 'unclosed"
    assert approval_decision(True) == {"decision": "accept"}
    assert approval_decision(True, always=True) == {"decision": "acceptForSession"}
    assert approval_decision(False) == {"decision": "decline"}


# -- failures against fake app-servers ----------------------------------------------------------------------


def fake(tmp_path: Path, mode: str, **more: Any) -> CodexBackend:
    """The Codex backend on the fake app-server (``codex_fake_server.py``) in ``mode``."""
    options = BackendOptions(
        cwd=tmp_path,
        executable=sys.executable,
        arguments=(str(SERVER), mode),
        startup_timeout=10.0,
        cancel_grace=1.0,
        **more,
    )
    return CodexBackend(resolve_backend("codex"), options)


@pytest.mark.anyio
async def test_a_missing_program_is_not_installed(tmp_path: Path) -> None:
    options = BackendOptions(cwd=tmp_path)
    spec = msgspec.structs.replace(resolve_backend("codex"), executables=("hive-no-such-codex",))
    backend = CodexBackend(spec, options)
    with anyio.fail_after(20):
        with pytest.raises(BackendNotInstalled, match="hive-no-such-codex"):
            await backend(UserMessageRequest(content="hi"), lambda event: None)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "expected"), [("exit", "exited with code 3.*fatal: no config"), ("noise", "Welcome")]
)
async def test_a_server_that_fails_at_start_is_a_start_error(
    tmp_path: Path, mode: str, expected: str
) -> None:
    backend = fake(tmp_path, mode)
    try:
        with anyio.fail_after(20), pytest.raises(BackendStartError, match=expected):
            await backend(UserMessageRequest(content="hi"), lambda event: None)
    finally:
        await backend.aclose()


@pytest.mark.anyio
async def test_a_server_that_dies_mid_turn_is_an_error_with_every_event_kept(tmp_path: Path) -> None:
    backend = fake(tmp_path, "die")
    try:
        with anyio.fail_after(20):
            events = await collect_turn(backend, "hi")
    finally:
        await backend.aclose()
    assert verify(events, turns=1) == []
    [error] = [e for e in events if isinstance(e, ErrorEvent)]
    assert error.code == "internal"
    assert "exited with code 101" in error.message
    assert "panicked at the turn" in error.message
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["partial"]


@pytest.mark.anyio
async def test_an_approval_with_a_string_id_is_answered_verbatim(tmp_path: Path) -> None:
    backend = fake(tmp_path, "approve")  # no approval service: declined, failing closed
    try:
        with anyio.fail_after(20):
            events = await collect_turn(backend, "hi")
        connection = backend.connection
        assert connection is not None
        stderr = connection.describe("")
    finally:
        await backend.aclose()
    assert verify(events, turns=1) == []
    assert backend.session_id == "thr_fake"
    assert 'ANSWER {"id": "req-7", "result": {"decision": "decline"}}' in stderr
    end = next(e for e in events if isinstance(e, ToolEndEvent))
    assert (end.success, end.refusal) == (False, "approval_unavailable")


# -- the decoder ------------------------------------------------------------------------------------------------


def test_every_recorded_notification_decodes_to_its_kind() -> None:
    kinds = {
        "item/started": ItemNotification,
        "item/completed": ItemNotification,
        "item/agentMessage/delta": AgentMessageDelta,
        "item/reasoning/summaryTextDelta": ReasoningDelta,
        "item/reasoning/textDelta": ReasoningDelta,
        "thread/tokenUsage/updated": TokenUsageUpdated,
        "turn/started": TurnNotification,
        "turn/completed": TurnNotification,
        "error": ErrorNotification,
    }
    for method, params in TOOL_TURN:
        decoded = decode_notification(method, params)
        assert type(decoded) is kinds.get(method, UnknownNotification), method
        assert decoded.thread_id == params.get("threadId")
        if isinstance(decoded, ItemNotification):
            known = params["item"]["type"] in ("agentMessage", "commandExecution", "fileChange")
            assert isinstance(decoded.item, UnknownItem) != known, params
            assert decoded.item.id == params["item"]["id"]
    command = decode_item(command_item("completed", aggregatedOutput="ok", exitCode=0))
    assert command == CommandExecution(
        id="call_hive0", command=COMMAND, aggregated_output="ok", exit_code=0, status="completed"
    )


def test_unknown_methods_and_items_decode_to_the_unknown_values() -> None:
    assert decode_notification("thread/new/thing", {"threadId": THREAD, "x": 1}) == UnknownNotification(
        thread_id=THREAD, method="thread/new/thing"
    )
    assert decode_item({"type": "webSearch", "id": "ws_1", "query": "q"}) == UnknownItem(
        id="ws_1", type="webSearch"
    )
    assert decode_item("not an item") == UnknownItem()
    started = decode_notification("item/started", {"threadId": THREAD, "item": None})
    assert isinstance(started, ItemNotification)
    assert started.item == UnknownItem()


def test_fields_of_the_wrong_type_read_as_absent() -> None:
    item = decode_item(
        {"type": "commandExecution", "id": "c", "command": ["ls"], "exitCode": True, "status": "completed"}
    )
    assert item == CommandExecution(id="c", status="completed")
    change = decode_item(
        {
            "type": "fileChange",
            "id": "f",
            "changes": [{"path": "a.txt", "kind": "add"}, 3, {"path": 4, "diff": "d"}],
        }
    )
    assert change == FileChange(id="f", changes=[FileUpdate(path="a.txt"), FileUpdate(diff="d")])
    usage_update = decode_notification(
        "thread/tokenUsage/updated", {"tokenUsage": {"total": {"inputTokens": "9"}}}
    )
    assert usage_update == TokenUsageUpdated(token_usage=TokenUsage(total=TokenBreakdown()))
