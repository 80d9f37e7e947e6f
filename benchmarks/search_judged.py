"""Cost of judging every file a search reaches: ``glob_files`` and ``grep_files`` over 10,000 files.

Run: uv run python benchmarks/search_judged.py

Builds a project of 100 directories of 100 small files and prints the median wall time of five runs of each tool
with no policy (files inside the working directory pass unjudged by rules) and with the default rules judging each
file, beside the standard library's ``glob.glob`` doing the walk alone (no judging, links followed).
"""

from __future__ import annotations

import functools
import glob
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hive_core.approvals import PathJudge
from hive_core.builtin_tools import glob_files
from hive_core.builtin_tools import grep_files
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.tools import ToolContext

DIRECTORIES = 100
FILES = 100
REPEATS = 5


def build(root: Path) -> None:
    for d in range(DIRECTORIES):
        directory = root / f"pkg{d:03}"
        directory.mkdir(parents=True)
        for f in range(FILES):
            (directory / f"mod{f:03}.py").write_text(f"value = {f}\n")


def median_ms(run: Callable[[], object]) -> float:
    times: list[float] = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "project"
        build(root)
        policy = PermissionPolicy(PermissionRules.default(), root)
        print(f"{DIRECTORIES * FILES:,} files, median of {REPEATS} runs")

        def bare() -> object:
            names = glob.glob("**/*.py", root_dir=root, recursive=True)
            return [name for name in names if os.path.isfile(os.path.join(root, name))]

        print(f"  glob.glob alone (no judging)      {median_ms(bare):7.1f} ms")
        judges: list[tuple[str, PathJudge | None]] = [("no policy", None), ("default rules", policy)]
        for label, judge in judges:
            context = ToolContext("c1", "search", root, lambda event: None, path_judge=judge)
            globbed = median_ms(functools.partial(glob_files.function, context, "**/*.py"))
            grepped = median_ms(functools.partial(grep_files.function, context, "never-there"))
            print(f"  glob_files, {label:<22}{globbed:7.1f} ms")
            print(f"  grep_files, {label:<22}{grepped:7.1f} ms")


if __name__ == "__main__":
    main()
