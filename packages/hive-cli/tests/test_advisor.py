"""The advisor end to end through ``hive run --server``: offered once ``advisor.model`` is set, its request carries
the conversation as a transcript and no tools, ``maxCalls`` holds per session, its tokens count in the turn."""

from __future__ import annotations

import json
from typing import Any

from agent_cli_harness import TRANSCRIPTS
from agent_cli_harness import FakeCli
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import Usage
from hive_core.builtin_tools.advisor import REVIEWER_INSTRUCTIONS

REVIEWER = "reviewer-model"


def _advice(words: str, usage: tuple[int, int] = (300, 40)) -> Round:
    return Round(
        parts=[ScriptText(chunks=[words])], usage=Usage(input_tokens=usage[0], output_tokens=usage[1])
    )


def _configure(ws: Workspace, server: ScriptedModelServer, extra: str = "") -> Workspace:
    (ws.project / ".hive" / "config.yaml").write_text(
        f"advisor:\n  model: {REVIEWER}\n{extra}", encoding="utf-8"
    )
    return ws.use(server)


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in body.get("tools", [])]


def test_the_advisor_reviews_the_transcript_with_no_tools(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / "notes.txt").write_text("x" * 2_500, encoding="utf-8")
    server.add(
        calls(("c1", "read_file", {"path": "notes.txt"}), say="Reading first."),
        calls(("c2", "advisor", {})),
        _advice("Check the tests before you change anything."),
        text("Following the advice.", usage=(50, 5)),
    )
    with _configure(ws, server).serve() as proc:
        events = proc.turn("plan the change")
    starts = [event for event in events if event["type"] == "tool_start"]
    assert [event["tool"] for event in starts] == ["read_file", "advisor"]
    [advised] = [event for event in events if event["type"] == "tool_end" and event["tool"] == "advisor"]
    assert advised["success"] is True
    assert advised["output"] == "Check the tests before you change anything."

    first, _, consulted, last = model_requests(server)
    assert "advisor" in _tool_names(first.body)
    assert consulted.body["model"] == REVIEWER
    assert "tools" not in consulted.body
    assert consulted.body["instructions"] == REVIEWER_INSTRUCTIONS
    [message] = consulted.body["input"]
    transcript = message["content"] if isinstance(message["content"], str) else message["content"][0]["text"]
    assert "[Agent instructions]\nYou are hive" in transcript
    assert "[User]\nplan the change" in transcript
    assert '[Agent]\nReading first.\n-> calls read_file({"path":"notes.txt"})' in transcript
    assert f"[Tool results]\n<- {'x' * 2_000} ... [" in transcript
    assert "more characters cut]" in transcript
    assert "x" * 2_001 not in transcript
    assert "-> calls advisor({})" in transcript
    # The working model reads the advice as the call's result.
    outputs = [item for item in last.body["input"] if item.get("type") == "function_call_output"]
    assert outputs[-1]["output"] == "Check the tests before you change anything."

    [end] = [event for event in events if event["type"] == "turn_end"]
    # Three working rounds (20 + 20 + 50 in, 5 + 5 + 5 out) and the advisor's 300 in, 40 out.
    assert (end["input_tokens"], end["output_tokens"]) == (390, 55)


def test_max_calls_holds_for_the_session(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(
        calls(("c1", "advisor", {})),
        _advice("First advice."),
        text("One."),
        calls(("c2", "advisor", {}), ("c3", "advisor", {})),
        _advice("Second advice."),
        text("Two."),
    )
    with _configure(ws, server, "  maxCalls: 2\n").serve() as proc:
        first = proc.turn("one")
        second = proc.turn("two")
    ends = {event["call_id"]: event for event in first + second if event["type"] == "tool_end"}
    assert ends["c1"]["output"] == "First advice."
    assert ends["c2"]["output"] == "Second advice."
    assert ends["c3"]["success"] is False
    assert ends["c3"]["output"] == (
        "The advisor has already been consulted 2 times in this session. Proceed on your own judgment."
    )
    assert [request.body["model"] for request in model_requests(server)].count(REVIEWER) == 2


def test_empty_advice_says_so(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(calls(("c1", "advisor", {})), _advice(""), text("Alone then."))
    with _configure(ws, server).serve() as proc:
        events = proc.turn("go")
    [ended] = [event for event in events if event["type"] == "tool_end"]
    assert ended["output"] == "The advisor returned no advice. Proceed on your own judgment."


def test_without_a_model_there_is_no_advisor(ws: Workspace, server: ScriptedModelServer) -> None:
    (ws.project / ".hive" / "config.yaml").write_text("advisor:\n  maxCalls: 3\n", encoding="utf-8")
    server.add(text("Hi."))
    result = ws.use(server).run("-p", "hi")
    assert result.code == 0, result
    assert "advisor" not in _tool_names(model_requests(server)[0].body)
    assert "is not used by this version" not in result.stderr


def test_the_advisor_runs_in_planning_mode(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(calls(("c1", "advisor", {})), _advice("Plan it in two steps."), text("Planned."))
    result = _configure(ws, server).run("run", "--plan", "-o", "json", "plan")
    assert result.code == 0, result
    [call] = result.document()["calls"]
    assert (call["tool"], call["outcome"], call["result"]) == ("advisor", "ok", "Plan it in two steps.")


def test_an_advisor_provider_that_is_not_set_up_stops_the_start(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    result = _configure(ws, server, "  provider: anthropic\n").run("-p", "hi")
    assert result.code == 1
    assert "ANTHROPIC_API_KEY" in result.stderr


def test_a_coding_agent_cli_can_be_the_advisor(ws: Workspace, server: ScriptedModelServer) -> None:
    cli = FakeCli.install(ws, "gemini")
    # The recorded turn, with the advisor's model set after the session's mode.
    lines = (TRANSCRIPTS / "cli-hello.jsonl").read_text(encoding="utf-8").splitlines()
    at = next(index for index, line in enumerate(lines) if "session/prompt" in line)
    set_model = {"jsonrpc": "2.0", "id": 11, "method": "session/set_model", "params": {"sessionId": "x"}}
    lines[at:at] = [
        json.dumps({"from": "client", "message": set_model}),
        json.dumps({"from": "agent", "message": {"jsonrpc": "2.0", "id": 11, "result": {}}}),
    ]
    transcript = ws.root / "advisor-cli.jsonl"
    transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")
    server.add(calls(("c1", "advisor", {})), text("Noted.", usage=(30, 3)))
    env = {**cli.env("cli-hello"), "HIVE_TEST_TRANSCRIPT": str(transcript)}
    with _configure(ws, server, "  provider: gemini-cli\n").start("run", "--server", env=env) as proc:
        assert proc.next_event()["type"] == "session_started", proc.stderr
        events = proc.turn("ask the cli")
    [ended] = [event for event in events if event["type"] == "tool_end"]
    assert (ended["success"], ended["output"]) == (True, "Hello from the fake CLI")
    [prompt] = [message for message in cli.log() if message.get("method") == "session/prompt"]
    sent = "".join(block["text"] for block in prompt["params"]["prompt"] if block["type"] == "text")
    assert sent.startswith(REVIEWER_INSTRUCTIONS)
    assert "[User]\nask the cli" in sent
    assert "-> calls advisor({})" in sent
    [model] = [message for message in cli.log() if message.get("method") == "session/set_model"]
    assert model["params"]["modelId"] == REVIEWER
    [end] = [event for event in events if event["type"] == "turn_end"]
    # The working model's two rounds (20 + 30 in, 5 + 3 out) and the CLI's 11 in, 5 out.
    assert (end["input_tokens"], end["output_tokens"]) == (61, 13)
