"""CPU of ``hive --version`` against ``python -c pass``, measured in the same run.

Run: uv run python benchmarks/version_cpu.py [--repeats N]

Prints the median CPU time (user + system, from ``wait4``) of fresh processes of the bare interpreter and of
``hive --version``, and their ratio (goal: at most 1.5x). CPU rather than wall time: on a shared machine it is what
the command itself costs. The two are measured alternately, so a busy moment weighs on both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HIVE = Path(sys.executable).with_name("hive")
GOAL = 1.5


def cpu_ms(command: list[str]) -> float:
    """The CPU milliseconds one run of ``command`` took, its children included."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command)} failed")
    return (usage.ru_utime + usage.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=40, help="runs of each command (default 40)")
    args = parser.parse_args()

    floor_command, version_command = [sys.executable, "-c", "pass"], [str(HIVE), "--version"]
    cpu_ms(floor_command), cpu_ms(version_command)  # warm the bytecode and disk caches; not counted
    floors: list[float] = []
    versions: list[float] = []
    for _ in range(args.repeats):
        floors.append(cpu_ms(floor_command))
        versions.append(cpu_ms(version_command))
    floor, version = statistics.median(floors), statistics.median(versions)
    ratio = version / floor
    print(f"medians of {args.repeats} runs, CPU (user + system)")
    print(f"python -c pass     {floor:7.1f} ms")
    print(f"hive --version     {version:7.1f} ms   {ratio:.2f}x the floor (goal <= {GOAL}x)")


if __name__ == "__main__":
    main()
