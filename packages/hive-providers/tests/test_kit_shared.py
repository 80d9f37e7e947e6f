"""Pieces of ``backends/kit`` more than one backend calls: the tracker's lookup of a running call by the CLI's
id (Claude's control requests, Pi's and Copilot's questions), the transport's framing and error texts
(line-delimited for ACP, ``Content-Length`` for Copilot), and the subagents a turn shows as ``agent_work``."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import cast

import pytest

from hive_core.child_processes import SupervisedProcess
from hive_protocol import AgentWorkEvent
from hive_protocol import Event
from hive_providers.backends.copilot.transport import FramedTransport
from hive_providers.backends.kit.subagent_work import Subagent
from hive_providers.backends.kit.subagent_work import Subagents
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.kit.transport import ProcessTransport


def test_a_running_call_is_found_by_the_id_the_cli_gave_it() -> None:
    events: list[Event] = []
    tracker = ToolCallTracker(events.append)
    call_id = tracker.upsert(
        {"toolCallId": "toolu_1", "title": "Bash", "kind": "execute", "status": "pending"}
    )
    assert call_id is not None
    assert tracker.running_call_id("toolu_1") == call_id
    assert tracker.running_call_id("toolu_2") is None
    assert tracker.running_call_id(None) is None
    tracker.end(call_id, success=True)
    assert tracker.running_call_id("toolu_1") is None  # an ended call is no longer the one asking


def _without_stdin() -> SupervisedProcess:
    return cast("SupervisedProcess", SimpleNamespace(stdin=None))


def test_the_agent_transport_writes_one_json_line() -> None:
    data = ProcessTransport(_without_stdin()).frame({"id": 1, "text": "é"})
    assert data == '{"id":1,"text":"é"}\n'.encode()


def test_the_copilot_transport_frames_by_content_length() -> None:
    data = FramedTransport(_without_stdin()).frame({"id": 1})
    header, body = data.split(b"\r\n\r\n")
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body) == {"id": 1}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("transport", "text"),
    [
        (ProcessTransport, "the agent's stdin is closed"),
        (FramedTransport, "the Copilot server's stdin is closed"),
    ],
)
async def test_sending_without_stdin_names_the_peer(transport: type[ProcessTransport], text: str) -> None:
    with pytest.raises(ConnectionError, match=text):
        await transport(_without_stdin()).send({"id": 1})


def test_subagents_snapshot_all_and_stopping_shows_only_a_change() -> None:
    events: list[Event] = []
    subagents = Subagents[Subagent](events.append)
    subagents.by_id["a"] = Subagent(item_id="x:a", title="first")
    subagents.by_id["b"] = Subagent(item_id="x:b", status="completed")
    subagents.snapshot()
    [shown] = events
    assert isinstance(shown, AgentWorkEvent)
    assert [(item.id, item.status, item.blocks_completion) for item in shown.items] == [
        ("x:a", "running", True),
        ("x:b", "completed", False),
    ]
    subagents.stop_running()
    assert len(events) == 2
    stopped = events[-1]
    assert isinstance(stopped, AgentWorkEvent)
    assert [item.status for item in stopped.items] == ["stopped", "completed"]
    subagents.stop_running()  # none running any more: nothing new to show
    assert len(events) == 2
