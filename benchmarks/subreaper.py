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

import resource
import statistics
import subprocess
import sys
import time

import anyio

from hive_core.child_processes import open_child

ROUNDS = 10


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


async def per_command_ms(count: int, *, reap_orphans: bool) -> tuple[float, float]:
    """Wall milliseconds per command, and CPU milliseconds the started processes used (they run on other
    cores: under load the wall figure grows, this one hardly)."""
    start, start_cpu = time.perf_counter(), _children_cpu()
    for _ in range(count):
        process = await open_child(
            ["true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, reap_orphans=reap_orphans
        )
        assert await process.wait() == 0
        process.kill_tree()
        await process.aclose()
    return (time.perf_counter() - start) / count * 1000, (_children_cpu() - start_cpu) / count * 1000


async def main(total: int) -> None:
    per_round = max(1, total // ROUNDS)
    for reap in (False, True):  # warm up: the watchdog, imports, the page cache
        await per_command_ms(3, reap_orphans=reap)
    runs: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    for _ in range(ROUNDS):
        for reap in (False, True):
            runs[reap].append(await per_command_ms(per_round, reap_orphans=reap))
    print(f"`true` through open_child, {per_round * ROUNDS} runs each, per command (median of rounds)")
    figures = {
        reap: (statistics.median(w for w, _ in runs[reap]), statistics.median(c for _, c in runs[reap]))
        for reap in (False, True)
    }
    for name, (wall, cpu) in (("plain", figures[False]), ("under the subreaper launcher", figures[True])):
        print(f"  {name:28s} {wall:7.2f} ms wall, {cpu:6.2f} ms CPU of the started processes")
    added_wall, added_cpu = (figures[True][i] - figures[False][i] for i in (0, 1))
    print(f"  the launcher adds            {added_wall:7.2f} ms wall, {added_cpu:6.2f} ms CPU per command")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
