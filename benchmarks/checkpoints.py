"""Cost of checkpoints: what keeping a file's state before hive's file tools change it adds to a call.

Run: uv run python benchmarks/checkpoints.py

Runs tool calls through the CLI's pipeline (the default middlewares, no policy) with and without the checkpoint
keeper bound to a session in a real SQLite store, in a temporary project, and prints wall microseconds per call
(the best of several runs: the machine's other load only adds):
- ``read_file`` on a 10 KB file: a turn that changes no file (the keeper only looks the tool name up);
- ``write_file`` over files of 1 KB, 10 KB, 100 KB and 1 MB, each call in a turn of its own (a ``turn_start`` appended
  first, in both runs): the state before (read, hashed, one insert) and the digest after (one update), each in a
  worker thread;
- for comparison, what a shadow git repository would pay per file: ``git hash-object -w`` of the same file (one
  process; a real shadow checkpoint also needs an index update and a tree and commit per turn).
Goal: no measurable difference for calls that change no file; a few milliseconds at most for a 1 MB write.
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from collections.abc import Awaitable
from collections.abc import Callable
from functools import partial
from pathlib import Path

import anyio

from hive_core.approvals import ALLOW_ALL
from hive_core.builtin_tools import read_file
from hive_core.builtin_tools import write_file
from hive_core.messages import ToolCallPart
from hive_core.pipeline import Invocation
from hive_core.pipeline import Pipeline
from hive_core.pipeline import default_middlewares
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions.checkpoint_keeper import CheckpointKeeper
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.turn_request import TurnRequest

REPEATS = 7
CALLS = 200


def _invocation(project: Path, tool: Tool, arguments: dict[str, object]) -> Invocation:
    call = ToolCallPart(id="c1", name=tool.name, arguments_text="{}", arguments=arguments)
    return Invocation(call, tool, arguments, ToolContext("c1", tool.name, project, lambda _: None))


async def _per_call(run: Callable[[], Awaitable[object]], calls: int) -> float:
    """Microseconds per call: the best of several runs (the machine's other load only ever adds)."""
    samples: list[float] = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(calls):
            await run()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return min(samples)


def _shadow_git(shadow: Path, path: Path, calls: int = 20) -> float:
    """Microseconds per ``git hash-object -w`` of ``path`` into a bare repository at ``shadow``."""
    if not shadow.exists():
        subprocess.run(["git", "init", "-q", "--bare", str(shadow)], check=True)
    samples: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        subprocess.run(
            ["git", f"--git-dir={shadow}", "hash-object", "-w", str(path)], check=True, capture_output=True
        )
        samples.append((time.perf_counter() - start) * 1e6)
    return min(samples)


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "read.txt").write_text("x" * 10_000)
        store = SqliteSessionStore(Path(tmp) / "sessions.db")
        sid = store.create(project_path=project).id
        store.append(sid, TurnRequest(content="benchmark"))
        keeper = CheckpointKeeper()
        keeper.bind(store, sid)
        plain = Pipeline(default_middlewares(ALLOW_ALL))
        kept = Pipeline([*default_middlewares(ALLOW_ALL), keeper])

        reading = _invocation(project, read_file, {"path": "read.txt"})
        print(f"read_file 10 KB, no keeper:   {await _per_call(partial(plain.run, reading), CALLS):8.1f} µs")
        print(f"read_file 10 KB, with keeper: {await _per_call(partial(kept.run, reading), CALLS):8.1f} µs")

        for size in (1_000, 10_000, 100_000, 1_000_000):
            calls = CALLS if size < 1_000_000 else 20
            target = f"w{size}.txt"
            (project / target).write_text("x" * size)
            writing = _invocation(project, write_file, {"path": target, "content": "y" * size})

            async def in_new_turn(pipeline: Pipeline, invocation: Invocation = writing) -> None:
                # Every call in a turn of its own: the file's state is kept each time, as a turn's first change.
                store.append(sid, TurnRequest(content="benchmark"))
                await pipeline.run(invocation)

            without = await _per_call(partial(in_new_turn, plain), calls)
            with_keeper = await _per_call(partial(in_new_turn, kept), calls)
            print(
                f"write_file {size // 1000:>5} KB over a file as large, each in a new turn: {without:8.1f} µs "
                f"without, {with_keeper:8.1f} µs with the keeper (+{with_keeper - without:.1f} µs)"
            )
            shadow = _shadow_git(Path(tmp) / "shadow.git", project / target)
            print(f"    a shadow git's hash-object -w alone: {shadow:8.1f} µs")
        store.close()


if __name__ == "__main__":
    anyio.run(main)
