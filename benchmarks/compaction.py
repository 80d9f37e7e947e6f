"""The context engine's cost per request: preparing what is sent from histories of growing size.

Run: uv run python benchmarks/compaction.py [--sizes 100,1000,2000,10000,100000] [--repeats N]

For each history size (a mix of user messages, assistant replies, tool calls and their results, one result in
fifty long enough to be cut) it prints the median time of:
- cold prepare: a fresh ContextManager over the whole history: truncation + masking + the compaction decision
  (the window is large enough that nothing is compacted);
- next request: the steady state of a session, a manager that has seen the history and gets two new messages;
- full compaction: a fresh manager over a window half the history's size, with a stub model answering the
  summary request at once;
- encode: msgspec-encoding the same history as a request body, for scale;
each with the cost per message. Goal: under 10 ms for 2,000 messages, and linear growth (a flat per-message
cost).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence

import anyio
import msgspec

from hive_core.chat import Capabilities
from hive_core.chat import ChatOptions
from hive_core.chat import ChatUpdate
from hive_core.chat import FinishUpdate
from hive_core.chat import TextUpdate
from hive_core.context import ContextManager
from hive_core.context import estimate_tokens
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import ToolCallPart
from hive_core.messages import ToolResultPart
from hive_core.messages import system
from hive_core.messages import user

OPTIONS = ChatOptions()


class StubModel:
    """Answers every request with the same short summary, at once."""

    capabilities = Capabilities(context_window=None)

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        yield TextUpdate("The user asked for many things; all were done.")
        yield FinishUpdate("stop")


def history(size: int) -> list[Message]:
    """``size`` messages: a system message, then rounds of question, tool call, result and answer."""
    messages = [system("You are hive, a coding agent.")]
    index = 0
    while len(messages) < size:
        result = ("line of output\n" * 2_500) if index % 50 == 0 else ("output line\n" * 160)
        messages += [
            user(f"Question {index}: please look at module {index} and fix what is wrong."),
            Message(
                "assistant", [ToolCallPart(f"call_{index}", "read_file", f'{{"path":"src/m{index}.py"}}')]
            ),
            Message("tool", [ToolResultPart(f"call_{index}", "read_file", result)]),
            Message("assistant", [TextPart(f"Module {index} had a typo; fixed. " * 8)]),
        ]
        index += 1
    return messages[:size]


async def median(repeats: int, run: Callable[[], Awaitable[object]]) -> float:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        await run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def measure(size: int, repeats: int) -> dict[str, float]:
    messages = history(size)
    model = StubModel()
    large = 10 * estimate_tokens(messages)

    async def cold() -> None:
        await ContextManager(window=large).prepare(messages, client=model, options=OPTIONS)

    sent = (
        await ContextManager(window=large).prepare(messages, client=model, options=OPTIONS)
    ).estimated_tokens
    small = max(sent // 2, 2_000)

    async def compaction() -> None:
        prepared = await ContextManager(window=small).prepare(messages, client=model, options=OPTIONS)
        assert prepared.compaction is not None, "the history did not compact"

    async def encode() -> None:
        msgspec.json.encode(messages)

    # The steady state of a session: a manager that has prepared all but the last two messages.
    steady: list[float] = []
    for _ in range(repeats):
        warm = ContextManager(window=large)
        await warm.prepare(messages[:-2], client=model, options=OPTIONS)
        start = time.perf_counter()
        await warm.prepare(messages, client=model, options=OPTIONS)
        steady.append(time.perf_counter() - start)
    return {
        "cold prepare": await median(repeats, cold),
        "next request": statistics.median(steady),
        "full compaction": await median(repeats, compaction),
        "encode": await median(repeats, encode),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="100,1000,2000,10000,100000")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'messages':>9}  {'what':<16} {'median':>10}  {'per message':>12}")
    for size in sizes:
        repeats = max(1, args.repeats if size <= 10_000 else args.repeats // 3)
        for what, seconds in anyio.run(measure, size, repeats).items():
            print(f"{size:>9,}  {what:<16} {seconds * 1e3:>8.2f} ms  {seconds / size * 1e6:>9.2f} µs")
    print("goal: cold prepare and full compaction under 10 ms for 2,000 messages; a flat cost per message")


if __name__ == "__main__":
    main()
