"""``hive run``: the ``-o json`` document (snake_case, as ``hive -p -o json``), every exit code, options and ``--auto-commit``."""

from __future__ import annotations

import json
import os
import shutil
import signal
from typing import Any

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from cli_harness import wait_until
from turn_shapes import FAILURE_KEYS
from turn_shapes import TURN_KEYS

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round


def _document(stdout: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(stdout)
    return document


def test_json_is_one_snake_case_document_on_one_line(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Done ", "here.", usage=(40, 6)))
    result = ws.use(server).run("run", "-o", "json", "say done")
    assert result.code == 0, result
    doc = result.document()
    assert result.stdout.count("\n") == 1  # one line, as every -o json document
    assert set(doc) == TURN_KEYS
    assert doc["content"] == "Done here."
    assert doc["stop_reason"] == "completed"
    assert isinstance(doc["duration_ms"], int)
    assert doc["duration_ms"] >= 0
    assert (doc["tool_calls"], doc["refused_tool_calls"], doc["failed_tool_calls"]) == (0, 0, 0)
    assert doc["calls"] == []
    assert doc["thinking"] is None
    assert doc["usage"] == {"input_tokens": 40, "output_tokens": 6, "total_tokens": 46}
    assert user_texts(model_requests(server)[0]) == ["say done"]


def test_json_counts_ok_failed_and_refused_calls(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(
            ("c1", "read_file", {"path": "a.txt"}),
            ("c2", "read_file", {"path": "missing.txt"}),
            ("c3", "write_file", {"path": "settings.json", "content": "x" * 400}),
        ),
        text("Summary.", thinking=["Thinking ", "hard."]),
    )
    result = ws.use(server).run("run", "-o", "json", "-p", "three calls")
    assert result.code == 0, result
    doc = result.document()
    assert (doc["tool_calls"], doc["refused_tool_calls"], doc["failed_tool_calls"]) == (3, 1, 1)
    ok, failed, refused = doc["calls"]
    for call in doc["calls"]:
        assert set(call) == {"call_id", "tool", "outcome", "success", "result", "refusal_kind", "arguments"}
    assert {**ok, "arguments": json.loads(ok["arguments"]), "result": "…"} == {
        "call_id": "c1",
        "tool": "read_file",
        "outcome": "ok",
        "success": True,
        "result": "…",
        "refusal_kind": None,
        "arguments": {"path": "a.txt"},
    }
    assert (failed["call_id"], failed["tool"], failed["outcome"], failed["refusal_kind"]) == (
        "c2",
        "read_file",
        "failed",
        None,
    )
    assert (refused["tool"], refused["outcome"], refused["refusal_kind"]) == (
        "write_file",
        "refused",
        "rejected",
    )
    assert "no terminal" in refused["result"]
    # Arguments are whole: a machine output never cuts what it reports.
    assert json.loads(refused["arguments"])["content"] == "x" * 400
    assert doc["thinking"]["content"] == "Thinking hard."
    assert doc["thinking"]["token_count"] > 0
    assert not (ws.project / "settings.json").exists()


def test_a_model_error_is_the_failure_document_and_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(Round(failure=HttpFailure(status=401, message="no such key")))
    result = ws.use(server).run("run", "-o", "json", "hi")
    assert result.code == 1, result
    doc = result.document()
    assert set(doc) == FAILURE_KEYS
    assert doc["stop_reason"] == "error"
    assert "no such key" in doc["error"]
    assert isinstance(doc["duration_ms"], int)


def test_no_prompt_is_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run("run", "-o", "json")
    assert result.code == 1, result
    doc = result.document()
    assert set(doc) == FAILURE_KEYS
    assert doc["stop_reason"] == "error"
    text_mode = ws.run("run")
    assert text_mode.code == 1
    assert text_mode.stdout == ""
    assert "no prompt" in text_mode.stderr
    assert model_requests(server) == []


def test_no_provider_is_exit_1(ws: Workspace) -> None:
    result = ws.run("run", "-o", "json", "hi")
    assert result.code == 1, result
    assert result.document()["stop_reason"] == "error"


def test_the_step_limit_is_exit_2(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(calls(("c1", "read_file", {"path": "a.txt"})), text("Out of steps."))
    result = ws.use(server).run("run", "-o", "json", "--max-iterations", "1", "read")
    assert result.code == 2, result
    assert result.document()["stop_reason"] == "step_limit"
    # The last round offers no tools.
    assert not model_requests(server)[1].body.get("tools")


def test_the_output_limit_is_exit_2_and_max_output_tokens_is_sent(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Cut sh", finish="length"))
    result = ws.use(server).run("run", "-o", "json", "--max-output-tokens", "64", "write a lot")
    assert result.code == 2, result
    doc = result.document()
    assert (doc["stop_reason"], doc["content"]) == ("output_limit", "Cut sh")
    assert model_requests(server)[0].body["max_output_tokens"] == 64


def test_a_timeout_is_exit_2_with_the_timeout_document(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text(*[f"w{i} " for i in range(30)], delay=0.5))
    result = ws.use(server).run("run", "-o", "json", "--timeout", "1.5", "talk slowly")
    assert result.code == 2, result
    doc = result.document()
    assert set(doc) == FAILURE_KEYS
    assert doc["stop_reason"] == "timeout"
    assert doc["duration_ms"] >= 1500


def test_ctrl_c_is_exit_130_with_the_cancelled_document(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text(*[f"w{i} " for i in range(40)], delay=0.5))
    with ws.use(server).start("run", "-o", "json", "talk slowly") as proc:
        proc.close_stdin()  # nothing is piped in: the run need not wait for it
        wait_until(lambda: model_requests(server), what="the model request")
        proc.signal(signal.SIGINT)
        code = proc.wait()
        doc = _document(proc.stdout)
    assert code == 130, proc.stderr
    assert set(doc) == FAILURE_KEYS
    assert (doc["error"], doc["stop_reason"]) == ("cancelled", "cancelled")


def test_a_content_filter_is_exit_3_and_text_mode_prints_only_the_reply(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("I can", "not.", finish="content_filter"))
    result = ws.use(server).run("run", "--reasoning-effort", "low", "something bad")
    assert result.code == 3, result
    assert result.stdout == "I cannot.\n"
    assert "(stopped: content_filter)" in result.stderr
    assert model_requests(server)[0].body["reasoning"]["effort"] == "low"


def test_bad_option_values_are_usage_errors(ws: Workspace) -> None:
    for args in (["--max-iterations", "0"], ["--timeout", "-1"], ["--reasoning-effort", "huge"]):
        result = ws.run("run", *args, "hi")
        assert result.code == 2, result
        assert result.stdout == ""
        assert "Invalid value" in result.stderr


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_auto_commit_commits_the_agents_changes(ws: Workspace, server: ScriptedModelServer) -> None:
    # A git that reads no configuration of the machine's, with an identity of its own.
    identity = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for role in ("AUTHOR", "COMMITTER"):
        identity |= {f"GIT_{role}_NAME": "t", f"GIT_{role}_EMAIL": "t@example.com"}

    def git(*args: str) -> str:
        return ws.git(*args, env=identity, timeout=30).stdout

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "start")
    server.add(calls(("c1", "write_file", {"path": "notes.md", "content": "hello\n"})), text("Wrote it."))
    prompt = "Write a short note into notes.md for the team, please, and keep it friendly"
    result = ws.use(server).allow_all().run("run", "--auto-commit", prompt, env=identity)
    assert result.code == 0, result
    assert git("log", "-1", "--format=%s").strip() == "hive: " + prompt[:47] + "..."
    assert git("show", "--name-only", "--format=", "HEAD").split() == ["notes.md"]
    # The rules file was not written by hive's tools in the run: left out, and said so.
    assert git("status", "--porcelain") == "?? .hive/\n"
    assert "hive: --auto-commit: left out 1 path(s)" in result.stderr
