"""Coding-agent backends: what hive's ACP path adds to a CLI's own turn, and what a warm pooled session saves.

Run: uv run python benchmarks/agent_backends.py [--turns N] [--cold-turns N] [--cli NAME ...]

For every real CLI installed (in ``$HIVE_AGENT_CLIS_BIN``, the last line ``.ci/agent-clis`` prints), against the
scripted model server (its agent-CLI responder) on 127.0.0.1, in a throwaway project with a private ``HOME``
written by hive's offline recipe, prompt "hello", interleaved one turn at a time:
- acp-direct: the CLI driven by the ``acp`` package's own client (``spawn_agent_process`` and a
  ``ClientSideConnection``), one session kept warm (``--turns`` turns, default 20);
- hive: the same CLI through hive's ``AcpBackend`` in process (``hive_core.runners.open_turn``), its session
  kept warm in an ``AcpSessionPool``;
- cold: a new process and session for each turn (an ``AcpBackend`` of its own per turn), against that warm one
  (``--cold-turns`` turns, default 5).

Prints medians per CLI: a warm turn's time (prompt sent to the turn's end) direct and through hive, hive's
overhead, the time to the CLI's first output, and the time to the first event of a cold turn against a warm one. Goals: hive
adds under 5 % to the CLI's own turn time; a warm pooled turn starts at least 3x faster than a cold one. The
first turn of each warm session is not counted (the CLI's own first-prompt work: titles, caches).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from acp import RequestPermissionResponse, spawn_agent_process, text_block
from acp.schema import (
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    ReadTextFileResponse,
    WriteTextFileResponse,
)

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import agent_cli_responder
from hive_core.runners import open_turn
from hive_protocol import ErrorEvent, TurnEndEvent
from hive_providers.backends import (
    AcpBackend,
    AcpSessionPool,
    BackendOptions,
    LaunchSpec,
    ModelEndpoint,
    resolve_backend,
)
from hive_providers.backends.offline import prepare_offline

CLIS = ("gemini", "copilot", "opencode", "kimi", "codebuddy", "reasonix", "hermes", "deepagents")
PROGRAMS = {"deepagents": "dcode"}
MODEL = "local-model"
PROMPT = "hello"
FIRST_OUTPUT = ("agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan")


def clis_bin() -> Path:
    configured = os.environ.get("HIVE_AGENT_CLIS_BIN")
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hive" / "agent-clis" / "bin"


@dataclass
class Figures:
    """The seconds measured for one CLI."""

    direct_turn: list[float] = field(default_factory=list[float])
    direct_first: list[float] = field(default_factory=list[float])
    hive_turn: list[float] = field(default_factory=list[float])
    hive_first: list[float] = field(default_factory=list[float])
    cold_turn: list[float] = field(default_factory=list[float])
    cold_first: list[float] = field(default_factory=list[float])


class DirectClient:
    """The client side of the ``acp`` package, doing no more than a turn of "hello" needs."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.first: float | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.first is None and getattr(update, "session_update", None) in FIRST_OUTPUT:
            self.first = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        return ReadTextFileResponse(content=await anyio.Path(path).read_text())

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse | None:
        await anyio.Path(path).write_text(content)
        return WriteTextFileResponse()

    def on_connect(self, conn: Any) -> None:
        pass


@dataclass
class Target:
    """One CLI set up for the runs: its spec, program, project and the options hive gets."""

    spec: LaunchSpec
    program: Path
    root: Path
    endpoint: ModelEndpoint
    path: str

    def options(self, home: str, *, key: str | None) -> BackendOptions:
        project = self.root / "project"
        return BackendOptions(
            cwd=project,
            endpoint=self.endpoint,
            home=self.root / home,
            executable=str(self.program),
            environment={"PATH": self.path},
            session_key=key,
        )


@asynccontextmanager
async def direct_session(target: Target) -> AsyncGenerator[Callable[[], Awaitable[tuple[float, float]]]]:
    """The CLI through the ``acp`` package's client, one session: yields a function running one turn."""
    options = target.options("direct-home", key=None)
    env = {
        **os.environ,
        **target.spec.environment,
        **prepare_offline(target.spec, options),
        "PATH": target.path,
    }
    client = DirectClient(options.cwd)
    transport = {"stderr": subprocess.DEVNULL, "limit": 64 * 1024 * 1024}
    async with spawn_agent_process(
        client,  # type: ignore[arg-type]  # the client implements what a "hello" turn calls
        str(target.program),
        *target.spec.arguments,
        env=env,
        cwd=options.cwd,
        transport_kwargs=transport,
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=1,
            client_capabilities=ClientCapabilities(
                fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
            ),
            client_info=Implementation(name="acp-direct", title="acp-direct", version="0"),
        )
        session = await conn.new_session(cwd=str(options.cwd), mcp_servers=[])

        async def turn() -> tuple[float, float]:
            client.first = None
            start = time.perf_counter()
            await conn.prompt(session_id=session.session_id, prompt=[text_block(PROMPT)])
            end = time.perf_counter()
            return (client.first or end) - start, end - start

        yield turn


async def hive_turn(backend: AcpBackend) -> tuple[float, float]:
    """One turn through hive: seconds to its first event and to its ``turn_end``."""
    start = time.perf_counter()
    first: float | None = None
    end: float | None = None
    errors: list[ErrorEvent] = []
    async with open_turn(backend, PROMPT) as events:
        async for event in events:
            now = time.perf_counter()
            first = now if first is None else first
            if isinstance(event, ErrorEvent):
                errors.append(event)
            if isinstance(event, TurnEndEvent):
                end = now
                if event.stop_reason != "completed":
                    raise RuntimeError(f"{backend.name}: a turn ended {event.stop_reason}: {errors}")
    if first is None or end is None:
        raise RuntimeError(f"{backend.name}: a turn ended without turn_end")
    return first - start, end - start


async def measure(target: Target, turns: int, cold_turns: int) -> Figures:
    """``turns`` warm turns direct and through hive, and ``cold_turns`` cold ones, interleaved one at a time (so
    they do not compete for the cores)."""
    figures = Figures()
    pool: AcpSessionPool[Any] = AcpSessionPool()
    warm = AcpBackend(target.spec, target.options("hive-home", key="bench-warm"), pool=pool)
    try:
        async with direct_session(target) as direct:
            await direct()  # the first prompt of each warm session is not counted
            await hive_turn(warm)
            for turn in range(turns):
                first, whole = await direct()
                figures.direct_first.append(first)
                figures.direct_turn.append(whole)
                first, whole = await hive_turn(warm)
                figures.hive_first.append(first)
                figures.hive_turn.append(whole)
                if turn >= cold_turns:
                    continue
                cold = AcpBackend(target.spec, target.options(f"cold-home-{turn}", key=None))
                try:
                    first, whole = await hive_turn(cold)
                finally:
                    await cold.aclose()
                figures.cold_first.append(first)
                figures.cold_turn.append(whole)
    finally:
        await warm.aclose()
        await pool.aclose()
    return figures


def ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--turns", type=int, default=20, help="measured warm turns per CLI and path (default 20)"
    )
    parser.add_argument("--cold-turns", type=int, default=5, help="measured cold turns per CLI (default 5)")
    parser.add_argument("--cli", action="append", choices=CLIS, help="only this CLI (repeatable)")
    args = parser.parse_args()
    bin_dir = clis_bin()
    present = [c for c in args.cli or CLIS if os.access(bin_dir / PROGRAMS.get(c, c), os.X_OK)]
    missing = sorted(set(args.cli or CLIS) - set(present))
    if missing:
        print(f"not installed in {bin_dir} (run .ci/agent-clis): {', '.join(missing)}", file=sys.stderr)
    if not present:
        raise SystemExit("no coding-agent CLI to measure")
    rows: list[tuple[str, Figures]] = []
    cold_turns = min(args.cold_turns, args.turns)
    with tempfile.TemporaryDirectory(prefix="hive-agent-bench-") as scratch:
        os.environ["HIVE_HOME"] = str(Path(scratch) / "hive")
        git = shutil.which("git") or "git"
        path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
        with ScriptedModelServer(model=MODEL, responder=agent_cli_responder()) as server:
            endpoint = ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL)
            for cli in present:
                root = Path(scratch) / cli
                (root / "project").mkdir(parents=True)
                await anyio.run_process([git, "init", "-q", str(root / "project")])
                spec = resolve_backend(cli)
                target = Target(spec, bin_dir / PROGRAMS.get(cli, cli), root, endpoint, path)
                print(f"{cli}: measuring...", file=sys.stderr)
                try:
                    rows.append((cli, await measure(target, args.turns, cold_turns)))
                except Exception as exc:  # one CLI failing does not lose the others' figures
                    print(f"{cli}: failed: {exc!r}", file=sys.stderr)
    print(
        f'prompt "{PROMPT}", scripted model on 127.0.0.1: medians of {args.turns} warm turns, {cold_turns} cold'
    )
    header = (
        f"{'cli':<11} {'acp-direct ms':>13} {'hive ms':>8} {'overhead %':>10} {'paired +ms':>10} "
        f"{'direct first':>12} {'cold ms':>8} {'warm ms':>8} {'cold/warm':>9}"
    )
    print(header)
    print("-" * len(header))
    for cli, f in rows:
        direct, hive = ms(f.direct_turn), ms(f.hive_turn)
        paired = ms([h - d for h, d in zip(f.hive_turn, f.direct_turn, strict=True)])
        cold, warm = ms(f.cold_first), ms(f.hive_first)
        print(
            f"{cli:<11} {direct:13.0f} {hive:8.0f} {(hive - direct) / direct * 100:10.1f} {paired:10.1f} "
            f"{ms(f.direct_first):12.0f} {cold:8.0f} {warm:8.0f} {cold / warm:8.1f}x"
        )
    for line in (
        "acp-direct, hive: a warm turn, prompt to turn end; paired +ms: median of hive minus direct, turn by turn;",
        "direct first: to the CLI's first output; cold, warm: through hive, to the turn's first event, with a new",
        "process and session each turn against a warm pooled one. Goals: overhead < 5 %, cold/warm >= 3x.",
    ):
        print(line)


if __name__ == "__main__":
    anyio.run(main)
