"""What the sandbox adds to a command: ``true`` through ``execute_command`` with and without bubblewrap.

Run: uv run python benchmarks/sandbox.py [N]

Runs ``true`` N times (default 200) through the tool in one process, unconfined (``sandbox.mode: off``) and in
the ``workspace-write`` sandbox, alternating in rounds so that load on the machine falls on both alike, and prints
wall-clock milliseconds per command (median of the rounds) for each and the difference. The goal is a sandbox
that adds under 20 ms per command. Without a usable bubblewrap it says why and measures the unconfined run only.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from hive_core.builtin_tools import execute_command_tool
from hive_core.sandbox import SandboxMode, SandboxSettings, probe_bubblewrap
from hive_core.tools import Tool, ToolContext

ROUNDS = 10


async def per_command_ms(tool: Tool, context: ToolContext, count: int) -> float:
    start = time.perf_counter()
    for _ in range(count):
        outcome = await tool.invoke({"command": "true"}, context)
        assert outcome.content == "Exit code: 0", outcome.content
    return (time.perf_counter() - start) / count * 1000


async def main(total: int) -> None:
    probe = probe_bubblewrap()
    modes: list[SandboxMode] = ["off", "workspace-write"] if probe.usable else ["off"]
    tools: dict[SandboxMode, Tool] = {
        mode: execute_command_tool(SandboxSettings(mode=mode)) for mode in modes
    }
    per_round = max(1, total // ROUNDS)
    with tempfile.TemporaryDirectory() as project:
        context = ToolContext("bench", "execute_command", Path(project), lambda event: None)
        for tool in tools.values():  # warm up: the probe, imports, the page cache
            await per_command_ms(tool, context, 3)
        runs: dict[SandboxMode, list[float]] = {mode: [] for mode in modes}
        for _ in range(ROUNDS):
            for mode, tool in tools.items():
                runs[mode].append(await per_command_ms(tool, context, per_round))
    print(
        f"`true` through execute_command, {per_round * ROUNDS} runs per mode, ms per command (median of rounds)"
    )
    unconfined = statistics.median(runs["off"])
    print(f"  unconfined (sandbox.mode: off)  {unconfined:7.2f} ms")
    if not probe.usable:
        print(f"  sandboxed: not measured, {probe.problem}")
        return
    sandboxed = statistics.median(runs["workspace-write"])
    print(f"  sandboxed (workspace-write)     {sandboxed:7.2f} ms  ({probe.version})")
    print(
        f"  the sandbox adds                {sandboxed - unconfined:7.2f} ms per command (goal: under 20 ms)"
    )


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
