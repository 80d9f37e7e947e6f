"""What the session stores cost per call: SQLite's file and a PostgreSQL database, side by side.

Run: uv run python benchmarks/session_stores.py [--url postgresql://...] [--appends 500] [--sessions 500]

On each store (SQLite in a temporary folder; PostgreSQL at ``--url`` when given, which must name an empty database
or one holding only hive's tables) prints the median time of one ``append`` (what the recorder pays per event),
the appends a second made by two store instances writing one session at once (two front ends), and
``list_sessions(limit=10)`` over ``--sessions`` sessions.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from hive_core.messages import user
from hive_core.sessions import SharedSessionStore
from hive_core.sessions import SqliteSessionStore


def _figures(
    name: str, opened: SharedSessionStore, again: SharedSessionStore, appends: int, sessions: int
) -> None:
    project = tempfile.gettempdir()
    info = opened.create(project_path=project)
    times: list[float] = []
    for number in range(appends):
        started = time.perf_counter()
        opened.append(info.id, user(f"entry {number}"))
        times.append(time.perf_counter() - started)
    shared = opened.create(project_path=project)

    def write() -> None:
        for number in range(appends):
            (opened if threading.current_thread().name == "a" else again).append(shared.id, user(f"{number}"))

    writers = [threading.Thread(target=write, name=name) for name in ("a", "b")]
    started = time.perf_counter()
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    both = 2 * appends / (time.perf_counter() - started)
    for number in range(sessions):
        opened.append(opened.create(project_path=project).id, user(f"question {number}"))
    listing: list[float] = []
    for _ in range(20):
        started = time.perf_counter()
        opened.list_sessions(project_path=project, limit=10)
        listing.append(time.perf_counter() - started)
    print(
        f"{name}: append {statistics.median(times) * 1000:.2f} ms (median of {appends}); two writers on one "
        f"session {both:.0f} appends/s; list_sessions(limit=10) over {sessions + 2} sessions "
        f"{statistics.median(listing) * 1000:.2f} ms"
    )


def main() -> None:
    """Print the figures of each store."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", help="a PostgreSQL database to measure too")
    parser.add_argument("--appends", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sessions.db"
        with SqliteSessionStore(path) as opened, SqliteSessionStore(path) as again:
            _figures("SQLite", opened, again, args.appends, args.sessions)
    if args.url:
        from hive_core.sessions.postgres import PostgresSessionStore

        with PostgresSessionStore(args.url) as opened, PostgresSessionStore(args.url) as again:
            _figures("PostgreSQL", opened, again, args.appends, args.sessions)


if __name__ == "__main__":
    main()
