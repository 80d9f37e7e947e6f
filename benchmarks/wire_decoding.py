"""CPU per streamed text delta of each coding-agent backend's mapper: decoding the parsed wire message into its
typed structs and mapping it to a hive ``text_delta``, beside a plain ``json``-dict baseline in the same process.

Run: uv run python benchmarks/wire_decoding.py

Each CLI's recorded delta message (already parsed, as its transport hands it over) is fed to its mapper the way
the backend does. The baseline walks the same dict by hand and builds the same ``TextDeltaEvent``: what mapping
cost before the wires were typed, so the ratio is the price of decoding.
"""

from __future__ import annotations

import time
import timeit
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import Final

from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_providers.backends.acp.update_types import decode_update
from hive_providers.backends.acp.updates import TurnMapper
from hive_providers.backends.claude.messages import decode_message
from hive_providers.backends.claude.stream import StreamMapper
from hive_providers.backends.codex import TurnItems
from hive_providers.backends.codex.wire import decode_notification
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.opencode import wire as opencode_wire
from hive_providers.backends.opencode.events import OpenCodeEventMapper
from hive_providers.backends.pi import PiEventMapper
from hive_providers.backends.pi.wire import decode_event as decode_pi_event

NUMBER: Final = 20_000
REPEAT: Final = 5

CLAUDE: Final[dict[str, Any]] = {
    "type": "stream_event",
    "uuid": "6c1e2a0b-8f3d-4e51-9a7c-2b4d6e8f0a1c",
    "session_id": "0f3c9a7e-5b2d-4c1a-8e6f-0b9d7c5a3e1f",
    "parent_tool_use_id": None,
    "event": {
        "type": "content_block_delta",
        "index": 0,
        "delta": {"type": "text_delta", "text": "Hello, wor"},
    },
}
PI: Final[dict[str, Any]] = {
    "type": "message_update",
    "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "Hello, wor"},
}
OPENCODE: Final[dict[str, Any]] = {
    "type": "message.part.delta",
    "properties": {
        "sessionID": "ses_1",
        "messageID": "msg_2",
        "partID": "prt_3",
        "field": "text",
        "delta": "Hello, wor",
    },
}
ACP: Final[dict[str, Any]] = {
    "sessionUpdate": "agent_message_chunk",
    "content": {"type": "text", "text": "Hello, wor"},
}
CODEX: Final[tuple[str, dict[str, Any]]] = (
    "item/agentMessage/delta",
    {"threadId": "thr_1", "turnId": "turn_1", "itemId": "msg_1", "delta": "Hello, wor"},
)


def _sink() -> Callable[[Event], None]:
    events: list[Event] = []

    def emit(event: Event) -> None:
        events.append(event)
        if len(events) > 1000:
            events.clear()

    return emit


def _opencode(emit: Callable[[Event], None]) -> OpenCodeEventMapper:
    mapper = OpenCodeEventMapper(emit, ToolCallTracker(emit), "ses_1")
    started = {"type": "message.updated", "properties": {"info": {"id": "msg_2", "role": "assistant"}}}
    mapper.on_event(opencode_wire.decode_event(started))
    return mapper


MAPPERS: Final[dict[str, tuple[Callable[[Callable[[Event], None]], Any], Callable[[Any], None]]]] = {
    "claude": (
        lambda emit: StreamMapper(emit, ToolCallTracker(emit)),
        lambda mapper: mapper.on_message(decode_message(CLAUDE)),
    ),
    "pi": (
        lambda emit: PiEventMapper(emit, ToolCallTracker(emit)),
        lambda mapper: mapper.on_event(decode_pi_event(PI)),
    ),
    "opencode": (_opencode, lambda mapper: mapper.on_event(opencode_wire.decode_event(OPENCODE))),
    "acp": (
        lambda emit: TurnMapper(emit, ToolCallTracker(emit)),
        lambda mapper: mapper.on_update(decode_update(ACP)),
    ),
    "codex": (
        lambda emit: TurnItems(emit, ToolCallTracker(emit)),
        lambda mapper: mapper.on_notification(decode_notification(*CODEX)),
    ),
}
"""Per CLI: its mapper (writing to a sink), and the feeding of one delta to it the way its backend does."""


def baseline() -> Callable[[], None]:
    """Claude's delta mapped from the dict by hand (the same walk any CLI's takes, one level more or less)."""
    emit = _sink()

    def run() -> None:
        message: Mapping[str, Any] = CLAUDE
        if message.get("type") != "stream_event" or message.get("parent_tool_use_id") is not None:
            return
        event = message.get("event")
        if not isinstance(event, dict) or event.get("type") != "content_block_delta":
            return
        delta: Any = event.get("delta")
        if isinstance(delta, dict) and delta.get("type") == "text_delta":
            text = delta.get("text")
            if isinstance(text, str) and text:
                emit(TextDeltaEvent(content=text))

    return run


def per_call(run: Callable[[], None]) -> float:
    """The best µs per call of :data:`REPEAT` runs, in this process's CPU time (the other processes of a shared
    machine take the wall clock, not this)."""
    return min(timeit.repeat(run, timer=time.process_time, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e6


def main() -> None:
    base = per_call(baseline())
    print(f"{'baseline (json dict)':<22} {base:6.2f} µs/delta")
    for name, (make, feed) in MAPPERS.items():
        mapper = make(_sink())
        cost = per_call(lambda mapper=mapper, feed=feed: feed(mapper))
        print(f"{name:<22} {cost:6.2f} µs/delta  x{cost / base:4.1f}")


if __name__ == "__main__":
    main()
