"""A fake ``omp`` that plays a recorded transcript (``omp_transcripts/*.jsonl``) and checks what hive sends.

Run as ``python omp_fake_cli.py [omp arguments]`` with ``FAKE_OMP_TRANSCRIPT`` naming the transcript and
``FAKE_OMP_LOG`` a file where each run appends one JSON line: its mode, arguments, every line it read and the first
mismatch (``problem``, ``null`` when none). ``--version`` prints ``FAKE_OMP_VERSION``.

A transcript is JSON lines. ``{"run": "rpc-ui"}`` / ``{"run": "json"}`` starts the steps of a run in that mode
(the fake plays the section of its ``--mode``); ``{"comment": ...}`` lines are skipped. Steps:

* ``{"argv": [...]}``: these arguments appear, in this order, on the command line;
* ``{"expect": {...}}``: the next stdin line is a JSON object with these fields (``"*"`` matches any value; with
  ``"exact": true`` it must equal the object); its ``id`` is remembered under its ``type``;
* ``{"expect_prompt": "text"}``: stdin, read to its end, is this prompt (JSON mode);
* ``{"expect_eof": true}``: stdin ends here (hive sent nothing more);
* ``{"send": {...}}``: write the frame; a string ``"$<type>"`` becomes the id remembered for that command type;
* ``{"send_raw": "text"}``: write the text as one line, as it is;
* ``{"exit": N, "stderr": "..."}``: write to stderr and exit with N now.

After the last step the fake reads stdin to its end and exits 0. On a mismatch it logs the problem, writes it to
stderr and exits 99.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

_ANY = "*"


class _Mismatch(Exception):
    pass


def _section(transcript: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    current: str | None = None
    for step in transcript:
        if "run" in step:
            current = step["run"]
        elif "comment" not in step and current == mode:
            steps.append(step)
    return steps


def _matches(expected: Any, received: Any) -> bool:
    if expected == _ANY:
        return True
    if isinstance(expected, dict) and isinstance(received, dict):
        return all(key in received and _matches(value, received[key]) for key, value in expected.items())  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    return expected == received


def _substitute(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("$") and value[1:] in ids:
        return ids[value[1:]]
    if isinstance(value, dict):
        return {key: _substitute(item, ids) for key, item in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_substitute(item, ids) for item in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def _play(steps: list[dict[str, Any]], argv: list[str], received: list[str]) -> None:
    ids: dict[str, str] = {}

    def read_line() -> str | None:
        line = sys.stdin.readline()
        if not line:
            return None
        received.append(line.rstrip("\n"))
        return line

    for step in steps:
        if "argv" in step:
            wanted: list[str] = step["argv"]
            at = 0
            for arg in argv:
                if at < len(wanted) and arg == wanted[at]:
                    at += 1
            if at < len(wanted):
                raise _Mismatch(f"arguments {argv} lack {wanted}")
        elif "expect" in step:
            line = read_line()
            if line is None:
                raise _Mismatch(f"stdin ended; expected {step['expect']}")
            try:
                frame = json.loads(line)
            except ValueError:
                raise _Mismatch(f"not JSON: {line!r}") from None
            exact = step.get("exact") is True
            if (frame != step["expect"]) if exact else not _matches(step["expect"], frame):
                raise _Mismatch(f"expected {step['expect']}, got {frame}")
            if isinstance(frame.get("type"), str) and isinstance(frame.get("id"), str):
                ids[frame["type"]] = frame["id"]
        elif "expect_prompt" in step:
            text = sys.stdin.read()
            received.append(text)
            if text != step["expect_prompt"]:
                raise _Mismatch(f"expected the prompt {step['expect_prompt']!r}, got {text!r}")
        elif "expect_eof" in step:
            line = read_line()
            if line is not None:
                raise _Mismatch(f"expected the end of stdin, got {line!r}")
        elif "send" in step:
            sys.stdout.write(json.dumps(_substitute(step["send"], ids)) + "\n")
            sys.stdout.flush()
        elif "send_raw" in step:
            sys.stdout.write(step["send_raw"] + "\n")
            sys.stdout.flush()
        elif "exit" in step:
            sys.stderr.write(step.get("stderr", ""))
            sys.stderr.flush()
            raise SystemExit(step["exit"])
        else:
            raise _Mismatch(f"unknown transcript step {step}")
    while read_line() is not None:
        pass


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        print(os.environ.get("FAKE_OMP_VERSION", "17.0.0"))
        return
    mode = argv[argv.index("--mode") + 1] if "--mode" in argv else "text"
    with open(os.environ["FAKE_OMP_TRANSCRIPT"], encoding="utf-8") as source:
        transcript = [json.loads(line) for line in source if line.strip()]
    received: list[str] = []
    problem: str | None = None
    code = 0
    try:
        _play(_section(transcript, mode), argv, received)
    except _Mismatch as mismatch:
        problem, code = str(mismatch), 99
        sys.stderr.write(f"fake omp: {problem}\n")
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        with open(os.environ["FAKE_OMP_LOG"], "a", encoding="utf-8") as log:
            entry = {"mode": mode, "argv": argv, "received": received, "problem": problem}
            log.write(json.dumps(entry) + "\n")
    raise SystemExit(code)


if __name__ == "__main__":
    main()
