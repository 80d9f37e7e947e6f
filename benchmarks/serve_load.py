"""``hive serve`` under load: many concurrent sessions, each streaming one turn, beside the stdio runner.

Run: uv run python benchmarks/serve_load.py [--sessions 10 100 500] [--deltas 200] (500 takes about a minute)

For each count N: one ``hive serve`` (a process of its own, a fresh hive home) against the scripted model server
(OpenAI Responses API, each turn answered with ``--deltas`` text chunks), N sessions opened, then one message sent
to each at once (after one warm-up turn in a session of its own), every session's SSE stream read to its
``turn_end`` by this process. Prints: events per second
(all sessions' events over the wall time from the first message to the last ``turn_end``), p50/p99 from sending a
message to its session's first ``text_delta``, the server's resident memory per idle session (after the turns,
over a server with no session), and the server's CPU per delta (its user+system time over the turns, from
``/proc``). Beside it, in the same run, ``hive run --server`` streams the same turn over stdio: its CPU per delta
is the baseline. Goals on a 2-core machine: 500 sessions, p99 first event under 250 ms, under 2 MB per idle
session, CPU per delta within 1.5x of stdio.

The scripted model server runs in a process of its own, so that neither it nor this client shares an interpreter
with the other; each process's CPU over the turns is printed as a share of the wall time (``server %``,
``model %``, ``client %``: one near 100 is the bottleneck, and a client or model server there means the figures
measure the benchmark, not hive serve). Last, in process: the cost per event of iterating ``open_turn`` beside a
``SessionRunner`` calling a sink, for the same scripted turn. Under each row: the model server read by this
process alone, as many streams at once, the first-chunk figures hive serve's cannot be below.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2

from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import encode_script
from hive_core import Agent
from hive_core import SessionRunner
from hive_core import TextUpdate
from hive_core import open_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import FinishUpdate
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_protocol import Event
from hive_protocol import ServerSentEvent
from hive_protocol import SseDecoder
from hive_protocol import UserMessageRequest

TOKEN = "benchmark-token-0123456789"
HIVE = Path(sys.executable).with_name("hive")
_READY = re.compile(r"hive serve: (http://\S+?)/\?token=")
_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


def _environment(home: Path, model_url: str) -> dict[str, str]:
    keep = {name: value for name, value in os.environ.items() if name in ("PATH", "LANG", "TMPDIR")}
    return {
        **keep,
        "HOME": str(home),
        "HIVE_HOME": str(home / ".hive"),
        "HIVE_LOCAL_INFERENCE": "off",
        "OPENAI_API_KEY": "test",
        "OPENAI_MODEL": "scripted",
        "OPENAI_ENDPOINT": model_url + "/v1",
        "OPENAI_API": "responses",
        "NO_COLOR": "1",
    }


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def _rss_bytes(pid: int) -> int:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE


def _answer(deltas: int) -> Round:
    return Round(parts=[ScriptText(chunks=[f"w{index} " for index in range(deltas)])])


@contextmanager
def _model_server(turns: int, deltas: int, root: Path) -> Iterator[tuple[str, int]]:
    """The scripted model server in a process of its own, answering ``turns`` turns; yields its URL and pid."""
    script = root / f"script-{turns}.jsonl"
    script.write_bytes(encode_script([_answer(deltas) for _ in range(turns)]))
    process = subprocess.Popen(
        [sys.executable, "-m", "hive_conformance.model_server", str(script), "--model", "scripted"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        yield process.stdout.readline().decode().strip(), process.pid
    finally:
        process.terminate()
        process.wait()


async def _one_turn(
    client: httpx2.AsyncClient, session: str, first_event: list[float], counts: list[int]
) -> None:
    sent = time.perf_counter()
    response = await client.post(
        f"/api/sessions/{session}/requests", content=b'{"type":"user_message","content":"go"}\n'
    )
    response.raise_for_status()
    decoder = SseDecoder()
    seen_delta = False
    events = 0
    async with client.stream(
        "GET", f"/api/sessions/{session}/events", headers={"last-event-id": "1"}
    ) as stream:
        async for chunk in stream.aiter_bytes():
            for item in decoder.feed(chunk):
                if not isinstance(item, ServerSentEvent):
                    continue
                events += 1
                if not seen_delta and item.data.startswith(b'{"type":"text_delta"'):
                    seen_delta = True
                    first_event.append(time.perf_counter() - sent)
                if item.data.startswith(b'{"type":"turn_end"'):
                    counts.append(events)
                    return


def _serve_run(sessions: int, deltas: int, root: Path) -> dict[str, float]:
    with _model_server(sessions + 1, deltas, root) as (model, model_pid):
        process = subprocess.Popen(
            [str(HIVE), "serve", "--token", TOKEN],
            env=_environment(root, model),
            cwd=root / "project",
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline().decode()
            match = _READY.match(line)
            if match is None:
                raise SystemExit(f"hive serve did not start: {line!r}")
            return anyio.run(_drive, match.group(1), (process.pid, model_pid), sessions, deltas, root)
        finally:
            process.kill()
            process.wait()


async def _open_sessions(client: httpx2.AsyncClient, sessions: int, root: Path) -> list[str]:
    """The ids of ``sessions`` new sessions in ``root``'s project."""
    ids: list[str] = []
    for _ in range(sessions):
        created = await client.post("/api/sessions", json={"working_directory": str(root / "project")})
        created.raise_for_status()
        ids.append(str(created.json()["session_id"]))
    return ids


async def _turns_at_once(
    client: httpx2.AsyncClient, ids: list[str], first_event: list[float], counts: list[int]
) -> float:
    """Run one turn in each of the sessions ``ids`` at once; returns the seconds they took."""
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for session in ids:
            group.start_soon(_one_turn, client, session, first_event, counts)
    return time.perf_counter() - started


async def _drive(url: str, pids: tuple[int, int], sessions: int, deltas: int, root: Path) -> dict[str, float]:
    """Open ``sessions`` sessions on the server at ``url``, run one turn in each at once (``pids``: the server's
    and the model server's processes)."""
    pid, model_pid = pids
    limits = httpx2.Limits(max_connections=sessions * 2 + 10)
    async with httpx2.AsyncClient(
        base_url=url,
        headers={"authorization": f"Bearer {TOKEN}"},
        timeout=httpx2.Timeout(300.0),
        limits=limits,
    ) as client:
        # A warm-up turn first, as for stdio: the server's one-time imports are not a session's cost.
        warm = await client.post("/api/sessions", json={"working_directory": str(root / "project")})
        warm.raise_for_status()
        await _one_turn(client, str(warm.json()["session_id"]), [], [])
        empty_rss = _rss_bytes(pid)
        ids = await _open_sessions(client, sessions, root)
        first_event: list[float] = []
        counts: list[int] = []
        cpu_before = _cpu_seconds(pid)
        client_before = time.process_time()
        model_before = _cpu_seconds(model_pid)
        wall = await _turns_at_once(client, ids, first_event, counts)
        cpu = _cpu_seconds(pid) - cpu_before
        client_cpu = time.process_time() - client_before
        model_cpu = _cpu_seconds(model_pid) - model_before
        idle_rss = _rss_bytes(pid)
    p50, p99 = _percentiles(first_event)
    return {
        "events_per_second": sum(counts) / wall,
        "p50_ms": p50,
        "p99_ms": p99,
        "mb_per_session": (idle_rss - empty_rss) / sessions / 1e6,
        "cpu_us_per_delta": cpu / (sessions * deltas) * 1e6,
        "client_share": client_cpu / wall * 100,
        "model_share": model_cpu / wall * 100,
        "server_share": cpu / wall * 100,
    }


async def _model_alone(url: str, sessions: int) -> list[float]:
    """Seconds from request to first text chunk of ``sessions`` streams read from the model server at once by
    this process alone, without hive: the floor under serve's first-event figures."""
    first: list[float] = []

    async def stream(client: httpx2.AsyncClient) -> None:
        sent = time.perf_counter()
        body = {"model": "scripted", "input": "go", "stream": True}
        async with client.stream("POST", "/v1/responses", json=body) as response:
            seen = False
            async for (
                chunk
            ) in response.aiter_bytes():  # to the end: the server's load is that of a whole turn
                if not seen and b"output_text.delta" in chunk:
                    seen = True
                    first.append(time.perf_counter() - sent)

    limits = httpx2.Limits(max_connections=sessions + 10)
    client = httpx2.AsyncClient(base_url=url, timeout=httpx2.Timeout(300.0), limits=limits)
    async with client, anyio.create_task_group() as group:
        for _ in range(sessions):
            group.start_soon(stream, client)
    return first


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``seconds``, in milliseconds."""
    quantiles = statistics.quantiles(seconds, n=100) if len(seconds) > 1 else seconds * 99
    return statistics.median(seconds) * 1000, quantiles[98] * 1000


def _stdio_run(turns: int, deltas: int, root: Path) -> float:
    """CPU per delta of ``hive run --server`` streaming ``turns`` turns of ``deltas`` chunks."""
    with _model_server(turns + 1, deltas, root) as (model, _):
        process = subprocess.Popen(
            [str(HIVE), "run", "--server"],
            env=_environment(root, model),
            cwd=root / "project",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdin is not None
        assert process.stdout is not None

        def turn() -> None:
            assert process.stdin is not None
            assert process.stdout is not None
            process.stdin.write(b'{"type":"user_message","content":"go"}\n')
            process.stdin.flush()
            while not process.stdout.readline().startswith(b'{"type":"turn_end"'):
                pass

        turn()  # warm-up: imports, the first request
        before = _cpu_seconds(process.pid)
        for _ in range(turns):
            turn()
        cpu = _cpu_seconds(process.pid) - before
        process.stdin.close()
        process.wait()
    return cpu / (turns * deltas) * 1e6


def _turn_session(deltas: int) -> Agent:
    updates = [TextUpdate("tok ") for _ in range(deltas)]
    return Agent(ScriptedChatClient([ScriptedRound([*updates, FinishUpdate("stop")])]), policy=ALLOW_ALL)


async def _per_event(deltas: int) -> tuple[float, float]:
    """CPU microseconds per event of one scripted turn: a runner calling a sink, and iterating ``open_turn``."""
    sink_runs: list[float] = []
    iterated_runs: list[float] = []
    for _ in range(7):
        events: list[Event] = []
        session = _turn_session(deltas).session()
        start = time.process_time()
        await SessionRunner(session).run_turn(UserMessageRequest(content="go"), events.append)
        sink_runs.append((time.process_time() - start) / len(events))
        count = 0
        session = _turn_session(deltas).session()
        start = time.process_time()
        async with open_turn(session, "go") as stream:
            async for _ in stream:
                count += 1
        iterated_runs.append((time.process_time() - start) / count)
    return statistics.median(sink_runs) * 1e6, statistics.median(iterated_runs) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions", type=int, nargs="+", default=[10, 100, 500], help="concurrent sessions per run"
    )
    parser.add_argument("--deltas", type=int, default=200, help="text chunks per turn")
    args = parser.parse_args()
    print(f"hive serve against the scripted model, {args.deltas} deltas a turn, one turn per session at once")
    print(
        f"{'sessions':>8} {'events/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'MB/session':>10} {'cpu us/delta':>12} {'stdio':>7} "
        f"{'ratio':>6} {'server %':>8} {'model %':>7} {'client %':>8}"
    )
    for count in args.sessions:
        with tempfile.TemporaryDirectory(prefix="hive-serve-load-") as temporary:
            root = Path(temporary)
            (root / "project").mkdir()
            (root / ".hive").mkdir()
            stdio = _stdio_run(10, args.deltas, root)
            with _model_server(count, args.deltas, root) as (model, _):
                alone = _percentiles(anyio.run(_model_alone, model, count))
            figures = _serve_run(count, args.deltas, root)
        print(
            f"{count:>8} {figures['events_per_second']:>9.0f} {figures['p50_ms']:>8.1f} {figures['p99_ms']:>8.1f} "
            f"{figures['mb_per_session']:>10.2f} {figures['cpu_us_per_delta']:>12.1f} {stdio:>7.1f} "
            f"{figures['cpu_us_per_delta'] / stdio:>6.2f} {figures['server_share']:>8.0f} "
            f"{figures['model_share']:>7.0f} {figures['client_share']:>8.0f}"
        )
        print(
            f"{'':>8} the model server alone, {count} streams at once: first chunk p50 {alone[0]:.1f} ms, p99 {alone[1]:.1f} ms"
        )
    sink, iterated = anyio.run(_per_event, 20_000)
    print(
        f"in process, per event: runner sink {sink:.2f} us, open_turn {iterated:.2f} us ({iterated / sink:.2f}x)"
    )
    print(json.dumps({"note": "cpu is the serving process's user+system time; stdio is hive run --server's"}))


if __name__ == "__main__":
    main()
