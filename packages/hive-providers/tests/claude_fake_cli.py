"""A stand-in for Claude Code's stream-json mode, for the tests of :mod:`hive_providers.backends.claude`.

Run as ``python claude_fake_cli.py MODE [claude arguments...]``. It answers ``initialize``, reads the prompt's
``user`` line, then plays ``MODE``:

* ``ask``: an ``AskUserQuestion`` call (one single-choice and one multi-select question) sent as a
  ``can_use_tool`` control request; the ``result`` text is the JSON of the control response hive wrote back;
* ``malformed``: a control request with no ``request`` object, then (after hive's answer) a normal reply whose
  ``result`` is the JSON of that answer;
* ``exit_at_start``: writes to stderr and exits 3 before answering ``initialize``;
* ``noise``: prints lines that are not JSON and exits 0 without a ``result``;
* ``die_pending``: asks a question and dies while it is pending.
"""

from __future__ import annotations

import json
import sys

QUESTIONS = [
    {
        "question": "Which database?",
        "header": "Database",
        "options": [{"label": "Postgres", "description": "the big one"}, {"label": "SQLite"}],
        "multiSelect": False,
    },
    {
        "question": "Which extras?",
        "header": "Extras",
        "options": [{"label": "Docs"}, {"label": "Tests"}, {"label": "CI"}],
        "multiSelect": True,
    },
]


def send(message: object) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def read() -> dict[str, object]:
    line = sys.stdin.readline()
    if not line:
        raise SystemExit(0)
    return json.loads(line)


def main() -> None:
    mode = sys.argv[1]
    if mode == "exit_at_start":
        sys.stderr.write("fatal: no credentials\n")
        raise SystemExit(3)
    request = read()
    send(
        {
            "type": "control_response",
            "response": {"subtype": "success", "request_id": request["request_id"], "response": {}},
        }
    )
    read()  # the prompt
    if mode == "noise":
        print("Welcome to the fake CLI")
        print("not json either")
        raise SystemExit(0)
    send({"type": "system", "subtype": "init", "session_id": "fake-session-1", "model": "m"})
    if mode == "malformed":
        send({"type": "control_request", "request_id": "bad-1"})
    else:
        send(
            {
                "type": "assistant",
                "message": {
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_ask",
                            "name": "AskUserQuestion",
                            "input": {"questions": QUESTIONS},
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": "fake-session-1",
            }
        )
        send(
            {
                "type": "control_request",
                "request_id": "ask-1",
                "request": {
                    "subtype": "can_use_tool",
                    "tool_name": "AskUserQuestion",
                    "input": {"questions": QUESTIONS},
                    "tool_use_id": "toolu_ask",
                },
            }
        )
    if mode == "die_pending":
        raise SystemExit(9)
    answer = read()
    while answer.get("type") != "control_response":
        answer = read()
    payload = answer["response"]
    if payload.get("subtype") == "success":  # the answer itself; an error answer is kept whole
        payload = payload["response"]
    send(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_ask", "content": "answered"}],
            },
            "parent_tool_use_id": None,
        }
    )
    send(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": json.dumps(payload),
            "stop_reason": "end_turn",
            "session_id": "fake-session-1",
            "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 4},
        }
    )
    read()  # stdin's end


if __name__ == "__main__":
    main()
