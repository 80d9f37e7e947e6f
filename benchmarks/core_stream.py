"""Per-delta cost of hive's streaming path: scripted model → agent loop → stdio runner's writer.

Run: uv run python benchmarks/core_stream.py

Streams 20,000 text deltas and prints CPU microseconds per delta (process time, so other load on the machine
does not count) for:
- floor: a bare async generator feeding ``hive_protocol.encode`` (no loop, no runner);
- hive → memory: the agent loop and the runner's turn guarantees, writing each line to an in-memory buffer;
- hive → /dev/null: the same through ``StdioRunner.write`` to a real file (a write and flush per line);
- hive recorded → memory: as "hive → memory", the turn recorded in a SQLite session store as ``hive`` records it
  (its messages and the execution log's records, one row each; none per delta).
"""

from __future__ import annotations

import io
import os
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from hive_core import Agent
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core import TextUpdate
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import FinishUpdate
from hive_core.chat import UsageUpdate
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_protocol import TextDeltaEvent
from hive_protocol import UserMessageRequest
from hive_protocol import encode

DELTAS = 20_000
REPEATS = 7


async def floor() -> float:
    async def deltas() -> AsyncIterator[str]:
        for _ in range(DELTAS):
            yield "tok "

    sink = io.BytesIO()
    start = time.process_time()
    async for text in deltas():
        sink.write(encode(TextDeltaEvent(content=text)))
    return time.process_time() - start


async def through_hive(stdout: io.RawIOBase | io.BufferedIOBase) -> float:
    updates = [TextUpdate("tok ") for _ in range(DELTAS)]
    client = ScriptedChatClient([ScriptedRound([*updates, FinishUpdate("stop")])])
    session = Agent(client, clock=lambda: 0.0, policy=ALLOW_ALL).session()
    runner = StdioRunner(SessionRunner(session, session_id="bench"), stdout=stdout)  # type: ignore[arg-type]
    start = time.process_time()
    await runner.session.run_turn(UserMessageRequest(content="go"), runner.write)
    return time.process_time() - start


async def recorded(stdout: io.BytesIO) -> float:
    updates = [TextUpdate("tok ") for _ in range(DELTAS)]
    client = ScriptedChatClient([ScriptedRound([*updates, UsageUpdate(10, DELTAS), FinishUpdate("stop")])])
    session = Agent(client, clock=lambda: 0.0, policy=ALLOW_ALL).session()
    with (
        tempfile.TemporaryDirectory() as temporary,
        SqliteSessionStore(Path(temporary) / "sessions.db") as store,
    ):
        info = store.create(project_path=temporary)
        recorder = TranscriptRecorder(session, store, info.id, model="bench")
        runner = StdioRunner(SessionRunner(recorder, session_id=info.id), stdout=stdout)  # type: ignore[arg-type]
        start = time.process_time()
        await runner.session.run_turn(UserMessageRequest(content="go"), runner.write)
        spent = time.process_time() - start
        kept = [entry.kind for entry in store.entries(info.id) if entry.kind in ("message", "turn_end")]
        assert kept[-2:] == ["message", "turn_end"]  # the execution log's entries lie between and after them
    return spent


def median_us(runs: list[float]) -> float:
    return statistics.median(runs) / DELTAS * 1e6


async def main() -> None:
    floors = [await floor() for _ in range(REPEATS)]
    memory = [await through_hive(io.BytesIO()) for _ in range(REPEATS)]
    with open(os.devnull, "wb", buffering=0) as devnull:  # noqa: ASYNC230 - /dev/null never blocks
        null = [await through_hive(devnull) for _ in range(REPEATS)]
    logged = [await recorded(io.BytesIO()) for _ in range(REPEATS)]
    base = median_us(floors)
    print(f"{DELTAS} text deltas, median of {REPEATS} runs")
    print(f"floor (async generator + encode): {base:6.2f} us/delta")
    for name, runs in (
        ("hive loop + runner -> memory", memory),
        ("hive loop + runner -> /dev/null", null),
        ("hive recorded -> memory", logged),
    ):
        us = median_us(runs)
        print(f"{name:32s}: {us:6.2f} us/delta   {us / base:5.1f}x floor")


if __name__ == "__main__":
    anyio.run(main)
