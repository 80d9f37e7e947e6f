"""Codex sub-agents as ``agent_work``: the notifications of a ``spawn_agent`` + ``wait_agent`` turn (recorded from
Codex 0.171.0 app-server against the scripted model, trimmed of fields hive does not read) replayed by a fake
app-server (a real subprocess) through :class:`CodexBackend`, and the mapper on hand-written items: a spawn that
failed, ``subAgentActivity``, threads that are no sub-agent's, a cancelled turn.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest
from backend_harness import clean
from codex_fake_server import SERVER

from hive_core.runners import collect_turn
from hive_protocol import AgentWorkEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.codex.subagents import SubThreads
from hive_providers.backends.codex.wire import ItemNotification
from hive_providers.backends.codex.wire import UnknownItem
from hive_providers.backends.codex.wire import UnknownNotification
from hive_providers.backends.codex.wire import decode_item
from hive_providers.backends.codex.wire import decode_notification
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.registry import resolve_backend

MAIN: Final = "01a2327f-a064-7953-b52c-715d736f02c7"
CHILD: Final = "01a2327f-a0d9-7101-b188-a83a17a9dbb0"
TURN: Final = "01a2327f-a075-7cb0-8e6f-cf06d3b15b53"
CHILD_TURN: Final = "01a2327f-a0df-79e1-846d-7dae1b907c64"


def collab(
    item_id: str, tool: str, status: str, receivers: list[str], states: dict[str, Any], **more: Any
) -> dict[str, Any]:
    return {
        "type": "collabAgentToolCall",
        "id": item_id,
        "tool": tool,
        "status": status,
        "senderThreadId": MAIN,
        "receiverThreadIds": receivers,
        "agentsStates": states,
        **more,
    }


def on(thread: str, turn: str, method: str, **params: Any) -> dict[str, Any]:
    return {"method": method, "params": {"threadId": thread, "turnId": turn, **params}}


def notify(threads: SubThreads, method: str, params: dict[str, Any]) -> bool:
    return threads.on_notification(decode_notification(method, params))


def agent_message(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "agentMessage", "id": item_id, "text": text, "phase": None}


# The turn of "SPAWN WAIT please": spawn_agent (the child thread runs "CHILDTASK say hello"), wait_agent, reply.
RECORDED: Final[list[dict[str, Any]]] = [
    {
        "method": "turn/started",
        "params": {"threadId": MAIN, "turn": {"id": TURN, "rootTurnId": TURN, "status": "inProgress"}},
    },
    on(
        MAIN,
        TURN,
        "item/started",
        item=collab("call_sp0", "spawnAgent", "inProgress", [], {}, prompt="CHILDTASK say hello"),
    ),
    {
        "method": "thread/status/changed",
        "params": {"threadId": CHILD, "status": {"type": "active", "activeFlags": []}},
    },
    on(
        MAIN,
        TURN,
        "item/completed",
        item=collab(
            "call_sp0",
            "spawnAgent",
            "completed",
            [CHILD],
            {CHILD: {"status": "pendingInit", "message": None}},
            prompt="CHILDTASK say hello",
            model="local-model",
        ),
    ),
    {
        "method": "turn/started",
        "params": {"threadId": CHILD, "turn": {"id": CHILD_TURN, "rootTurnId": TURN, "status": "inProgress"}},
    },
    on(MAIN, TURN, "item/started", item=collab("call_w1", "wait", "inProgress", [CHILD], {})),
    on(CHILD, CHILD_TURN, "item/started", item=agent_message("msg_scripted_2_0", "")),
    on(CHILD, CHILD_TURN, "item/agentMessage/delta", itemId="msg_scripted_2_0", delta="child"),
    on(CHILD, CHILD_TURN, "item/completed", item=agent_message("msg_scripted_2_0", "child says hi")),
    on(
        CHILD,
        CHILD_TURN,
        "thread/tokenUsage/updated",
        tokenUsage={
            "total": {"inputTokens": 10, "outputTokens": 5},
            "last": {"inputTokens": 10, "outputTokens": 5},
        },
    ),
    {
        "method": "turn/completed",
        "params": {"threadId": CHILD, "turn": {"id": CHILD_TURN, "status": "completed"}},
    },
    on(
        MAIN,
        TURN,
        "item/completed",
        item=collab(
            "call_w1",
            "wait",
            "completed",
            [CHILD],
            {CHILD: {"status": "completed", "message": "child says hi"}},
        ),
    ),
    on(MAIN, TURN, "item/completed", item=agent_message("msg_scripted_3_0", "MOCK_REPLY ok")),
    {"method": "turn/completed", "params": {"threadId": MAIN, "turn": {"id": TURN, "status": "completed"}}},
]


@pytest.mark.anyio
async def test_a_spawned_agent_is_one_work_item_from_start_to_its_last_text(tmp_path: Path) -> None:
    recorded = tmp_path / "recorded.json"
    recorded.write_text(json.dumps({"thread": MAIN, "turn": TURN, "notifications": RECORDED}))
    options = BackendOptions(
        cwd=tmp_path,
        executable=sys.executable,
        arguments=(str(SERVER), "replay", str(recorded)),
        startup_timeout=10.0,
    )
    backend = CodexBackend(resolve_backend("codex"), options)
    try:
        with anyio.fail_after(30):
            events = clean(await collect_turn(backend, "SPAWN WAIT please"))
    finally:
        await backend.aclose()
    # The child's text is its own, never the turn's.
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "MOCK_REPLY ok"
    snapshots = [e for e in events if isinstance(e, AgentWorkEvent)]
    assert snapshots, events
    assert {item.id for snapshot in snapshots for item in snapshot.items} == {f"codex:{CHILD}"}
    first, last = snapshots[0].items[0], snapshots[-1].items[0]
    assert (first.status, first.title, first.kind) == ("running", "CHILDTASK say hello", "subagent")
    assert (last.status, last.summary, last.input_tokens, last.output_tokens) == (
        "completed",
        "child says hi",
        10,
        5,
    )
    # The latest text as it streams: the delta first, then the whole message.
    running = [item.summary for snapshot in snapshots for item in snapshot.items if item.status == "running"]
    assert running.index("child") < running.index("child says hi")
    # Every snapshot differs from the one before it.
    assert all(a != b for a, b in itertools.pairwise(snapshots))
    assert isinstance(events[-1], TurnEndEvent)


def test_a_failed_spawn_activities_strangers_and_a_cancel() -> None:
    events: list[Event] = []
    threads = SubThreads(MAIN)
    threads.emit = events.append
    notify(threads, "turn/started", {"threadId": MAIN, "turn": {"id": TURN}})
    # A spawn that failed before it had a thread: the call's own id.
    threads.on_item(decode_item(collab("call_bad", "spawnAgent", "failed", [], {}, prompt="never ran")))
    # A thread that is no sub-agent of this turn: ignored.
    assert not notify(
        threads, "turn/started", {"threadId": "stranger", "turn": {"id": "t9", "rootTurnId": "another"}}
    )
    assert not threads.knows("stranger")
    # A child started on its own (multi_agent_v2's activity items), then seen running a tool.
    threads.on_item(
        decode_item(
            {
                "type": "subAgentActivity",
                "id": "a1",
                "agentThreadId": "kid",
                "agentPath": "/root/kid",
                "kind": "started",
            }
        )
    )
    assert notify(
        threads,
        "item/completed",
        {"threadId": "kid", "item": {"type": "commandExecution", "id": "c", "status": "completed"}},
    )
    threads.stop_running()
    final = events[-1]
    assert isinstance(final, AgentWorkEvent)
    by_id = {item.id: item for item in final.items}
    assert (by_id["codex:call_bad"].status, by_id["codex:call_bad"].title) == ("failed", "never ran")
    assert (by_id["codex:kid"].status, by_id["codex:kid"].title, by_id["codex:kid"].tool_calls) == (
        "stopped",
        "/root/kid",
        1,
    )
    # Nothing changed: no new snapshot.
    count = len(events)
    threads.flush()
    assert len(events) == count


def test_every_recorded_notification_decodes_with_its_thread_and_items() -> None:
    for message in RECORDED:
        decoded = decode_notification(message["method"], message["params"])
        unknown = message["method"].startswith("thread/") and message["method"] != "thread/tokenUsage/updated"
        assert isinstance(decoded, UnknownNotification) == unknown, message
        assert decoded.thread_id == message["params"]["threadId"]
        if isinstance(decoded, ItemNotification):
            item = message["params"]["item"]
            known = item["type"] in ("agentMessage", "collabAgentToolCall", "commandExecution", "fileChange")
            assert isinstance(decoded.item, UnknownItem) != known, item
