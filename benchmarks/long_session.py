"""Per-turn cost of a long session: the first 100 turns of a 5,000-turn session against the last 100.

Run: uv run python benchmarks/long_session.py [--turns N] [--window N] [--profile]

One session in process, assembled as the CLI assembles it (the built-in tools, the default permission rules, the
context manager with its compaction settings, the token budget in front of the model) and recorded as the CLI
records it (:class:`~hive_core.sessions.TranscriptRecorder` on a :class:`~hive_core.sessions.SqliteSessionStore`
in a temporary directory), driven through :class:`~hive_core.SessionRunner`. The model is an in-process client
that answers each user message with one ``read_file`` call (of one of three files in turn) and the call's result with a line of text: each turn
is two model requests, one tool call and four recorded messages (a compaction's summary request is answered
with a line of text).

Prints the median milliseconds per turn (wall and CPU) over the first 100 turns, 100 turns in the middle and the
last 100, and the ratios. The first turns send a window not full yet; from then on a request is as large as the
window (8,000 tokens by default: full after some 40 turns, compacted all along) however long the session, so the
goal is a last/middle ratio near 1 (the per-turn work does not grow with the history) and a last/first ratio that
is only the full window's. ``--profile`` prints the top of a cProfile of the last 100 turns.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import time
from collections.abc import AsyncIterator
from collections.abc import Sequence
from pathlib import Path

import anyio

from hive_core import Agent
from hive_core import SessionRunner
from hive_core.builtin_tools import builtin_tools
from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.chat import ToolCallUpdate
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.messages import Message
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRules
from hive_core.sessions import SqliteSessionStore
from hive_core.sessions import TranscriptRecorder
from hive_protocol import Event
from hive_protocol import UserMessageRequest

WINDOW = 100
WINDOW_TOKENS = 8_000
"""The default model window: full after some 40 turns, so compaction runs all along, as in a long session."""


class _Model:
    """Reads a file for every user message, then says it did."""

    def __init__(self, window: int) -> None:
        self.calls = 0
        self.capabilities = Capabilities(tools=True, streamed_tool_calls=True, context_window=window)

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        self.calls += 1
        if not options.tools:  # a compaction's summary request
            yield TextUpdate("The user asked to read notes; they were read.")
            yield FinishUpdate("stop")
            return
        if messages[-1].role == "user":
            # Another file each time: the same call over and over is what the repeated-call guard refuses.
            path = f"notes/{self.calls % 3}.md"
            yield ToolCallUpdate(0, f"call_{self.calls}", "read_file", f'{{"path": "{path}"}}')
            yield FinishUpdate("tool_calls")
            return
        yield TextUpdate(f"Read it ({self.calls}).")
        yield FinishUpdate("stop")


async def run(turns: int, window: int, profile: bool) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        project = Path(temporary) / "project"
        project.mkdir()
        (project / "notes").mkdir()
        for number in range(3):
            (project / "notes" / f"{number}.md").write_text(f"Note {number}.\n" * 20)
        model = _Model(window)
        agent = Agent(
            model,  # type: ignore[arg-type]
            tools=builtin_tools(),
            policy=PermissionPolicy(PermissionRules.default(), project),
            working_dir=project,
            context=ContextManager(CompactionSettings(max_context_tokens=window)),
        )
        with SqliteSessionStore(Path(temporary) / "sessions.db") as store:
            info = store.create(project_path=project)
            session = agent.session()
            runner = SessionRunner(TranscriptRecorder(session, store, info.id), session_id=info.id)
            wall: list[float] = []
            cpu: list[float] = []
            events: list[Event] = []
            profiler = cProfile.Profile()
            for turn in range(turns):
                if profile and turn == turns - WINDOW:
                    profiler.enable()
                start, start_cpu = time.perf_counter(), time.process_time()
                await runner.run_turn(
                    UserMessageRequest(content=f"turn {turn}: read the readme"), events.append
                )
                wall.append(time.perf_counter() - start)
                cpu.append(time.process_time() - start_cpu)
                events.clear()
            profiler.disable()
    middle = turns // 2
    spans = {
        f"first {WINDOW}": slice(0, WINDOW),
        f"turns {middle}-{middle + WINDOW}": slice(middle, middle + WINDOW),
        f"last {WINDOW}": slice(turns - WINDOW, turns),
    }
    print(
        f"{turns} turns (2 model requests and 1 read_file call each), window {window:,} tokens, ms per turn"
    )
    for name, figures in (("wall", wall), ("cpu", cpu)):
        medians = {span: statistics.median(figures[part]) * 1000 for span, part in spans.items()}
        shown = ", ".join(f"{span} {value:6.2f}" for span, value in medians.items())
        first, half, last = medians.values()
        print(f"  {name}: {shown};  last/first {last / first:4.2f}, last/middle {last / half:4.2f}")
    if profile:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=5_000)
    parser.add_argument("--window", type=int, default=WINDOW_TOKENS)
    parser.add_argument("--profile", action="store_true")
    options = parser.parse_args()
    anyio.run(run, options.turns, options.window, options.profile)


if __name__ == "__main__":
    main()
