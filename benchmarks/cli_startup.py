"""Cold start of the ``hive`` command: how long a fresh process takes before it is useful.

Run: uv run python benchmarks/cli_startup.py [--repeats N] [--prompt-repeats N] [--as-is]

Prints the median wall time of fresh processes for:
- floor: ``python -c pass`` with the same interpreter;
- ``hive --version`` (goal: under 60 ms) and ``hive --help`` (goal: under 150 ms), to exit;
- ``hive -p`` to the first byte of the answer on stdout, against the scripted model server (the ``openai``
  provider over the Responses API, in a throwaway ``HIVE_HOME``), and to exit.

Bytecode is cached in a temporary directory (``PYTHONPYCACHEPREFIX``, warmed by one unmeasured run each), as an
installed package has it even where the environment sets ``PYTHONDONTWRITEBYTECODE``; ``--as-is`` keeps the
environment unchanged instead.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage

HIVE = Path(sys.executable).with_name("hive")


def to_exit(command: list[str], env: Mapping[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - start


def to_first_byte(command: list[str], env: Mapping[str, str], cwd: Path) -> tuple[float, float]:
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    first = process.stdout.read(1)
    first_byte = time.perf_counter() - start
    process.stdout.read()
    process.stdout.close()
    if process.wait(60) != 0 or not first:
        raise SystemExit(f"{' '.join(command)} failed")
    return first_byte, time.perf_counter() - start


def median_ms(measure: Callable[[], float], repeats: int) -> float:
    measure()  # warm the bytecode cache and the disk cache; not counted
    return statistics.median(measure() for _ in range(repeats)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=15, help="runs of each quick command (default 15)")
    parser.add_argument("--prompt-repeats", type=int, default=7, help="runs of hive -p (default 7)")
    parser.add_argument("--as-is", action="store_true", help="do not set up a bytecode cache")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="hive-startup-") as scratch:
        root = Path(scratch)
        project = root / "project"
        (project / ".hive").mkdir(parents=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "GOOGLE"))}
        env |= {"HIVE_HOME": str(root / "home"), "LMSUPPLY_ENABLED": "false"}
        if not args.as_is:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        caching = "PYTHONDONTWRITEBYTECODE" not in env

        floor = median_ms(lambda: to_exit([sys.executable, "-c", "pass"], env, project), args.repeats)
        version = median_ms(lambda: to_exit([str(HIVE), "--version"], env, project), args.repeats)
        help_ = median_ms(lambda: to_exit([str(HIVE), "--help"], env, project), args.repeats)

        rounds = [
            Round(
                parts=[ScriptText(chunks=["Hello", " there."])], usage=Usage(input_tokens=5, output_tokens=2)
            )
            for _ in range(args.prompt_repeats + 1)
        ]
        with ScriptedModelServer(rounds, model="scripted") as server:
            env |= {
                "OPENAI_API_KEY": "test",
                "OPENAI_MODEL": "scripted",
                "OPENAI_ENDPOINT": server.url + "/v1",
            }
            prompt = [str(HIVE), "-p", "hi"]
            to_first_byte(prompt, env, project)  # warm-up, not counted
            runs = [to_first_byte(prompt, env, project) for _ in range(args.prompt_repeats)]
        first_byte = statistics.median(r[0] for r in runs) * 1000
        prompt_exit = statistics.median(r[1] for r in runs) * 1000

    print(
        f"bytecode cache: {'on' if caching else 'off'}; medians of {args.repeats} runs ({args.prompt_repeats} for -p)"
    )
    print(f"python -c pass (floor)      {floor:8.1f} ms")
    print(
        f"hive --version              {version:8.1f} ms   (+{version - floor:.1f} over the floor; goal < 60 ms)"
    )
    print(
        f"hive --help                 {help_:8.1f} ms   (+{help_ - floor:.1f} over the floor; goal < 150 ms)"
    )
    print(f"hive -p, first byte         {first_byte:8.1f} ms   (scripted model, openai provider)")
    print(f"hive -p, exit               {prompt_exit:8.1f} ms")


if __name__ == "__main__":
    main()
