"""Record an ACP conversation: ``python acp_recorder.py OUT.jsonl [--scrub PATH=NAME]... -- CMD ARGS...``.

Runs ``CMD`` and sits between it and the client that started the recorder: the client's stdin goes to the
agent, the agent's stdout comes back, byte for byte, and every JSON-RPC message either way is written to
``OUT.jsonl`` in the transcript format :mod:`acp_fake_agent` replays::

    {"from": "client", "message": {...}}
    {"from": "agent", "message": {...}}

A line that is not JSON is kept as ``{"from": "agent", "raw": "line\\n"}``. Each ``--scrub PATH=NAME``
replaces the absolute path ``PATH`` by ``NAME`` in what is written (``/tmp/x/project=/path/to/project``), the
longest first, so a recording made in a temporary directory becomes a stable fixture. The agent's stderr is
passed through; the recorder exits with the agent's status. Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO
from typing import Any

__all__ = ["Recorder", "main", "scrub"]


def scrub(text: str, replacements: Sequence[tuple[str, str]]) -> str:
    """``text`` with each path replaced by its name, the longest path first (so a project inside a home
    keeps its own name)."""
    for path, name in sorted(replacements, key=lambda pair: -len(pair[0])):
        text = text.replace(path, name)
    return text


class Recorder:
    """Writes transcript lines, one at a time from either direction's thread."""

    def __init__(self, out: IO[str], replacements: Sequence[tuple[str, str]]) -> None:
        self._out = out
        self._replacements = list(replacements)
        self._lock = threading.Lock()

    def record(self, side: str, line: bytes) -> None:
        """Write one line that went from ``side`` (``client`` or ``agent``)."""
        text = line.decode("utf-8", errors="replace")
        entry: dict[str, Any]
        try:
            message = json.loads(text)
        except ValueError:
            if not text.strip():
                return
            entry = {"from": side, "raw": text if text.endswith("\n") else text + "\n"}
        else:
            entry = {"from": side, "message": message}
        encoded = scrub(json.dumps(entry, ensure_ascii=False), self._replacements)
        with self._lock:
            self._out.write(encoded + "\n")
            self._out.flush()


def _pump(source: IO[bytes], sink: IO[bytes], side: str, recorder: Recorder) -> None:
    try:
        for line in iter(source.readline, b""):
            recorder.record(side, line)
            try:
                sink.write(line)
                sink.flush()
            except (BrokenPipeError, ValueError, OSError):
                break
    finally:
        with contextlib.suppress(OSError):
            sink.close()


def _parse(argv: Sequence[str]) -> tuple[str, list[tuple[str, str]], list[str]]:
    if "--" not in argv:
        raise SystemExit("usage: acp_recorder.py OUT.jsonl [--scrub PATH=NAME]... -- CMD ARGS...")
    split = list(argv).index("--")
    head, command = list(argv[:split]), list(argv[split + 1 :])
    if not head or not command:
        raise SystemExit("usage: acp_recorder.py OUT.jsonl [--scrub PATH=NAME]... -- CMD ARGS...")
    out, rest = head[0], head[1:]
    replacements: list[tuple[str, str]] = []
    while rest:
        option = rest.pop(0)
        if option != "--scrub" or not rest or "=" not in rest[0]:
            raise SystemExit(f"acp_recorder.py: unexpected argument {option!r}")
        path, _, name = rest.pop(0).partition("=")
        replacements.append((path, name))
        # A path may reach the agent resolved (/private/tmp, symlinked tmp dirs): scrub that spelling too.
        real = os.path.realpath(path)
        if real != path:
            replacements.append((real, name))
    return out, replacements, command


def main(argv: Sequence[str] | None = None) -> int:
    """Run the recorder; returns the agent's exit status."""
    out_path, replacements, command = _parse(sys.argv[1:] if argv is None else argv)
    with open(out_path, "w", encoding="utf-8") as out:
        recorder = Recorder(out, replacements)
        agent = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert agent.stdin is not None
        assert agent.stdout is not None

        def forward(signum: int, frame: object) -> None:
            agent.send_signal(signum)

        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, forward)
        to_agent = threading.Thread(
            target=_pump, args=(sys.stdin.buffer, agent.stdin, "client", recorder), daemon=True
        )
        to_agent.start()
        _pump(agent.stdout, sys.stdout.buffer, "agent", recorder)
        return agent.wait()


if __name__ == "__main__":
    raise SystemExit(main())
