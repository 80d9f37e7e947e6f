"""Coding-agent backends: what hive's ACP path adds to a CLI's own turn, what a warm pooled session saves, and what
hive's own-stream adapters for Claude Code and Codex cost against the vendors' Python SDKs.

Run: uv run python benchmarks/agent_backends.py [--turns N] [--cold-turns N] [--vendor-turns N] [--chunks N]
[--cli NAME ...]

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

Against the vendor SDKs (``claude-code`` and ``codex`` in ``--cli``; each compared only when its SDK is importable:
``claude-agent-sdk`` 0.2.189 and ``openai-codex`` 0.163.0, not dependencies of hive), the same installed CLI on the
same scripted model, which answers the prompt "SLOWTEXT go" with ``--chunks`` text chunks (default 200) at once. The
model server runs in a process of its own, so the CPU figures are only the driving Python process's:
- Claude Code, one process per turn (hive's rule) and a new CLI session each turn: hive's ``ClaudeCodeBackend``
  through ``open_turn`` against ``claude_agent_sdk.query`` (``cli_path`` the installed CLI, the same flags: partial
  messages, ``--permission-prompt-tool stdio``, the default system prompt, the model); and, for what the rule
  costs, the SDK's ``ClaudeSDKClient`` keeping one process for all its turns;
- Codex, each side one warm ``codex app-server`` and one thread: hive's ``CodexBackend`` against the
  ``openai_codex.AsyncCodex`` SDK (``codex_bin`` the installed CLI, the same private ``CODEX_HOME`` recipe).
``--vendor-turns`` measured turns per side (default 20; one warm-up turn each not counted), alternating which side
goes first to cancel drift. Prints medians: a turn's wall time (start to the end of the call, process reaped for
Claude Code) and to its result, hive/vendor ratios, and CPU time of this process (``time.process_time``) per turn,
per text delta and per event the API handed out. Goals: hive no slower than the SDK, and less CPU per streamed event.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncGenerator
from collections.abc import Awaitable
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import anyio
from acp import RequestPermissionResponse
from acp import spawn_agent_process
from acp import text_block
from acp.schema import ClientCapabilities
from acp.schema import DeniedOutcome
from acp.schema import FileSystemCapabilities
from acp.schema import Implementation
from acp.schema import ReadTextFileResponse
from acp.schema import WriteTextFileResponse

from hive_conformance.agent_clis import agent_clis_bin
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.model_server.agent_cli import agent_cli_responder
from hive_core.runners import SessionRunner
from hive_core.runners import open_turn
from hive_protocol import ErrorEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends import AcpBackend
from hive_providers.backends import AcpSessionPool
from hive_providers.backends import BackendOptions
from hive_providers.backends import LaunchSpec
from hive_providers.backends import ModelEndpoint
from hive_providers.backends import resolve_backend
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.offline import prepare_offline

CLIS = ("gemini", "copilot-acp", "opencode-acp", "kimi", "codebuddy", "reasonix", "hermes", "deepagents")
"""The CLIs measured over ACP (Copilot and OpenCode through their ACP servers; their own servers are not ACP)."""
PROGRAMS = {"deepagents": "dcode", "copilot-acp": "copilot", "opencode-acp": "opencode"}
MODEL = "local-model"
PROMPT = "hello"
FIRST_OUTPUT = ("agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan")
VENDOR_CLIS = ("claude-code", "codex")
VENDOR_PROGRAMS = {"claude-code": "claude", "codex": "codex"}
VENDOR_SDKS = {
    "claude-code": ("claude_agent_sdk", "claude-agent-sdk==0.2.189"),
    "codex": ("openai_codex", "openai-codex==0.163.0"),
}
VENDOR_PROMPT = "SLOWTEXT go"
TURN_LIMIT = 120.0


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


async def run_acp(names: list[str], bin_dir: Path, scratch: Path, turns: int, cold_turns: int) -> None:
    """The ACP CLIs asked for: each installed one measured and printed."""
    present = [c for c in names if os.access(bin_dir / PROGRAMS.get(c, c), os.X_OK)]
    missing = sorted(set(names) - set(present))
    if missing:
        print(f"not installed in {bin_dir} (run .ci/agent-clis): {', '.join(missing)}", file=sys.stderr)
    if not present:
        print("no ACP coding-agent CLI to measure", file=sys.stderr)
        return
    rows: list[tuple[str, Figures]] = []
    git = shutil.which("git") or "git"
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    with ScriptedModelServer(model=MODEL, responder=agent_cli_responder()) as server:
        endpoint = ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL)
        for cli in present:
            root = scratch / cli
            (root / "project").mkdir(parents=True)
            await anyio.run_process([git, "init", "-q", str(root / "project")])
            spec = resolve_backend(cli)
            target = Target(spec, bin_dir / PROGRAMS.get(cli, cli), root, endpoint, path)
            print(f"{cli}: measuring...", file=sys.stderr)
            try:
                rows.append((cli, await measure(target, turns, cold_turns)))
            except Exception as exc:  # one CLI failing does not lose the others' figures
                print(f"{cli}: failed: {exc!r}", file=sys.stderr)
    print(f'prompt "{PROMPT}", scripted model on 127.0.0.1: medians of {turns} warm turns, {cold_turns} cold')
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


# -- against the vendor SDKs ---------------------------------------------------------------------------------


@dataclass
class Sample:
    """One measured turn of one side."""

    done: float
    """Seconds from the start to the end of the call (for Claude Code: its process reaped)."""
    result: float
    """Seconds to the turn's result (``turn_end``, the SDK's ``ResultMessage`` or ``turn/completed``)."""
    cpu: float
    """CPU seconds of this process over the turn."""
    events: int
    """Events the API handed out."""
    deltas: int
    """Text deltas among them."""


@dataclass
class Vendor:
    """One vendor CLI set up for the runs against its SDK."""

    name: str
    spec: LaunchSpec
    program: Path
    root: Path
    endpoint: ModelEndpoint
    path: str
    chunks: int

    def options(self, home: str) -> BackendOptions:
        return BackendOptions(
            cwd=self.root / "project",
            model=MODEL,
            endpoint=self.endpoint,
            home=self.root / home,
            executable=str(self.program),
            environment={"PATH": self.path},
            startup_timeout=60.0,
        )

    def sdk_environment(self, home: str) -> dict[str, str]:
        """What the SDK's CLI runs with on top of this process's environment: what hive's would."""
        return {**self.spec.environment, **prepare_offline(self.spec, self.options(home)), "PATH": self.path}


Side = Callable[[], Awaitable[Sample]]


class IncompleteTurn(RuntimeError):
    """A turn that ended without its result: run again (at most :data:`RETRIES` times), and counted."""


RETRIES = 3


class _Counter:
    """Counts a turn's events as they come and notes when its ``turn_end`` came."""

    def __init__(self) -> None:
        self.events = 0
        self.deltas = 0
        self.result: float | None = None
        self.errors: list[ErrorEvent] = []

    def __call__(self, event: Any) -> None:
        self.events += 1
        if isinstance(event, TextDeltaEvent):
            self.deltas += 1
        elif isinstance(event, ErrorEvent):
            self.errors.append(event)
        elif isinstance(event, TurnEndEvent):
            self.result = time.perf_counter()
            if event.stop_reason != "completed":
                raise RuntimeError(f"hive: a turn ended {event.stop_reason}: {self.errors}")


async def timed_hive_turn(backend: Any, *, iterate: bool = True) -> Sample:
    """One turn through hive, timed and counted: iterating ``open_turn`` (the in-process API), or with
    ``iterate=False`` a ``SessionRunner`` calling back per event (how hive's stdio and server runners drive it)."""
    counter = _Counter()
    cpu, start = time.process_time(), time.perf_counter()
    with anyio.fail_after(TURN_LIMIT):
        if iterate:
            async with open_turn(backend, VENDOR_PROMPT) as stream:
                async for event in stream:
                    counter(event)
        else:
            await SessionRunner(backend).run_turn(UserMessageRequest(content=VENDOR_PROMPT), counter)
    done = time.perf_counter()
    if counter.result is None:
        raise IncompleteTurn("hive: a turn ended without turn_end")
    return Sample(
        done - start, counter.result - start, time.process_time() - cpu, counter.events, counter.deltas
    )


def claude_sdk_options(vendor: Vendor, home: str) -> Any:
    """The SDK's options for the flags hive passes: partial messages, permissions on stdio, the default
    system prompt (the SDK's own default is an empty one), the model."""
    from claude_agent_sdk import ClaudeAgentOptions

    return ClaudeAgentOptions(
        cli_path=vendor.program,
        cwd=vendor.root / "project",
        env=vendor.sdk_environment(home),
        model=MODEL,
        include_partial_messages=True,
        permission_prompt_tool_name="stdio",
        system_prompt={"type": "preset", "preset": "claude_code"},
    )


async def claude_sdk_count(messages: Any, start: float) -> tuple[float, int, int]:
    """Read one turn's SDK messages: seconds to the ``ResultMessage``, messages, text deltas."""
    from claude_agent_sdk import ResultMessage
    from claude_agent_sdk import StreamEvent

    result: float | None = None
    events = deltas = 0
    async for message in messages:
        events += 1
        if isinstance(message, StreamEvent):
            delta = message.event.get("delta") or {}
            deltas += message.event.get("type") == "content_block_delta" and delta.get("type") == "text_delta"
        elif isinstance(message, ResultMessage):
            result = time.perf_counter()
            if message.is_error:
                raise RuntimeError(f"claude-agent-sdk: a turn failed: {message.result}")
    if result is None:
        raise IncompleteTurn("claude-agent-sdk: a turn ended without a result")
    return result - start, events, deltas


@asynccontextmanager
async def claude_sides(vendor: Vendor) -> AsyncGenerator[dict[str, Side]]:
    """Claude Code: hive and ``query`` with a new process and session per turn; ``ClaudeSDKClient`` warm."""
    from claude_agent_sdk import ClaudeSDKClient
    from claude_agent_sdk import query

    async def hive() -> Sample:
        return await timed_hive_turn(ClaudeCodeBackend(vendor.spec, vendor.options("hive-home")))

    async def hive_runner() -> Sample:
        backend = ClaudeCodeBackend(vendor.spec, vendor.options("runner-home"))
        return await timed_hive_turn(backend, iterate=False)

    async def sdk() -> Sample:
        options = claude_sdk_options(vendor, "sdk-home")
        cpu, start = time.process_time(), time.perf_counter()
        with anyio.fail_after(TURN_LIMIT):
            result, events, deltas = await claude_sdk_count(
                query(prompt=VENDOR_PROMPT, options=options), start
            )
        return Sample(time.perf_counter() - start, result, time.process_time() - cpu, events, deltas)

    async with ClaudeSDKClient(claude_sdk_options(vendor, "warm-home")) as client:

        async def warm() -> Sample:
            cpu, start = time.process_time(), time.perf_counter()
            with anyio.fail_after(TURN_LIMIT):
                await client.query(VENDOR_PROMPT)
                result, events, deltas = await claude_sdk_count(client.receive_response(), start)
            return Sample(time.perf_counter() - start, result, time.process_time() - cpu, events, deltas)

        yield {"hive": hive, "hive runner": hive_runner, "sdk query": sdk, "sdk warm client": warm}


@asynccontextmanager
async def codex_sides(vendor: Vendor) -> AsyncGenerator[dict[str, Side]]:
    """Codex: hive's backend and the SDK, each one warm app-server and one thread."""
    from openai_codex import ApprovalMode
    from openai_codex import AsyncCodex
    from openai_codex import CodexConfig
    from openai_codex import Sandbox

    backend = CodexBackend(vendor.spec, vendor.options("hive-home"))
    runner_backend = CodexBackend(vendor.spec, vendor.options("runner-home"))
    config = CodexConfig(
        codex_bin=str(vendor.program),
        cwd=str(vendor.root / "project"),
        env=vendor.sdk_environment("sdk-home"),
    )

    async def hive() -> Sample:
        return await timed_hive_turn(backend)

    async def hive_runner() -> Sample:
        return await timed_hive_turn(runner_backend, iterate=False)

    try:
        async with AsyncCodex(config) as codex:
            thread = await codex.thread_start(
                model=MODEL,
                cwd=str(vendor.root / "project"),
                sandbox=Sandbox.workspace_write,
                approval_mode=ApprovalMode.deny_all,
            )

            async def sdk() -> Sample:
                cpu, start = time.process_time(), time.perf_counter()
                result: float | None = None
                events = deltas = 0
                with anyio.fail_after(TURN_LIMIT):
                    turn = await thread.turn(VENDOR_PROMPT)
                    async for notification in turn.stream():
                        events += 1
                        if notification.method == "item/agentMessage/delta":
                            deltas += 1
                        elif notification.method == "turn/completed":
                            result = time.perf_counter()
                            status = getattr(getattr(notification.payload, "turn", None), "status", None)
                            if getattr(status, "value", status) != "completed":
                                raise RuntimeError(f"openai-codex: a turn ended {status}")
                if result is None:
                    raise IncompleteTurn("openai-codex: a turn ended without turn/completed")
                return Sample(
                    time.perf_counter() - start, result - start, time.process_time() - cpu, events, deltas
                )

            yield {"hive": hive, "hive runner": hive_runner, "sdk": sdk}
    finally:
        await backend.aclose()
        await runner_backend.aclose()


VENDOR_SIDES = {"claude-code": claude_sides, "codex": codex_sides}


async def measure_vendor(vendor: Vendor, turns: int) -> tuple[dict[str, list[Sample]], Counter[str]]:
    """One warm-up turn per side, then ``turns`` each, one at a time, alternating which side goes first; with the
    number of turns each side ran again because they ended without a result."""
    samples: dict[str, list[Sample]] = {}
    incomplete: Counter[str] = Counter()

    async def run(name: str, side: Side) -> Sample:
        for _ in range(RETRIES):
            try:
                return await side()
            except IncompleteTurn:
                incomplete[name] += 1
        raise RuntimeError(f"{name}: {RETRIES} turns in a row ended without a result")

    async with VENDOR_SIDES[vendor.name](vendor) as sides:
        for name, side in sides.items():
            await run(name, side)
        order = list(sides.items())
        for turn in range(turns):
            for name, side in order if turn % 2 == 0 else reversed(order):
                samples.setdefault(name, []).append(await run(name, side))
    return samples, incomplete


def print_vendor(vendor: Vendor, version: str, samples: dict[str, list[Sample]], turns: int) -> None:
    """One vendor's table: a row of medians per side, then hive's ratios to the SDK's one-shot side."""
    print()
    print(
        f"{vendor.name} {version} against {VENDOR_SDKS[vendor.name][1]}: prompt {VENDOR_PROMPT!r} answered in "
        f"{vendor.chunks} chunks, medians of {turns} turns"
    )
    header = (
        f"{'side':<16} {'turn ms':>8} {'result ms':>9} {'cpu ms':>7} {'events':>6} {'deltas':>6} "
        f"{'cpu us/delta':>12} {'cpu us/event':>12}"
    )
    print(header)
    print("-" * len(header))
    medians = {name: _medians(side) for name, side in samples.items()}
    for name, m in medians.items():
        print(
            f"{name:<16} {m['done'] * 1e3:8.0f} {m['result'] * 1e3:9.0f} {m['cpu'] * 1e3:7.1f} {m['events']:6.0f} "
            f"{m['deltas']:6.0f} {m['per_delta'] * 1e6:12.1f} {m['per_event'] * 1e6:12.1f}"
        )
    vendor_side = "sdk query" if "sdk query" in samples else "sdk"
    sdk = medians[vendor_side]
    for side in ("hive", "hive runner"):
        hive = medians[side]
        pairs = zip(samples[side], samples[vendor_side], strict=True)
        paired = statistics.median(h.done - v.done for h, v in pairs) * 1e3
        print(
            f"{side}/{vendor_side}: turn {hive['done'] / sdk['done']:.2f}x (paired {paired:+.0f} ms), "
            f"result {hive['result'] / sdk['result']:.2f}x, cpu per turn {hive['cpu'] / sdk['cpu']:.2f}x, "
            f"cpu per delta {hive['per_delta'] / sdk['per_delta']:.2f}x"
        )


def _medians(samples: list[Sample]) -> dict[str, float]:
    median = statistics.median
    return {
        "done": median([s.done for s in samples]),
        "result": median([s.result for s in samples]),
        "cpu": median([s.cpu for s in samples]),
        "events": median([s.events for s in samples]),
        "deltas": median([s.deltas for s in samples]),
        "per_delta": median([s.cpu / max(s.deltas, 1) for s in samples]),
        "per_event": median([s.cpu / max(s.events, 1) for s in samples]),
    }


async def run_vendors(names: list[str], bin_dir: Path, scratch: Path, turns: int, chunks: int) -> None:
    """Every vendor comparison asked for whose CLI and SDK are here; says why it skips the others."""
    runnable: list[tuple[str, Path]] = []
    for name in names:
        program = bin_dir / VENDOR_PROGRAMS[name]
        module, requirement = VENDOR_SDKS[name]
        if not os.access(program, os.X_OK):
            print(f"{name}: skipped, {program} is not installed (run .ci/agent-clis)", file=sys.stderr)
        elif importlib.util.find_spec(module) is None:
            print(
                f"{name}: skipped, the SDK is not installed (uv pip install {requirement})", file=sys.stderr
            )
        else:
            runnable.append((name, program))
    if not runnable:
        return
    git = shutil.which("git") or "git"
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    async with model_server_process(chunks) as url:
        endpoint = ModelEndpoint(base_url=f"{url}/v1", model=MODEL)
        for name, program in runnable:
            root = scratch / f"vendor-{name}"
            (root / "project").mkdir(parents=True)
            await anyio.run_process([git, "init", "-q", str(root / "project")])
            vendor = Vendor(name, resolve_backend(name), program, root, endpoint, path, chunks)
            version = (await anyio.run_process([str(program), "--version"])).stdout.decode().strip()
            print(f"{name}: measuring against its SDK...", file=sys.stderr)
            try:
                samples, incomplete = await measure_vendor(vendor, turns)
            except Exception as exc:  # one comparison failing does not lose the other's figures
                print(f"{name}: failed: {exc!r}", file=sys.stderr)
                continue
            print_vendor(vendor, version, samples, turns)
            for name, count in incomplete.items():
                print(f"{name}: {count} turn(s) ended without a result and were run again")
    for line in (
        "hive: iterating open_turn (the in-process API); hive runner: a SessionRunner calling back per event (as",
        "hive's stdio and server runners do). turn: start to the end of the call; result: to turn_end /",
        "ResultMessage / turn/completed; cpu: this process's CPU time over the turn; events: what the API handed",
        "out (hive events, SDK messages or notifications). Goals: hive no slower, less CPU per event.",
    ):
        print(line)


@asynccontextmanager
async def model_server_process(chunks: int) -> AsyncGenerator[str]:
    """The scripted model in a process of its own (its CPU is not this process's): yields its URL."""
    command = [sys.executable, __file__, "--model-server", str(chunks)]
    async with await anyio.open_process(command, stderr=None) as process:
        assert process.stdout is not None
        assert process.stdin is not None
        line = b""
        with anyio.fail_after(30):
            while not line.endswith(b"\n"):
                line += await process.stdout.receive(1)
        try:
            yield line.decode().strip()
        finally:
            await process.stdin.aclose()
            with anyio.move_on_after(5):
                await process.wait()


def serve_model(chunks: int) -> None:
    """``--model-server``: serve the agent-CLI responder (SLOWTEXT in ``chunks`` chunks, no delay) until stdin
    closes; the URL is the first line of stdout."""
    responder = agent_cli_responder(slow_chunks=chunks, chunk_delay=0.0)
    with ScriptedModelServer(model=MODEL, responder=responder) as server:
        print(server.url, flush=True)
        sys.stdin.read()


async def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--turns", type=int, default=20, help="measured warm turns per CLI and path (default 20)"
    )
    parser.add_argument("--cold-turns", type=int, default=5, help="measured cold turns per CLI (default 5)")
    parser.add_argument(
        "--vendor-turns",
        type=int,
        default=20,
        help="measured turns per side against a vendor SDK (default 20)",
    )
    parser.add_argument("--chunks", type=int, default=200, help="text chunks of the vendor runs' answer")
    parser.add_argument(
        "--cli", action="append", choices=CLIS + VENDOR_CLIS, help="only this CLI (repeatable)"
    )
    args = parser.parse_args()
    bin_dir = agent_clis_bin()
    chosen = args.cli or list(CLIS + VENDOR_CLIS)
    acp = [c for c in chosen if c in CLIS]
    vendors = [c for c in chosen if c in VENDOR_CLIS]
    with tempfile.TemporaryDirectory(prefix="hive-agent-bench-") as scratch:
        os.environ["HIVE_HOME"] = str(Path(scratch) / "hive")
        if acp:
            await run_acp(acp, bin_dir, Path(scratch), args.turns, min(args.cold_turns, args.turns))
        if vendors:
            await run_vendors(vendors, bin_dir, Path(scratch), args.vendor_turns, args.chunks)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--model-server":
        serve_model(int(sys.argv[2]))
    else:
        anyio.run(main)
