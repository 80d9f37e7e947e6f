"""``hive acp`` against ``hive run --server`` and against claude-agent-acp: the same streamed turn through each,
per-turn time and CPU per chunk.

Run: uv run python benchmarks/acp_agent.py [--turns 10] [--chunks 300] [--no-claude]

Every runner is a process of its own on a fresh hive home, against the scripted model server (in this process's
threads), which answers the benchmark's prompt with ``--chunks`` text chunks (and any other request a CLI sends,
titles and probes, with two). ``hive run --server`` is driven with JSON Lines on stdin and read to each
``turn_end``; the ACP agents by the ``agent-client-protocol`` package's client (``session/new``, then one
``session/prompt`` per turn, every ``session/update`` received; hive sends text that waits while an update is
written merged into the next one, so it prints how many updates carried the chunks). After one warm-up turn each,
``--turns`` turns are timed. Printed per runner: the mean wall time per turn, the front process's CPU (user+system
from ``/proc``) per streamed chunk, and the CPU of the front process and everything under it (the coding-agent CLI,
reaped or alive) per chunk.

Two pairs:
- hive's own loop (OpenAI Responses API): ``hive acp`` against ``hive run --server``. Goal: within 5 %.
- Claude Code 2.1.197 (the CLI ``.ci/agent-clis`` pins, found in ``$HIVE_AGENT_CLIS_BIN``; Anthropic Messages API):
  ``hive acp --agent claude-code`` against ``hive run --server --agent claude-code`` (goal: within 5 %), and
  against claude-agent-acp (pinned there too), Zed's adapter, which drives the same CLI through the
  claude-agent-sdk (``CLAUDE_CODE_EXECUTABLE``) with the environment of hive's own offline Claude Code recipe.
  Goal: less CPU per chunk than claude-agent-acp. Its adapter starts Claude Code with
  ``--allow-dangerously-skip-permissions``, which Claude Code refuses as root unless ``IS_SANDBOX=1``: as root
  the benchmark sets it (the turn calls no tool, so no permission mode is exercised). hive starts one Claude Code
  process per turn; claude-agent-acp keeps one for the session.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from typing import cast

import anyio
from acp import PROTOCOL_VERSION
from acp import Client
from acp import spawn_agent_process
from acp.schema import TextContentBlock

from hive_conformance.agent_clis import agent_clis_bin
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import read_conversation
from hive_conformance.model_server.recording import RecordedRequest
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.offline import OFFLINE_RECIPES
from hive_providers.backends.offline import OfflineContext

HIVE = Path(sys.executable).with_name("hive")
MODEL = "scripted"
PROMPT = "BENCHTURN go"
"""The prompt; a request whose newest user text holds it (and offers tools) gets the long answer."""


def responder(chunks: int) -> Callable[[RecordedRequest], Round]:
    """The turn's answer for the benchmark's prompt, two chunks for anything else (a CLI's titles, probes)."""
    text = [f"w{i} " for i in range(chunks)]

    def respond(request: RecordedRequest) -> Round:
        conversation = read_conversation(request)
        turn = (
            PROMPT in conversation.last_user_text
            and conversation.tools
            and not conversation.tool_result_after
        )
        reply = ScriptText(chunks=text if turn else ["MOCK_REPLY", " ok"])
        return Round(parts=[reply], usage=Usage(input_tokens=10, output_tokens=chunks if turn else 2))

    return respond


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _cpu(pid: int) -> float:
    """A process's own user+system CPU seconds."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree_cpu(pid: int) -> float:
    """User+system CPU seconds of a process and every process under it, with the children each one reaped."""
    stats: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stats[int(entry.name)] = _stat(int(entry.name))
            except (FileNotFoundError, ProcessLookupError):
                continue
    family, found = {pid}, True
    while found:
        found = False
        for each, fields in stats.items():
            if each not in family and int(fields[1]) in family:
                family.add(each)
                found = True
    ticks = sum(
        sum(int(stats[each][index]) for index in (11, 12, 13, 14)) for each in family if each in stats
    )
    return ticks / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Figures:
    """One runner's measurement."""

    per_turn: float
    """Seconds per turn."""
    front_cpu: float
    """CPU seconds per chunk of the process the client talks to."""
    tree_cpu: float
    """CPU seconds per chunk of that process and everything under it."""


class _Clock:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.front, self.tree, self.start = _cpu(pid), _tree_cpu(pid), time.perf_counter()

    def stop(self, turns: int, chunks: int) -> Figures:
        wall = time.perf_counter() - self.start
        front, tree = _cpu(self.pid) - self.front, _tree_cpu(self.pid) - self.tree
        return Figures(wall / turns, front / (turns * chunks), tree / (turns * chunks))


def _hive_env(home: Path, server: ScriptedModelServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HIVE_"))}
    env.update(
        HIVE_HOME=str(home),
        LMSUPPLY_ENABLED="false",
        OPENAI_API_KEY="benchmark",
        OPENAI_MODEL=MODEL,
        OPENAI_ENDPOINT=server.url + "/v1",
        OPENAI_API="responses",
        PATH=f"{agent_clis_bin()}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return env


def _claude_flags(server: ScriptedModelServer) -> list[str]:
    return ["--agent", "claude-code", "--model-endpoint", f"{server.url}/v1", "-m", MODEL]


def run_server(env: dict[str, str], project: Path, flags: Sequence[str], turns: int, chunks: int) -> Figures:
    """``hive run --server``."""
    proc = subprocess.Popen(
        [str(HIVE), "run", "--server", *flags],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=project,
        env=env,
    )
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None
    assert stdout is not None

    def turn() -> None:
        stdin.write(json.dumps({"type": "user_message", "content": PROMPT}).encode() + b"\n")
        stdin.flush()
        for line in stdout:
            event = json.loads(line)
            if event["type"] == "error":
                raise RuntimeError(f"hive run --server: {event}")
            if event["type"] == "turn_end":
                return
        raise RuntimeError("hive run --server ended before the turn did")

    try:
        turn()
        clock = _Clock(proc.pid)
        for _ in range(turns):
            turn()
        figures = clock.stop(turns, chunks)
    finally:
        stdin.close()
        proc.wait(timeout=60)
    return figures


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
    name: str, command: Sequence[str], env: dict[str, str], project: Path, turns: int, chunks: int
) -> Figures:
    """An ACP agent on stdio."""
    client = _Quiet()
    async with spawn_agent_process(cast(Client, client), *command, env=env, cwd=str(project)) as (conn, proc):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        prompt: list[Any] = [TextContentBlock(type="text", text=PROMPT)]
        await conn.prompt(session_id=session.session_id, prompt=prompt)
        clock = _Clock(proc.pid)
        for _ in range(turns):
            await conn.prompt(session_id=session.session_id, prompt=prompt)
        figures = clock.stop(turns, chunks)
    expected = (turns + 1) * len("".join(f"w{i} " for i in range(chunks)))
    if client.text != expected:
        raise RuntimeError(f"{name} streamed {client.text:,} characters of text, not the {expected:,} sent")
    print(f"{name} sent {client.updates} session updates for {(turns + 1) * chunks} model chunks")
    return figures


def claude_agent_acp_env(home: Path, project: Path, server: ScriptedModelServer) -> dict[str, str]:
    """claude-agent-acp's environment: hive's offline Claude Code recipe, the pinned CLI as its executable."""
    endpoint = ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL)
    recipe = OFFLINE_RECIPES["claude-code"](OfflineContext(home=home, cwd=project, endpoint=endpoint))
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "HIVE_", "CLAUDE"))
    }
    env.update(recipe, CLAUDE_CODE_EXECUTABLE=str(agent_clis_bin() / "claude"))
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description="hive acp against hive run --server and claude-agent-acp")
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=300)
    parser.add_argument("--no-claude", action="store_true", help="only hive's own loop")
    args = parser.parse_args()
    turns, chunks = args.turns, args.chunks
    rows: list[tuple[str, Figures]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedModelServer([], model=MODEL, responder=responder(chunks)) as server,
    ):
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        rows.append(
            ("hive run --server", run_server(_hive_env(root / "h1", server), project, [], turns, chunks))
        )
        acp = anyio.run(
            run_acp, "hive acp", [str(HIVE), "acp"], _hive_env(root / "h2", server), project, turns, chunks
        )
        rows.append(("hive acp", acp))
        missing = [
            cli for cli in ("claude", "claude-agent-acp") if not os.access(agent_clis_bin() / cli, os.X_OK)
        ]
        if args.no_claude:
            pass
        elif missing:
            print(
                f"Claude Code rows skipped: {', '.join(missing)} not in {agent_clis_bin()} (run .ci/agent-clis)"
            )
        else:
            flags = _claude_flags(server)
            env = _hive_env(root / "h3", server)
            rows.append(("run --server --agent cc", run_server(env, project, flags, turns, chunks)))
            command = [str(HIVE), "acp", *flags]
            env = _hive_env(root / "h4", server)
            rows.append(
                (
                    "hive acp --agent cc",
                    anyio.run(run_acp, "hive acp --agent cc", command, env, project, turns, chunks),
                )
            )
            (root / "h5").mkdir()
            env = claude_agent_acp_env(root / "h5", project, server)
            command = [str(agent_clis_bin() / "claude-agent-acp")]
            rows.append(
                (
                    "claude-agent-acp",
                    anyio.run(run_acp, "claude-agent-acp", command, env, project, turns, chunks),
                )
            )
    print(f"{turns} turns of {chunks} chunks each (after one warm-up turn); cc = Claude Code")
    print(f"{'runner':<24} {'ms/turn':>9} {'µs CPU/chunk':>13} {'with CLI':>9}")
    for name, figures in rows:
        cells = (figures.per_turn * 1000, figures.front_cpu * 1e6, figures.tree_cpu * 1e6)
        print(f"{name:<24} {cells[0]:>9.1f} {cells[1]:>13.1f} {cells[2]:>9.1f}")
    found = dict(rows)

    def ratio(a: str, b: str) -> None:
        if a in found and b in found:
            x, y = found[a], found[b]
            print(
                f"{a} / {b}: {x.per_turn / y.per_turn:.2f}x per turn, {x.front_cpu / y.front_cpu:.2f}x CPU per "
                f"chunk, {x.tree_cpu / y.tree_cpu:.2f}x with the CLI"
            )

    ratio("hive acp", "hive run --server")
    ratio("hive acp --agent cc", "run --server --agent cc")
    ratio("hive acp --agent cc", "claude-agent-acp")


if __name__ == "__main__":
    main()
