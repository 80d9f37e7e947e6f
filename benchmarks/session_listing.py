"""What ``hive sessions list`` and ``/resume`` cost over a project of many sessions.

Run: uv run python benchmarks/session_listing.py [--sessions 2000] [--repeats 20]

Fills a fresh SQLite store with ``--sessions`` sessions of one project (a third of them empty, the hidden kind;
the rest a question and its answer) and prints the median time of: the store's own ``list_sessions(limit=10)``
(the old listing), and :func:`~hive_cli.session_listing.listed_sessions` with the default limit (hiding what failed
at start, marking the dead). Goal: the listing stays within a few times the bare query, whatever the project's size.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hive_cli.session_listing import listed_sessions
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import user
from hive_core.sessions import SqliteSessionStore


def _median_ms(action: Callable[[], object], repeats: int) -> float:
    times: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    """Fill a store and print the two figures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = str(Path(folder).resolve())
        with SqliteSessionStore(Path(folder) / "sessions.db") as store:
            for number in range(args.sessions):
                info = store.create(project_path=project)
                if number % 3:
                    store.append(info.id, user(f"question {number}"))
                    store.append(info.id, Message("assistant", [TextPart("an answer")]))
                    store.set_status(info.id, "ended")
            bare = _median_ms(lambda: store.list_sessions(project_path=project, limit=10), args.repeats)
            listed = _median_ms(lambda: listed_sessions(store, project, limit=10), args.repeats)
    print(
        f"{args.sessions} sessions: list_sessions(limit=10) {bare:.2f} ms; listed_sessions(limit=10) {listed:.2f} ms"
    )


if __name__ == "__main__":
    main()
