"""``hive -p`` and ``hive run`` are one one-shot (:mod:`hive_cli.one_shot`): on the same input, the same exit code
and the same output, in ``-o json`` and ``-o jsonl``.

Each case runs both commands against the scripted model server; what may differ between the two runs (the session
id, the duration) is left out of the comparison.
"""

from __future__ import annotations

import json
import signal
from typing import Any

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until
from turn_shapes import ERROR_RECORD_KEYS
from turn_shapes import FAILURE_KEYS
from turn_shapes import START_KEYS
from turn_shapes import TURN_KEYS

from hive_cli.piped_input import MAX_PIPED_BYTES
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptFinishReason

COMMANDS = {"-p": ("-p",), "run": ("run", "-p")}
"""The two one-shot commands, each followed by the prompt."""

FORMATS = ("json", "jsonl")


VARYING = frozenset({"session_id", "duration_ms"})
"""What differs from one run to the next, left out of the comparison."""


def _same(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in VARYING}


def _alike(
    ws: Workspace, output: str, prompt: str, *, input: str | None = None
) -> tuple[int, list[dict[str, Any]]]:
    """Run ``prompt`` with each command; check that both exit and print alike; return the exit code and what was
    printed (the document alone, or the records)."""
    printed: dict[str, tuple[int, list[dict[str, Any]]]] = {}
    for name, command in COMMANDS.items():
        result = ws.run(*command, prompt, "-o", output, input=input)
        shown = [result.line_document()] if output == "json" else result.records()
        printed[name] = (result.code, [_same(item) for item in shown])
    assert printed["-p"] == printed["run"], printed
    return printed["run"]


def _document(shown: list[dict[str, Any]], keys: frozenset[str]) -> dict[str, Any]:
    """The one ``-o json`` document printed, checked to have ``keys``."""
    [document] = shown
    assert set(document) | VARYING == keys
    return document


@pytest.mark.parametrize("output", FORMATS)
def test_stdin_over_the_limit_is_exit_1_in_the_outputs_form_and_nothing_is_sent(
    ws: Workspace, server: ScriptedModelServer, output: str
) -> None:
    code, shown = _alike(ws.use(server), output, "review this", input="x" * (MAX_PIPED_BYTES + 1))
    assert code == 1
    if output == "json":
        document = _document(shown, FAILURE_KEYS)
        assert (document["exit_code"], document["stop_reason"]) == (1, "error")
        assert document["error"] == "more than 16 MiB arrived on stdin"
    else:
        assert shown == [
            {"type": "start"},
            {
                "type": "error",
                "error": "more than 16 MiB arrived on stdin",
                "stop_reason": "error",
                "exit_code": 1,
            },
        ]
    assert model_requests(server) == []


@pytest.mark.parametrize("output", FORMATS)
def test_a_model_error_is_exit_1_with_the_failure_shape(
    ws: Workspace, server: ScriptedModelServer, output: str
) -> None:
    for _ in COMMANDS:
        server.add(Round(failure=HttpFailure(status=401, message="no such key")))
    code, shown = _alike(ws.use(server), output, "hi")
    assert code == 1
    if output == "json":
        last = _document(shown, FAILURE_KEYS)
    else:
        assert shown[0] == {"type": "start"}  # its session id left out
        last = shown[-1]
        assert set(last) == ERROR_RECORD_KEYS
    assert (last["exit_code"], last["stop_reason"]) == (1, "error")
    assert "no such key" in last["error"]


@pytest.mark.parametrize("output", FORMATS)
def test_a_denied_tool_is_reported_alike_and_the_turn_exits_0(
    ws: Workspace, server: ScriptedModelServer, output: str
) -> None:
    for _ in COMMANDS:
        # Asked by the default rules, and refused: there is no terminal to ask at.
        server.add(
            calls(("c1", "write_file", {"path": "settings.json", "content": "{}"})), text("Could not.")
        )
    code, shown = _alike(ws.use(server), output, "write the settings")
    assert code == 0
    if output == "json":
        document = _document(shown, TURN_KEYS)
        assert (document["tool_calls"], document["refused_tool_calls"]) == (1, 1)
        assert document["calls"][0]["outcome"] == "refused"
    else:
        kinds = [record["type"] for record in shown]
        assert kinds == ["start", "tool_call", "tool_result", "text", "done"]
        assert shown[2]["refusal_kind"] == "rejected"
    assert not (ws.project / "settings.json").exists()


@pytest.mark.parametrize(
    ("finish", "stop_reason", "code"),
    [("length", "output_limit", 2), ("content_filter", "content_filter", 3)],
)
def test_a_turn_stopped_short_or_filtered_has_the_readmes_exit_code(
    ws: Workspace, server: ScriptedModelServer, finish: ScriptFinishReason, stop_reason: str, code: int
) -> None:
    for _ in COMMANDS:
        server.add(text("Cut sh", finish=finish))
    exited, shown = _alike(ws.use(server), "json", "write a lot")
    document = _document(shown, TURN_KEYS)
    assert exited == document["exit_code"] == code
    assert document["stop_reason"] == stop_reason


def _interrupted(
    ws: Workspace, server: ScriptedModelServer, command: tuple[str, ...], output: str
) -> tuple[int, str]:
    server.add(text(*[f"w{i} " for i in range(40)], delay=0.5))
    asked = len(model_requests(server))
    with ws.use(server).start(*command, "talk slowly", "-o", output) as proc:
        proc.close_stdin()  # nothing is piped in
        if output == "jsonl":
            assert proc.next_event()["type"] == "start"
            assert proc.next_event()["type"] == "text"
        else:
            wait_until(lambda: len(model_requests(server)) > asked, what="the model request")
        proc.signal(signal.SIGINT)
        code = proc.wait()
        return code, proc.stdout


@pytest.mark.parametrize("output", FORMATS)
def test_an_interrupted_turn_is_exit_130_with_the_cancelled_shape(
    ws: Workspace, server: ScriptedModelServer, output: str
) -> None:
    for command in COMMANDS.values():
        code, stdout = _interrupted(ws, server, command, output)
        assert code == 130, (command, stdout)
        if output == "json":
            assert stdout.count("\n") == 1
            document = json.loads(stdout)
            assert set(document) == FAILURE_KEYS
            assert (document["error"], document["stop_reason"], document["exit_code"]) == (
                "cancelled",
                "cancelled",
                130,
            )
        else:
            rest = [
                json.loads(line) for line in stdout.splitlines()[2:]
            ]  # after the start and a text read above
            assert rest[-1] == {
                "type": "error",
                "error": "cancelled",
                "stop_reason": "cancelled",
                "exit_code": 130,
            }
            assert all(record["type"] == "text" for record in rest[:-1])


@pytest.mark.parametrize("output", FORMATS)
def test_no_prompt_is_exit_1_in_the_outputs_form(
    ws: Workspace, server: ScriptedModelServer, output: str
) -> None:
    code, shown = _alike(ws.use(server), output, "")
    assert code == 1
    message = "no prompt: give it as words, with -p, or on stdin (stdin was empty)"
    last = _document(shown, FAILURE_KEYS) if output == "json" else shown[-1]
    assert (last["error"], last["exit_code"]) == (message, 1)
    text_mode = ws.run("run", input="")
    assert (text_mode.code, text_mode.stdout, text_mode.stderr) == (1, "", f"hive: {message}\n")
    assert model_requests(server) == []


def test_the_start_record_names_the_session(ws: Workspace, server: ScriptedModelServer) -> None:
    for _ in COMMANDS:
        server.add(text("Hi."))
    ws.use(server)
    for command in COMMANDS.values():
        records = ws.run(*command, "hi", "-o", "jsonl").records()
        assert set(records[0]) == START_KEYS
