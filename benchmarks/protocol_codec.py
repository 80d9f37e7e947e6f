"""Encode and decode throughput of hive_protocol for a typical turn, beside the standard library's json.

Run: uv run python benchmarks/protocol_codec.py

The baseline does the same job with ``json``: dumping plain dicts (already built, so it is spared the work of
turning structs into dicts) and loading lines into dicts (spared any type checking), so the ratios are a floor
on hive_protocol's advantage.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import msgspec

import hive_protocol as hp


def typical_turn() -> list[hp.Event]:
    """One turn: thinking, streamed text, five tool calls (one asked), more text, an addendum, turn_end."""
    events: list[hp.Event] = [
        hp.SessionStartedEvent(session_id="0f3c9a7e5b2d4c1a8e6f0b9d7c5a3e1f", protocol_version=1)
    ]
    events += [hp.ThinkingDeltaEvent(content=f"considering step {i} of the plan") for i in range(20)]
    events += [hp.TextDeltaEvent(content=f"word{i} ") for i in range(120)]
    for i in range(5):
        call = f"call_{i:04d}"
        args = {"path": f"src/module_{i}.py", "start_line": 10 * i, "line_count": 40}
        events.append(hp.ToolStartEvent(tool="read_file", input=args, call_id=call))
        if i == 2:
            events.append(
                hp.HitlRequestEvent(
                    id=f"hitl-{call}",
                    action="edit",
                    target=args["path"],
                    description="Allow this edit?",
                    tool_name="read_file",
                    arguments=args,
                    call_id=call,
                    level="medium",
                )
            )
        output = "\n".join(f"{n:4d}  line of source code with some content é" for n in range(40))
        events.append(hp.ToolEndEvent(tool="read_file", success=True, output=output, call_id=call))
    events += [hp.TextDeltaEvent(content=f"more{i} ") for i in range(80)]
    events.append(hp.AddendumEvent(content="2 files changed"))
    events.append(
        hp.TurnEndEvent(
            input_tokens=5120, output_tokens=812, total_tokens=5932, stop_reason="completed", duration_ms=8123
        )
    )
    return events


def rate(work: Callable[[], object], count: int, seconds: float = 1.0) -> float:
    """Events per second of ``work`` (which handles ``count`` events), best of three timed runs."""
    work()
    best = float("inf")
    for _ in range(3):
        loops, start = 0, time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds / 3:
            work()
            loops += 1
        best = min(best, elapsed / loops)
    return count / best


def main() -> None:
    events = typical_turn()
    lines = [hp.encode(e) for e in events]
    dicts: list[dict[str, Any]] = [json.loads(line) for line in lines]
    n = len(events)

    def hive_encode() -> None:
        for event in events:
            hp.encode(event)

    def json_encode() -> None:
        for d in dicts:
            json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"

    def hive_decode() -> None:
        for line in lines:
            hp.decode_event(line)

    def json_decode() -> None:
        for line in lines:
            json.loads(line)

    assert all(
        json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode() + b"\n" == line
        for d, line in zip(dicts, lines, strict=True)
    )
    size = sum(map(len, lines))
    print(f"typical turn: {n} events, {size} bytes; msgspec {msgspec.__version__}")
    for name, ours, base in (("encode", hive_encode, json_encode), ("decode", hive_decode, json_decode)):
        a, b = rate(ours, n), rate(base, n)
        print(f"{name}: hive_protocol {a:>12,.0f} events/s   json {b:>12,.0f} events/s   ratio {a / b:5.2f}x")


if __name__ == "__main__":
    main()
