"""``hive acp`` against ``hive run --server``: the same streamed turn through each, per-turn time and CPU per chunk.

Run: uv run python benchmarks/acp_agent.py [--turns 10] [--chunks 300]

Both are processes of their own on a fresh hive home, against the scripted model server (OpenAI Responses API, in
this process's threads), each turn answered with ``--chunks`` text chunks. ``hive run --server`` is driven with
JSON Lines on stdin and read to each ``turn_end``; ``hive acp`` by the ``agent-client-protocol`` package's client
(``session/new``, then one ``session/prompt`` per turn, every ``session/update`` received; text that waits
while an update is written goes out merged in the next one, so it prints how many updates carried the chunks). After one warm-up turn
each, ``--turns`` turns are timed. Printed per runner: the mean wall time per turn, the server process's CPU
(user+system from ``/proc``) per streamed chunk, and the ACP figures as a ratio of the stdio ones. The goal: within
5 % of ``run --server``.

``hive acp --agent claude-code`` is not measured here: Claude Code's offline turn spends its time in the CLI, not in
the adapter, and the real-CLI tests cover its path.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from typing import cast

import anyio
from acp import PROTOCOL_VERSION
from acp import Client
from acp import spawn_agent_process
from acp.schema import TextContentBlock

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage

HIVE = Path(sys.executable).with_name("hive")
MODEL = "scripted"


def _round(chunks: int) -> Round:
    return Round(
        parts=[ScriptText(chunks=[f"w{i} " for i in range(chunks)])],
        usage=Usage(input_tokens=10, output_tokens=chunks),
    )


def _cpu(pid: int) -> float:
    """A process's user+system CPU seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env(home: Path, server: ScriptedModelServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HIVE_"))}
    env.update(
        HIVE_HOME=str(home),
        LMSUPPLY_ENABLED="false",
        OPENAI_API_KEY="benchmark",
        OPENAI_MODEL=MODEL,
        OPENAI_ENDPOINT=server.url + "/v1",
        OPENAI_API="responses",
    )
    return env


def run_server(
    server: ScriptedModelServer, project: Path, home: Path, turns: int, chunks: int
) -> tuple[float, float]:
    """``hive run --server``: (seconds per turn, CPU seconds per chunk)."""
    proc = subprocess.Popen(
        [str(HIVE), "run", "--server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=project,
        env=_env(home, server),
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None
    assert stdout is not None

    def turn() -> None:
        stdin.write(json.dumps({"type": "user_message", "content": "go"}).encode() + b"\n")
        stdin.flush()
        for line in stdout:
            if json.loads(line)["type"] == "turn_end":
                return
        raise RuntimeError("hive run --server ended before the turn did")

    try:
        server.add(_round(chunks))
        turn()
        for _ in range(turns):
            server.add(_round(chunks))
        cpu, start = _cpu(proc.pid), time.perf_counter()
        for _ in range(turns):
            turn()
        wall, used = time.perf_counter() - start, _cpu(proc.pid) - cpu
    finally:
        stdin.close()
        proc.wait(timeout=60)
    return wall / turns, used / (turns * chunks)


class _Quiet:
    """A client that takes every update and is asked nothing."""

    def __init__(self) -> None:
        self.updates = 0
        self.text = 0

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates += 1
        if update.session_update == "agent_message_chunk":
            self.text += len(update.content.text)

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark's turn asks nothing")


async def run_acp(
    server: ScriptedModelServer, project: Path, home: Path, turns: int, chunks: int
) -> tuple[float, float]:
    """``hive acp``: (seconds per turn, CPU seconds per chunk)."""
    client = _Quiet()
    async with spawn_agent_process(
        cast(Client, client), str(HIVE), "acp", env=_env(home, server), cwd=str(project)
    ) as (conn, proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        prompt: list[Any] = [TextContentBlock(type="text", text="go")]
        server.add(_round(chunks))
        await conn.prompt(session_id=session.session_id, prompt=prompt)
        for _ in range(turns):
            server.add(_round(chunks))
        cpu, start = _cpu(proc.pid), time.perf_counter()
        for _ in range(turns):
            await conn.prompt(session_id=session.session_id, prompt=prompt)
        wall, used = time.perf_counter() - start, _cpu(proc.pid) - cpu
    expected = len("".join(f"w{i} " for i in range(chunks)))
    assert client.text == (turns + 1) * expected, (client.text, expected)
    print(f"hive acp sent {client.updates} session updates for {(turns + 1) * chunks} model chunks")
    return wall / turns, used / (turns * chunks)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="hive acp against hive run --server: per-turn time, CPU per chunk"
    )
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedModelServer([], model=MODEL) as server:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        stdio = run_server(server, project, root / "home-stdio", args.turns, args.chunks)
        acp = anyio.run(run_acp, server, project, root / "home-acp", args.turns, args.chunks)
    print(f"{args.turns} turns of {args.chunks} chunks each (after one warm-up turn)")
    print(f"{'runner':<20} {'ms/turn':>10} {'µs CPU/chunk':>14}")
    for name, (per_turn, per_chunk) in (("hive run --server", stdio), ("hive acp", acp)):
        print(f"{name:<20} {per_turn * 1000:>10.1f} {per_chunk * 1e6:>14.1f}")
    print(
        f"hive acp / run --server: {acp[0] / stdio[0]:.2f}x per turn, {acp[1] / stdio[1]:.2f}x CPU per chunk"
    )


if __name__ == "__main__":
    main()
