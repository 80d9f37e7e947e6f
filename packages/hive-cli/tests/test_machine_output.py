"""One machine-output vocabulary: ``-o json|jsonl`` on every command that prints data, snake_case keys, the same
turn document from ``hive -p`` and ``hive run`` (``session_id``, ``stop_reason``, ``call_id``), which a SIGTERM no
longer empties; ``--json`` still works but says it is deprecated; ``-p`` never means "provider"."""

from __future__ import annotations

import json
import re
import signal
from typing import Any
from typing import cast

import pytest
from cli_harness import LOCAL_PROMPT
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until

from hive_cli.local_notice import LOCAL_MODEL_NOTICE
from hive_conformance.model_server import ScriptedModelServer

_SNAKE = re.compile(r"[a-z][a-z0-9_]*")


def _keys(value: Any) -> set[str]:
    """Every key of every object in ``value``."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in cast("dict[str, Any]", value).items():
            found |= {key} | _keys(item)
    elif isinstance(value, list):
        for item in cast("list[Any]", value):
            found |= _keys(item)
    return found


def _assert_snake(document: Any, where: str) -> None:
    odd = sorted(key for key in _keys(document) if not _SNAKE.fullmatch(key))
    assert not odd, f"{where}: keys not in snake_case: {odd}"


def test_every_json_output_is_snake_case(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(calls(("c1", "read_file", {"path": "a.txt"})), text("Alpha.", usage=(10, 2)))
    server.add(calls(("c2", "read_file", {"path": "a.txt"})), text("Alpha again.", usage=(10, 2)))
    ws.use(server).allow_all()
    one_shot = ws.run("-p", "read a.txt", "-o", "json").line_document()
    run = ws.run("run", "-o", "json", "read a.txt").line_document()
    # hive -p and hive run document a turn alike.
    assert set(one_shot) == set(run)
    for doc in (one_shot, run):
        assert doc["session_id"]
        assert doc["stop_reason"] == "completed"
        [call] = doc["calls"]
        assert (call["tool"], call["outcome"]) == ("read_file", "ok")
    assert [one_shot["calls"][0]["call_id"], run["calls"][0]["call_id"]] == ["c1", "c2"]
    documents = {
        "-p -o json": one_shot,
        "run -o json": run,
        "models -o json": ws.run("models", "-o", "json").line_document(),
        "agents -o json": ws.run("agents", "-o", "json").line_document(),
        "sessions list -o json": ws.run("sessions", "list", "-o", "json").line_document(),
    }
    for where, document in documents.items():
        _assert_snake(document, where)
    assert {"message_count", "first_message"} <= _keys(documents["sessions list -o json"])
    assert {"model_id", "is_default", "context_window"} <= _keys(documents["models -o json"])


@pytest.mark.parametrize("command", [("models",), ("agents",), ("sessions", "list")])
def test_listing_commands_take_jsonl(
    ws: Workspace, server: ScriptedModelServer, command: tuple[str, ...]
) -> None:
    server.add(text("Hi."))
    ws.use(server).run("-p", "hi")  # a session to list
    as_json = ws.run(*command, "-o", "json")
    as_jsonl = ws.run(*command, "-o", "jsonl")
    assert as_json.code == as_jsonl.code == 0, as_jsonl
    listed = as_json.line_document()
    items = listed["agents"] if command == ("agents",) else listed
    assert as_jsonl.records() == items
    assert items


def test_run_streams_jsonl_like_the_one_shot(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Hel", "lo"))
    records = ws.use(server).run("run", "-o", "jsonl", "hi").records()
    session_id = ws.sessions()[0]["id"]
    assert records[0] == {"type": "start", "session_id": session_id}
    assert [r["content"] for r in records[1:-1]] == ["Hel", "lo"]
    assert records[-1]["type"] == "done"
    assert (records[-1]["session_id"], records[-1]["stop_reason"]) == (session_id, "completed")


def test_sigterm_keeps_what_the_run_had(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(("c1", "read_file", {"path": "a.txt"}), say="Let me read it."),
        text(*[f"w{i} " for i in range(40)], delay=0.5),
    )
    with ws.use(server).allow_all().start("run", "-o", "json", "read a.txt") as proc:
        proc.close_stdin()
        # The second model request is made once the call has its result: the turn is under way.
        wait_until(lambda: len(model_requests(server)) >= 2, what="the second model request")
        proc.signal(signal.SIGTERM)
        code = proc.wait()
        stdout = proc.stdout
    assert code == 143, stdout
    assert stdout.count("\n") == 1
    doc = json.loads(stdout)
    assert (doc["stop_reason"], doc["exit_code"], doc["error"]) == ("cancelled", 143, "cancelled")
    assert doc["session_id"] == ws.sessions()[0]["id"]
    assert doc["content"].startswith("Let me read it.")
    [call] = doc["calls"]
    assert (call["call_id"], call["tool"], call["outcome"]) == ("c1", "read_file", "ok")
    assert "alpha" in call["result"]


@pytest.mark.parametrize("command", [("run", "hi"), ("models",)])
def test_json_is_a_deprecated_alias_of_o_json(
    ws: Workspace, server: ScriptedModelServer, command: tuple[str, ...]
) -> None:
    server.add(text("Hi."), text("Hi."))
    ws.use(server)
    old = ws.run(*command, "--json")
    new = ws.run(*command, "-o", "json")
    assert old.code == new.code == 0, old
    assert old.stderr.count("hive: --json is deprecated; use -o json") == 1, old
    assert "deprecated" not in new.stderr
    assert set(old.line_document() if command[0] == "run" else old.line_document()[0]) == set(
        new.line_document() if command[0] == "run" else new.line_document()[0]
    )


def test_p_is_never_provider(ws: Workspace) -> None:
    result = ws.run("models", "-p", "local")
    assert result.code == 2, result
    assert result.stderr == "hive: no such option -p for `hive models` — did you mean --provider?\n"
    assert ws.run("models", "--provider", "local").code == 0


def test_the_local_model_is_named_by_its_file_and_its_window_by_the_file(ws: Workspace) -> None:
    [row] = ws.run("models", "--provider", "local", "-o", "json").line_document()
    assert row["model_id"].endswith(".gguf")
    assert "/" not in row["model_id"]
    assert row["path"].endswith("/" + row["model_id"])
    assert row["context_window_source"] == "model_file"
    shown = ws.run("models", "--provider", "local").stdout
    assert "site-packages" not in shown
    assert "(from the model file)" in shown
    assert "from the server" not in shown


def test_a_no_key_session_says_which_model_answers(ws: Workspace, server: ScriptedModelServer) -> None:
    local = ws.run("-p", LOCAL_PROMPT, "--provider", "local", timeout=300)
    assert local.code == 0, local
    assert local.stderr.count(LOCAL_MODEL_NOTICE) == 1, local
    assert "SmolLM2-135M" in local.stderr
    assert "hive set openai.apiKey" in local.stderr
    assert "--agent" in local.stderr
    server.add(text("Hi."))
    real = ws.use(server).run("-p", "hi")
    assert real.code == 0, real
    assert "SmolLM2" not in real.stderr


def test_get_and_config_show_speak_the_same_vocabulary(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    ws.env["OPENAI_MODEL"] = "gpt-test-model"
    (ws.project / ".hive" / "config.yaml").write_text("sandbox:\n  networkAccess: true\n", encoding="utf-8")
    ws.trusted = False
    got = ws.run("get", "openai.model", "-o", "json")
    assert got.code == 0, got
    document = got.document()
    _assert_snake(document, "get -o json")
    [entry] = document["entries"]
    assert (entry["key"], entry["value"], entry["layer"], entry["variable"]) == (
        "openai.model",
        "gpt-test-model",
        "env",
        "OPENAI_MODEL",
    )
    shown = ws.run("config", "show", "-o", "json")
    assert shown.code == 0, shown
    whole = shown.document()
    _assert_snake(whole, "config show -o json")
    keys = {item["key"]: item for item in whole["entries"]}
    assert keys["openai.model"]["value"] == "gpt-test-model"
    assert [item["setting"] for item in whole["ignored"]] == ["sandbox.networkAccess: true"]
    lines = ws.run("config", "show", "-o", "jsonl")
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    assert {record["type"] for record in records} == {"entry", "ignored"}
    assert len([r for r in records if r["type"] == "entry"]) == len(whole["entries"])
