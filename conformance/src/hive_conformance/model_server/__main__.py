"""``python -m hive_conformance.model_server SCRIPT.jsonl [--port N]``: serve a script until interrupted.

The first line on stdout is the server's URL. On SIGINT or SIGTERM the server stops, writes the recorded
requests to ``--record FILE`` (JSONL) when asked, reports unconsumed rounds on stderr, and exits 0.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec

from hive_conformance.script import decode_script

from .server import DEFAULT_MODEL
from .server import ScriptedModelServer


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m hive_conformance.model_server",
        description="Serve a script of model rounds over the OpenAI, Anthropic and Gemini APIs.",
    )
    parser.add_argument("script", help="the script: one round per line (JSONL); '-' reads standard input")
    parser.add_argument("--port", type=int, default=0, help="the port to bind (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (default: 127.0.0.1)")
    parser.add_argument("--model", default=DEFAULT_MODEL, help="the model name to report and list")
    parser.add_argument("--record", type=Path, help="write the received requests here as JSONL on exit")
    args = parser.parse_args(argv)

    try:
        data = sys.stdin.buffer.read() if args.script == "-" else Path(args.script).read_bytes()
        rounds = decode_script(data)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    stop = threading.Event()

    def request_stop(signum: int, frame: object) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, request_stop)

    with ScriptedModelServer(rounds, model=args.model, host=args.host, port=args.port) as server:
        print(server.url, flush=True)
        stop.wait()
    if args.record is not None:
        encoder = msgspec.json.Encoder()
        args.record.write_bytes(b"".join(encoder.encode(request) + b"\n" for request in server.requests))
    left = len(server.remaining)
    print(f"served {len(server.requests)} request(s); {left} round(s) left unconsumed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
