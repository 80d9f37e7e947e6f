"""A fake ACP agent that replays a recorded transcript over stdio (stdlib only).

Usage: ``python acp_fake_agent.py TRANSCRIPT.jsonl [--log LOG.jsonl] [--wait SECONDS] [--framed]``, or with
several transcripts and ``--counter FILE``: the n-th start replays the n-th transcript (the last repeats), so a
test can script a CLI that is restarted. With ``--framed`` every message is framed with a ``Content-Length``
header instead of ending with a newline (Copilot's server protocol, LSP style), and the arguments that start
Copilot's server (``--headless``, ``--stdio``...) are ignored, so the agent can stand in for ``copilot``.

Each transcript line is one JSON object:

- ``{"from": "client", "message": {...}}``: wait for a client message that matches: a
  request or notification with the same ``method``, or a response answering the agent
  request of the recorded ``id``. Messages that match no step yet are kept and matched by
  later steps, so a client may send e.g. ``session/cancel`` and the cancelled permission
  answer in either order. A client request's actual id is remembered under its recorded id.
- ``{"from": "agent", "message": {...}}``: send it; a response's ``id`` is replaced by the
  actual id of the client request recorded with that id; agent requests keep their id.
- ``{"from": "agent", "raw": "text"}``: write the text to stdout as is.
- ``{"from": "agent", "stderr": "text"}``: write the text to stderr.
- ``{"from": "agent", "exit": 3}``: exit with that code.
- ``{"from": "agent", "hang": true}``: stop answering until stdin closes or a signal ends
  the process; with ``"ignore_sigint": true`` SIGINT is ignored too (only SIGKILL ends it).
- ``{"from": "agent", "spawn_grandchild": true}``: start a ``sleep 300`` grandchild; with
  ``"new_session": true`` it leaves the process group (setsid), as a daemonising CLI would.
- ``{"comment": "..."}``: ignored.

Every message received from the client is appended to ``--log`` (one JSON object per
line, flushed at once). A client message that never arrives ends the agent after
``--wait`` seconds (default 60) with exit code 98; the end of the transcript keeps the
agent alive until stdin closes, like a real agent between turns.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any
from typing import NoReturn
from typing import TextIO

_EOF = object()

HERE = Path(__file__).resolve().parent
AGENT = HERE / "acp_fake_agent.py"
"""This file: the program tests start (``sys.executable AGENT TRANSCRIPT --log LOG``)."""
TRANSCRIPTS = HERE / "acp_transcripts"
"""The recorded transcripts, ``<name>.jsonl``."""


def transcript(name: str) -> Path:
    """The path of the transcript ``name`` (without ``.jsonl``)."""
    return TRANSCRIPTS / f"{name}.jsonl"


def arguments(name: str | Path, log: Path | None = None, *more: str) -> tuple[str, ...]:
    """The arguments (after the interpreter) that replay ``name`` and log what the client sent to ``log``."""
    path = name if isinstance(name, Path) else transcript(name)
    extra = ("--log", str(log)) if log is not None else ()
    return (str(AGENT), str(path), *extra, *more)


def read_log(log: Path) -> list[dict[str, Any]]:
    """The client messages the agent received, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]


def marked_processes(mark: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``HIVE_OWNER=<mark>`` (or a child mark of it)."""
    needle = f"HIVE_OWNER={mark}".encode()
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        if any(item == needle or item.startswith(needle + b".") for item in environ.split(b"\0")):
            found.append(int(entry.name))
    return found


_COPILOT_ARGUMENTS = ("--headless", "--no-auto-update", "--stdio", "--no-auto-login", "--no-ask-user")
_framed = False


def _reader(stdin: Any, lines: queue.Queue[object]) -> None:
    for raw in stdin:
        lines.put(raw)
    lines.put(_EOF)


def _framed_reader(stdin: Any, lines: queue.Queue[object]) -> None:
    """Puts the body of each ``Content-Length`` framed message, as the line reader puts a line."""
    while True:
        length = None
        while True:
            header = stdin.readline()
            if not header:
                lines.put(_EOF)
                return
            if not header.strip():
                break
            name, _, value = header.decode("ascii", "replace").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length is None:
            continue
        body = stdin.read(length)
        if len(body) < length:
            lines.put(_EOF)
            return
        lines.put(body)


class _Replay:
    def __init__(self, log: TextIO | None, wait: float) -> None:
        self.log = log
        self.wait = wait
        self.lines: queue.Queue[object] = queue.Queue()
        self.pending: list[dict[str, Any]] = []
        self.ids: dict[Any, Any] = {}
        self.closed = False

    def _next_message(self, deadline: float) -> dict[str, Any] | None:
        while True:
            timeout = deadline - time.monotonic()
            if timeout <= 0:
                _die(98, "timed out waiting for a client message")
            try:
                item = self.lines.get(timeout=timeout)
            except queue.Empty:
                continue
            if item is _EOF:
                self.closed = True
                return None
            assert isinstance(item, bytes)
            text = item.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except ValueError:
                _die(97, f"client sent non-JSON: {text[:200]!r}")
            if self.log is not None:
                self.log.write(json.dumps(message) + "\n")
                self.log.flush()
            if isinstance(message, dict):
                return message  # pyright: ignore[reportUnknownVariableType]

    def expect(self, recorded: dict[str, Any]) -> None:
        deadline = time.monotonic() + self.wait
        for index, message in enumerate(self.pending):
            if _matches(recorded, message):
                del self.pending[index]
                self._remember(recorded, message)
                return
        while True:
            message = self._next_message(deadline)
            if message is None:
                _die(96, f"stdin closed while waiting for {_describe(recorded)}")
            if _matches(recorded, message):
                self._remember(recorded, message)
                return
            self.pending.append(message)

    def _remember(self, recorded: dict[str, Any], actual: dict[str, Any]) -> None:
        if "method" in recorded and "id" in recorded:
            self.ids[_key(recorded["id"])] = actual.get("id")

    def send(self, message: dict[str, Any]) -> None:
        out = dict(message)
        if "method" not in out and "id" in out:
            out["id"] = self.ids.get(_key(out["id"]), out["id"])
        _write_message(json.dumps(out))

    def drain_until_eof(self) -> None:
        while not self.closed:
            item = self.lines.get()
            if item is _EOF:
                self.closed = True
                return
            assert isinstance(item, bytes)
            text = item.decode("utf-8", "replace").strip()
            if text and self.log is not None:
                try:
                    message = json.loads(text)
                except ValueError:
                    message = {"non_json": text}
                self.log.write(json.dumps(message) + "\n")
                self.log.flush()


def _key(value: object) -> str:
    return json.dumps(value)


def _matches(recorded: dict[str, Any], actual: dict[str, Any]) -> bool:
    if "method" in recorded:
        return actual.get("method") == recorded["method"]
    return "method" not in actual and _key(actual.get("id")) == _key(recorded.get("id"))


def _describe(recorded: dict[str, Any]) -> str:
    if "method" in recorded:
        return f"method {recorded['method']!r}"
    return f"a response to id {recorded.get('id')!r}"


def _write(text: str) -> None:
    sys.stdout.buffer.write(text.encode())
    sys.stdout.buffer.flush()


def _write_message(text: str) -> None:
    if _framed:
        body = text.encode()
        sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sys.stdout.buffer.flush()
    else:
        _write(text + "\n")


def _die(code: int, why: str) -> NoReturn:
    sys.stderr.write(f"acp_fake_agent: {why}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    raise SystemExit(code)


def _spawn_grandchild(new_session: bool) -> None:
    subprocess.Popen(
        ["sleep", "300"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=new_session,
    )


def main(argv: list[str]) -> int:
    """Replay the transcript named in ``argv``; returns the exit code."""
    args = list(argv)
    log_path: str | None = None
    wait = 60.0
    if "--log" in args:
        at = args.index("--log")
        log_path = args[at + 1]
        del args[at : at + 2]
    if "--wait" in args:
        at = args.index("--wait")
        wait = float(args[at + 1])
        del args[at : at + 2]
    global _framed
    if "--framed" in args:
        _framed = True
        args = [arg for arg in args if arg != "--framed" and arg not in _COPILOT_ARGUMENTS]
    counter: str | None = None
    if "--counter" in args:
        at = args.index("--counter")
        counter = args[at + 1]
        del args[at : at + 2]
    if not args or (len(args) > 1 and counter is None):
        sys.stderr.write("usage: acp_fake_agent.py TRANSCRIPT.jsonl [--log LOG.jsonl]\n")
        return 2
    chosen = args[0]
    if counter is not None:
        # The n-th start of the agent replays the n-th transcript (the last one repeats).
        runs = int(Path(counter).read_text() or "0") if Path(counter).exists() else 0
        Path(counter).write_text(str(runs + 1))
        chosen = args[min(runs, len(args) - 1)]
    steps = [
        json.loads(line) for line in Path(chosen).read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    log = open(log_path, "a", encoding="utf-8") if log_path else None  # noqa: SIM115
    replay = _Replay(log, wait)
    reader = _framed_reader if _framed else _reader
    threading.Thread(target=reader, args=(sys.stdin.buffer, replay.lines), daemon=True).start()
    for step in steps:
        if "comment" in step and "from" not in step:
            continue
        if step.get("from") == "client":
            replay.expect(step["message"])
            continue
        if "message" in step:
            replay.send(step["message"])
        elif "raw" in step:
            _write(step["raw"])
        elif "stderr" in step:
            sys.stderr.write(step["stderr"])
            sys.stderr.flush()
        elif "exit" in step:
            sys.stdout.flush()
            return int(step["exit"])
        elif step.get("hang"):
            if step.get("ignore_sigint"):
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            replay.drain_until_eof()
            return 0
        elif step.get("spawn_grandchild"):
            _spawn_grandchild(bool(step.get("new_session")))
    replay.drain_until_eof()
    return 0


def _exit(code: int) -> None:
    """Exit at once: the reader thread may hold stdin's lock, which a normal interpreter exit would wait on."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    try:
        _exit(main(sys.argv[1:]))
    except SystemExit as stop:
        _exit(stop.code if isinstance(stop.code, int) else 1)
    except KeyboardInterrupt:
        _exit(130)
