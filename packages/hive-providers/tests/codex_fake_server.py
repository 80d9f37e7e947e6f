"""A fake Codex app-server over stdio (stdlib only), for the Codex backend tests.

Usage: ``python codex_fake_server.py MODE [RECORDED.json]``. It answers ``initialize``, ``thread/start`` and
``turn/start``; what the turn does is the mode's:

- ``exit``: write ``fatal: no config`` to stderr and exit with code 3 before answering anything;
- ``noise``: print a banner that is no JSON-RPC and exit;
- ``die``: stream ``partial`` as the agent's text, then write ``panicked at the turn`` to stderr and exit 101;
- ``approve``: stream ``partial``, ask approval of a command under the string id ``req-7``, write the answer it
  got to stderr as ``ANSWER {...}``, then complete the command declined and the turn;
- ``replay``: send every notification of ``RECORDED.json`` (``{"thread": ..., "turn": ..., "notifications":
  [...]}``), in the thread and turn it names.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve()
"""This file: the program tests start (``sys.executable SERVER MODE``)."""

THREAD = "thr_fake"
"""The thread every mode but ``replay`` starts."""


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _approval_turn(mode: str) -> None:
    on = {"threadId": THREAD, "turnId": "turn_1"}
    _send({"method": "item/agentMessage/delta", "params": {**on, "itemId": "m", "delta": "partial"}})
    if mode == "die":
        sys.stderr.write("panicked at the turn\n")
        sys.exit(101)
    command = {"itemId": "c1", "command": "/bin/bash -lc 'touch x'"}
    _send({"id": "req-7", "method": "item/commandExecution/requestApproval", "params": {**on, **command}})
    answer = json.loads(sys.stdin.readline())
    sys.stderr.write("ANSWER " + json.dumps(answer) + "\n")
    item = {"type": "commandExecution", "id": "c1", "command": "touch x", "status": "declined"}
    _send({"method": "item/completed", "params": {**on, "item": item}})
    _send(
        {
            "method": "turn/completed",
            "params": {"threadId": THREAD, "turn": {"id": "turn_1", "status": "completed"}},
        }
    )


def main(argv: list[str]) -> int:
    mode = argv[0]
    if mode == "exit":
        sys.stderr.write("fatal: no config\n")
        return 3
    if mode == "noise":
        print("Welcome to codex!", flush=True)
        return 0
    recorded: dict[str, Any] = json.loads(Path(argv[1]).read_text()) if mode == "replay" else {}
    thread, turn = recorded.get("thread", THREAD), recorded.get("turn", "turn_1")
    for line in sys.stdin:
        message = json.loads(line)
        method, id_ = message.get("method"), message.get("id")
        if method == "initialize":
            _send({"id": id_, "result": {"userAgent": "fake"}})
        elif method == "thread/start":
            _send({"id": id_, "result": {"thread": {"id": thread}}})
        elif method == "turn/start":
            _send({"id": id_, "result": {"turn": {"id": turn, "status": "inProgress"}}})
            if mode == "replay":
                for notification in recorded["notifications"]:
                    _send(notification)
            else:
                _approval_turn(mode)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
