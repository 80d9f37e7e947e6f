"""Copilot's ``session.event`` decoder: the recorded events decode to their kinds, an unknown or malformed one to
the unknown value, a field of the wrong type reads as absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hive_providers.backends.copilot.event_types import AssistantMessage
from hive_providers.backends.copilot.event_types import MessageDelta
from hive_providers.backends.copilot.event_types import PermissionRequested
from hive_providers.backends.copilot.event_types import SessionEvent
from hive_providers.backends.copilot.event_types import SessionIdle
from hive_providers.backends.copilot.event_types import ToolError
from hive_providers.backends.copilot.event_types import ToolExecutionComplete
from hive_providers.backends.copilot.event_types import ToolExecutionStart
from hive_providers.backends.copilot.event_types import ToolResult
from hive_providers.backends.copilot.event_types import Usage
from hive_providers.backends.copilot.event_types import UserInputRequested
from hive_providers.backends.copilot.event_types import decode_session_event
from hive_providers.backends.kit.wire import Unknown

_TRANSCRIPTS = Path(__file__).parent / "acp_transcripts"


def _recorded_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for path in sorted(_TRANSCRIPTS.glob("copilot-server-*.jsonl")):
        for line in path.read_text().splitlines():
            try:
                step = json.loads(line)
            except ValueError:
                continue
            message = step.get("message") if isinstance(step, dict) else None
            if isinstance(message, dict) and message.get("method") == "session.event":
                events.append(message["params"]["event"])
    return events


def test_every_recorded_event_decodes_to_its_kind() -> None:
    kinds = {
        "assistant.message_delta": MessageDelta,
        "assistant.usage": Usage,
        "session.idle": SessionIdle,
        "tool.execution_complete": ToolExecutionComplete,
        "tool.execution_start": ToolExecutionStart,
        "user_input.requested": UserInputRequested,
    }
    events = _recorded_events()
    assert {event["type"] for event in events} == set(kinds)
    for event in events:
        decoded = decode_session_event(event)
        assert type(decoded.data) is kinds[event["type"]], event
    delta = decode_session_event(
        {"type": "assistant.message_delta", "data": {"deltaContent": "hi", "messageId": "m1", "new": 1}}
    )
    assert delta == SessionEvent(data=MessageDelta(delta_content="hi", message_id="m1"))


def test_unknown_and_malformed_events_decode_to_the_unknown_value() -> None:
    assert decode_session_event({"type": "session.compaction_start", "data": {}}) == SessionEvent(
        data=Unknown("session.compaction_start", {"type": "session.compaction_start"})
    )
    assert decode_session_event({"type": 3}) == SessionEvent(data=Unknown(None, {}))
    assert decode_session_event("junk") == SessionEvent(data=Unknown(None, {}))
    idle = decode_session_event({"type": "session.idle", "data": "not an object", "agentId": "a1"})
    assert idle == SessionEvent(data=SessionIdle(), agent_id="a1")


def test_fields_of_the_wrong_type_read_as_absent() -> None:
    done = decode_session_event(
        {
            "type": "tool.execution_complete",
            "data": {
                "toolCallId": "t",
                "success": "yes",
                "result": {"content": 5},
                "error": {"message": "no"},
            },
        }
    )
    assert done.data == ToolExecutionComplete(
        tool_call_id="t", result=ToolResult(), error=ToolError(message="no")
    )
    usage = decode_session_event(
        {"type": "assistant.usage", "data": {"inputTokens": True, "outputTokens": 4}}
    )
    assert usage.data == Usage(output_tokens=4)
    message = decode_session_event(
        {"type": "assistant.message", "data": {"content": ["x"], "messageId": "m"}}
    )
    assert message.data == AssistantMessage(message_id="m")
    asked = decode_session_event(
        {"type": "permission.requested", "data": {"requestId": 1, "permissionRequest": []}}
    )
    assert asked.data == PermissionRequested()
