"""What the subreaper launcher adds to an unconfined command: ``true`` started with and without it.

Run: uv run python benchmarks/subreaper.py [N]

Starts ``true`` N times (default 200) through ``open_child`` (as the command tool does with ``sandbox.mode: off``),
plainly and under the ``_subreaper.py`` launcher (``reap_orphans=True``), alternating in rounds so that load on
the machine falls on both alike, waits for each and kills its tree as the tool does, and prints wall-clock
milliseconds per command (median of the rounds) for each and the difference: the launcher's cost per command
(a bare interpreter's start, ``ctypes`` and one fork). Sandboxed commands do not use it (bubblewrap's pid namespace
already holds what they start).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import anyio

from hive_core.child_processes import open_child

ROUNDS = 10


async def per_command_ms(count: int, *, reap_orphans: bool) -> float:
    start = time.perf_counter()
    for _ in range(count):
        process = await open_child(
            ["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, reap_orphans=reap_orphans
        )
        assert await process.wait() == 0
        process.kill_tree()
        await process.aclose()
    return (time.perf_counter() - start) / count * 1000


async def main(total: int) -> None:
    per_round = max(1, total // ROUNDS)
    for reap in (False, True):  # warm up: the watchdog, imports, the page cache
        await per_command_ms(3, reap_orphans=reap)
    runs: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(ROUNDS):
        for reap in (False, True):
            runs[reap].append(await per_command_ms(per_round, reap_orphans=reap))
    plain, launched = statistics.median(runs[False]), statistics.median(runs[True])
    print(f"`true` through open_child, {per_round * ROUNDS} runs each, ms per command (median of rounds)")
    print(f"  plain                        {plain:7.2f} ms")
    print(f"  under the subreaper launcher {launched:7.2f} ms")
    print(f"  the launcher adds            {launched - plain:7.2f} ms per command")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
