"""``hive -p``: the ``-o json`` document, the ``-o jsonl`` records, text output, errors and exit codes.

Each test runs the installed ``hive`` in a subprocess against the scripted model server.
"""

from __future__ import annotations

import json
import signal

from cli_harness import MODEL
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import model_requests
from cli_harness import text
from cli_harness import user_texts
from cli_harness import wait_until
from turn_shapes import START_KEYS
from turn_shapes import TURN_KEYS

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage


def test_json_is_one_document_with_content_session_and_usage(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hel", "lo", usage=(12, 3)))
    # Diagnostics (a config warning, the dry-run notice) go to stderr; stdout holds the document alone.
    (ws.project / ".hive" / "config.yaml").write_text("notAKey: 1\n", encoding="utf-8")
    result = ws.use(server).run("-p", "hi", "-o", "json", "--dry-run")
    assert result.code == 0, result
    assert "notAKey" in result.stderr
    assert "dry run" in result.stderr
    doc = result.line_document()
    assert set(doc) == TURN_KEYS
    assert (doc["stop_reason"], doc["exit_code"], doc["calls"], doc["thinking"]) == ("completed", 0, [], None)
    assert doc["content"] == "Hello"
    assert doc["usage"] == {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    assert [s["id"] for s in ws.sessions()] == [doc["session_id"]]
    [request] = model_requests(server)
    assert request.path == "/v1/responses"
    assert request.body["model"] == MODEL
    assert request.body["stream"] is True
    assert user_texts(request) == ["hi"]
    server.assert_consumed()


def test_usage_names_the_cached_input_tokens_when_the_provider_reports_them(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    cached = Usage(input_tokens=40, output_tokens=3, cached_input_tokens=32)
    server.add(Round(parts=[ScriptText(chunks=["Hi"])], usage=cached))
    server.add(Round(parts=[ScriptText(chunks=["Hi"])], usage=cached))
    ws.use(server)
    usage = {"input_tokens": 40, "output_tokens": 3, "total_tokens": 43, "cached_input_tokens": 32}
    assert ws.run("-p", "hi", "-o", "json").line_document()["usage"] == usage
    records = [json.loads(line) for line in ws.run("-p", "hi", "-o", "jsonl").stdout.splitlines()]
    assert records[-1]["type"] == "done"
    assert records[-1]["usage"] == usage


def test_json_lists_tool_calls_with_json_string_arguments_and_their_results(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(
            ("call_1", "read_file", {"path": "a.txt"}),
            # Asked by the default rules, and refused: there is no terminal to ask at.
            ("call_2", "write_file", {"path": "config.json", "content": "{}"}),
        ),
        text("It says alpha.", thinking=["Hidden ", "thoughts."]),
    )
    result = ws.use(server).run("-p", "what is in a.txt?", "-o", "json")
    assert result.code == 0, result
    doc = result.line_document()
    # No "thinking" without --show-thinking, though the model thought.
    assert set(doc) == TURN_KEYS
    assert doc["thinking"] is None
    assert doc["content"] == "It says alpha."
    read, write = doc["calls"]
    call_keys = {"call_id", "tool", "arguments", "outcome", "success", "result", "refusal_kind"}
    assert set(read) == set(write) == call_keys
    assert (read["call_id"], read["tool"], read["outcome"]) == ("call_1", "read_file", "ok")
    assert isinstance(read["arguments"], str)
    assert json.loads(read["arguments"]) == {"path": "a.txt"}
    assert "alpha" in read["result"]
    assert read["success"] is True
    assert (write["tool"], write["success"], write["outcome"]) == ("write_file", False, "refused")
    assert json.loads(write["arguments"]) == {"path": "config.json", "content": "{}"}
    assert "no terminal" in write["result"]
    assert not (ws.project / "config.json").exists()
    # Token usage is summed over both model rounds.
    assert doc["usage"] == {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}
    # The model saw both outcomes in its second round.
    outputs = input_items(model_requests(server)[1], "function_call_output")
    assert [o["call_id"] for o in outputs] == ["call_1", "call_2"]
    assert "alpha" in outputs[0]["output"]
    assert "no terminal" in outputs[1]["output"]


def test_thinking_appears_with_show_thinking(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Answer.", thinking=["Let me ", "think."]))
    shown = ws.use(server).run("-p", "q", "-o", "json", "--show-thinking")
    assert shown.code == 0, shown
    thinking = shown.line_document()["thinking"]
    assert set(thinking) == {"content", "token_count"}
    assert thinking["content"] == "Let me think."
    assert isinstance(thinking["token_count"], int)
    assert thinking["token_count"] > 0


def test_usage_is_omitted_when_the_model_reports_none(ws: Workspace, server: ScriptedModelServer) -> None:
    # Of the scripted server's APIs, only a Gemini stream leaves usage out when the round has none.
    server.add(text("No usage here.", usage=None))
    config = f"googleai:\n  endpoint: {server.url}/v1beta/\n"
    (ws.project / ".hive" / "config.yaml").write_text(config, encoding="utf-8")
    result = ws.run("-p", "hi", "-o", "json", env={"GOOGLEAI_API_KEY": "test", "GOOGLEAI_MODEL": MODEL})
    assert result.code == 0, result
    doc = result.line_document()
    assert (doc["content"], doc["session_id"], doc["usage"]) == (
        "No usage here.",
        ws.sessions()[0]["id"],
        None,
    )
    assert [r.endpoint for r in server.requests] == ["gemini"]


def test_jsonl_starts_with_start_streams_each_delta_and_calls_and_ends_with_done(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(("call_1", "read_file", {"path": "a.txt"})),
        text("It ", "says ", "alpha.", thinking=["hm", "m"]),
    )
    result = ws.use(server).allow_all().run("-p", "read a.txt", "-o", "jsonl", "--show-thinking")
    assert result.code == 0, result
    records = result.records()
    session_id = ws.sessions()[0]["id"]
    assert records[0] == {"type": "start", "session_id": session_id}
    usage = {"input_tokens": 30, "output_tokens": 7, "total_tokens": 37}  # both rounds' usage, as in -o json
    assert records[-1] == {
        "type": "done",
        "session_id": session_id,
        "stop_reason": "completed",
        "usage": usage,
    }
    middle = records[1:-1]
    kinds = ["tool_call", "tool_result", "thinking", "thinking", "text", "text", "text"]
    assert [r["type"] for r in middle] == kinds
    call, outcome = middle[0], middle[1]
    assert set(call) == {"type", "call_id", "tool", "arguments"}
    assert (call["call_id"], call["tool"]) == ("call_1", "read_file")
    assert json.loads(call["arguments"]) == {"path": "a.txt"}
    assert set(outcome) == {"type", "call_id", "tool", "success", "result"}
    assert (outcome["call_id"], outcome["tool"], outcome["success"]) == ("call_1", "read_file", True)
    assert "alpha" in outcome["result"]
    assert middle[2:] == [
        {"type": "thinking", "content": "hm"},
        {"type": "thinking", "content": "m"},
        {"type": "text", "content": "It "},
        {"type": "text", "content": "says "},
        {"type": "text", "content": "alpha."},
    ]


def test_a_model_error_is_the_error_shape_with_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(Round(failure=HttpFailure(status=401, message="bad key")))
    result = ws.use(server).run("-p", "hi", "-o", "json")
    assert result.code == 1, result
    doc = result.line_document()
    assert set(doc) == TURN_KEYS | {"error"}
    assert (doc["exit_code"], doc["stop_reason"]) == (1, "error")
    assert "bad key" in doc["error"]


def test_a_model_error_in_jsonl_ends_with_an_error_record(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(Round(failure=ContextLengthFailure()))
    result = ws.use(server).run("-p", "hi", "-o", "jsonl")
    assert result.code == 1, result
    records = result.records()
    assert set(records[0]) == START_KEYS
    assert records[0]["type"] == "start"
    assert set(records[-1]) == {"type", "error", "stop_reason", "exit_code"}
    assert records[-1]["type"] == "error"
    assert "context_length_exceeded" in records[-1]["error"]
    assert all(r["type"] != "done" for r in records)


def test_a_model_error_in_text_mode_goes_to_stderr(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(Round(failure=HttpFailure(status=401, message="bad key")))
    result = ws.use(server).run("-p", "hi")
    assert result.code == 1, result
    assert result.stdout == ""
    assert "bad key" in result.stderr


def test_no_provider_is_a_json_error_with_exit_1(ws: Workspace) -> None:
    result = ws.run("-p", "hi", "-o", "json")
    assert result.code == 1, result
    doc = result.line_document()
    assert set(doc) == TURN_KEYS | {"error"}
    assert (doc["exit_code"], doc["stop_reason"]) == (1, "error")
    assert "LMSUPPLY_ENABLED" in doc["error"]
    records = ws.run("-p", "hi", "-o", "jsonl").records()
    # `start` comes first even when no session could be opened (its session_id is then left out).
    assert records[0] == {"type": "start"}
    assert [r["type"] for r in records] == ["start", "error"]
    assert records[1]["error"] == doc["error"]


def test_resuming_an_unknown_session_is_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run("-r", "no-such-session", "-p", "hi", "-o", "json")
    assert result.code == 1, result
    doc = result.line_document()
    assert doc["exit_code"] == 1
    assert "no-such-session" in doc["error"]
    fork = ws.run("-c", "--fork", "-p", "hi")
    assert fork.code == 1, fork
    assert "no earlier session" in fork.stderr
    assert model_requests(server) == []


def test_usage_errors_are_exit_2_with_nothing_on_stdout(ws: Workspace) -> None:
    for args in (["-o", "json"], ["--fork", "-p", "hi"], ["-o", "xml", "-p", "hi"], ["--no-such-flag"]):
        result = ws.run(*args)
        assert result.code == 2, result
        assert result.stdout == "", result
        assert result.stderr.strip(), result


def test_text_mode_prints_the_reply_on_stdout_and_tool_lines_on_stderr(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(calls(("c1", "read_file", {"path": "a.txt"})), text("It ", "says alpha.", usage=(5, 4)))
    result = ws.use(server).allow_all().run("-p", "read it", "--plain", "--show-tokens")
    assert result.code == 0, result
    assert result.stdout == "It says alpha.\n"
    assert "read_file" in result.stderr
    assert "tokens: 25 in, 9 out, 34 total" in result.stderr
    assert "\x1b[" not in result.stderr


def test_the_prompt_can_come_on_stdin(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Got ", "it."))
    result = ws.use(server).run("--no-stream", input="from stdin\n")
    assert result.code == 0, result
    assert result.stdout == "Got it.\n"
    assert user_texts(model_requests(server)[0]) == ["from stdin"]


def test_an_empty_stdin_prompt_is_exit_1(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run(input="")
    assert result.code == 1, result
    assert "empty" in result.stderr


def _talking_slowly(ws: Workspace, server: ScriptedModelServer, output: str) -> Proc:
    """A ``-p`` run printing ``-o output``, nothing piped in, whose reply streams a word every half second."""
    server.add(text(*[f"w{i} " for i in range(40)], delay=0.5))
    proc = ws.use(server).start("-p", "talk slowly", "-o", output)
    proc.close_stdin()  # nothing is piped in: -p need not wait for it
    return proc


def test_ctrl_c_during_a_json_run_prints_the_cancelled_shape_and_exits_130(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _talking_slowly(ws, server, "json") as proc:
        wait_until(lambda: model_requests(server), what="the model request")
        proc.signal(signal.SIGINT)
        code = proc.wait()
        stdout = proc.stdout
    assert code == 130, proc.stderr
    doc = json.loads(stdout)
    assert (doc["error"], doc["stop_reason"], doc["exit_code"]) == ("cancelled", "cancelled", 130)
    assert stdout.count("\n") == 1


def test_ctrl_c_during_a_jsonl_run_ends_with_a_cancelled_error_record(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _talking_slowly(ws, server, "jsonl") as proc:
        first = proc.next_event()
        assert first["type"] == "start"
        assert proc.next_event()["type"] == "text"
        proc.signal(signal.SIGINT)
        code = proc.wait()
        rest = [json.loads(line) for line in proc.stdout.splitlines()[2:]]
    assert code == 130, proc.stderr
    assert rest[-1] == {"type": "error", "error": "cancelled", "stop_reason": "cancelled", "exit_code": 130}
    assert all(r["type"] == "text" for r in rest[:-1])


def test_piped_text_and_the_prompt_are_sent_together(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("A typo on line 2."))
    result = ws.use(server).run("-p", "find the bug", input="def f(:\n    return 1\n")
    assert result.code == 0, result
    assert user_texts(model_requests(server)[0]) == ["def f(:\n    return 1\n\nfind the bug"]


def test_a_prompt_given_as_words_is_a_one_shot_without_a_terminal(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Because."), text("Still because."))
    first = ws.use(server).run("why", "is", "it", "red?", "-o", "json")  # options may follow the words
    assert first.code == 0, first
    assert first.line_document()["content"] == "Because."
    second = ws.use(server).run("--no-stream", "--", "-v is it?")  # after --, even a dash starts a prompt
    assert second.code == 0, second
    assert [user_texts(request)[-1] for request in model_requests(server)] == ["why is it red?", "-v is it?"]


def test_a_mistyped_command_is_not_sent_as_a_prompt(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run("sesions")
    assert result.code == 2, result
    assert "did you mean 'sessions'?" in result.stderr
    assert model_requests(server) == []
    both = ws.use(server).run("hello", "there", "-p", "again")
    assert both.code == 2, both
    assert "not both" in both.stderr


def test_a_pipe_that_stays_silent_does_not_hang_a_one_shot(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hi."))
    with ws.use(server).start("-p", "hi", "-o", "json") as proc:  # stdin: an open pipe nobody writes to
        code = proc.wait()
        stderr = proc.stderr
    assert code == 0, stderr
    assert "nothing arrived on stdin" in stderr
    assert user_texts(model_requests(server)[0]) == ["hi"]


def test_json_content_puts_a_blank_line_between_the_rounds_of_a_turn(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "a.txt").write_text("alpha\n", encoding="utf-8")
    server.add(
        calls(("call_1", "read_file", {"path": "a.txt"}), say="Let me read it."),
        text("It says alpha."),
    )
    result = ws.use(server).allow_all().run("-p", "read a.txt", "-o", "json")
    assert result.code == 0, result
    assert result.line_document()["content"] == "Let me read it.\n\nIt says alpha."


def test_allow_pre_approves_a_command_for_one_run_and_the_guards_still_refuse(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(
        calls(("call_1", "execute_command", {"command": "touch allowed.txt"})), text("Ran it."),
        calls(("call_2", "execute_command", {"command": "sudo touch root.txt"})), text("Refused."),
        calls(("call_3", "execute_command", {"command": "touch asked.txt"})), text("Not run."),
    )  # fmt: skip
    # The file a command writes is judged as an edit too: both are allowed for the run.
    flags = ("--allow", "execute_command:touch *", "--allow", "write_file:*.txt")
    allowed = ws.use(server).run("-p", "run it", "-o", "json", *flags)
    assert allowed.code == 0, allowed
    [call] = allowed.line_document()["calls"]
    assert call["success"] is True, call
    assert (ws.project / "allowed.txt").exists()
    guarded = ws.use(server).run(
        "-p", "run it", "-o", "json", "--allow", "execute_command", "--allow", "write_file"
    )
    [call] = guarded.line_document()["calls"]
    assert call["success"] is False  # sudo is refused whatever --allow says
    without = ws.use(server).run("-p", "run it", "-o", "json")
    [call] = without.line_document()["calls"]
    assert call["success"] is False  # no terminal to ask, no --allow: refused
    assert not (ws.project / "asked.txt").exists()
    bad = ws.use(server).run("-p", "x", "--allow", "todo:*")
    assert bad.code == 1
    assert "--allow" in bad.stderr
