"""CPU per streamed delta with tracing off and on: scripted model → agent loop → runner → in-memory buffer.

Run: uv run python benchmarks/tracing.py

Streams 20,000 text deltas in one turn and prints CPU microseconds per delta (process time, so other load on the
machine does not count), the median of several runs, for:
- floor: a bare async generator feeding ``hive_protocol.encode`` (no loop, no runner), the same-run baseline;
- tracing off: the loop and runner as a host without a destination runs them (hive-core's no-op tracer, the
  model client not wrapped);
- tracing on: an OpenTelemetry tracer provider exporting to memory, the client wrapped in a
  ``TracedChatClient`` (one ``invoke_agent`` and one ``chat`` span per turn, nothing per delta but a type check);
- tracing on + content: as above, with message content captured (the reply's text kept for the span).
Also: whether any ``opentelemetry`` module was loaded before the tracing runs started (it must not be).
"""

from __future__ import annotations

import io
import sys
import time

import anyio

# The floor and the per-delta figure are core_stream's, so the two benchmarks' figures compare.
from core_stream import DELTAS
from core_stream import floor
from core_stream import median_us

from hive_core import Agent
from hive_core import ChatClient
from hive_core import SessionRunner
from hive_core import StdioRunner
from hive_core import TextUpdate
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import FinishUpdate
from hive_core.chat import UsageUpdate
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.tracing import TracedChatClient
from hive_core.tracing import install_tracer
from hive_protocol import UserMessageRequest

REPEATS = 11


async def turn(*, traced: bool) -> float:
    updates = [TextUpdate("tok ") for _ in range(DELTAS)]
    client: ChatClient = ScriptedChatClient(
        [ScriptedRound([*updates, UsageUpdate(10, DELTAS), FinishUpdate("stop")])]
    )
    if traced:
        client = TracedChatClient(client, provider="openai", model="bench")
    session = Agent(client, clock=lambda: 0.0, policy=ALLOW_ALL).session()
    runner = StdioRunner(SessionRunner(session, session_id="bench"), stdout=io.BytesIO())  # type: ignore[arg-type]
    start = time.process_time()
    await runner.session.run_turn(UserMessageRequest(content="go"), runner.write)
    return time.process_time() - start


async def main() -> None:
    floors: list[float] = []
    off: list[float] = []
    for _ in range(REPEATS):
        floors.append(await floor())
        off.append(await turn(traced=False))
    loaded_while_off = sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry")

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from hive_cli.telemetry import OtelTracer

    on: list[float] = []
    content: list[float] = []
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    plain, capturing = OtelTracer(provider), OtelTracer(provider, capture_content=True)
    # Interleaved, so that a change in the machine's load touches every variant alike.
    for _ in range(REPEATS):
        install_tracer(None)
        off.append(await turn(traced=False))
        install_tracer(plain)
        on.append(await turn(traced=True))
        install_tracer(capturing)
        content.append(await turn(traced=True))
    install_tracer(None)
    spans = {span.name for span in exporter.get_finished_spans()}
    assert spans == {"invoke_agent hive", "chat bench"}, spans
    provider.shutdown()

    base = median_us(floors)
    print(f"{DELTAS} text deltas in one turn, median of {REPEATS} runs each (CPU time)")
    print(f"opentelemetry modules loaded while off: {len(loaded_while_off)}")
    print(f"{'floor (async generator + encode)':32s}: {base:6.2f} us/delta")
    reference = median_us(off)
    for name, runs in (
        ("tracing off", off),
        ("tracing on (in-memory exporter)", on),
        ("tracing on + message content", content),
    ):
        us = median_us(runs)
        print(
            f"{name:32s}: {us:6.2f} us/delta   {us / base:5.2f}x floor   {us / reference:5.3f}x tracing off"
        )


if __name__ == "__main__":
    anyio.run(main)
