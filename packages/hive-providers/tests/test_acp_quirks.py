"""The ACP quirks the CLIs show (tool-call ids announced late, twice or prefixed, string request ids, a
permission under its own id, a result without text), each a recorded transcript replayed by the fake agent
through the whole backend (AcpBackend, hive's runner, hive's permission rules and approval bridge)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from acp_fake_agent import transcript as path_of
from hitl_turn import Turn

from hive_core.questions import Answers
from hive_core.testing import Answerer
from hive_protocol import HitlRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio


async def test_update_before_create(tmp_path: Path) -> None:
    turn = Turn(tmp_path, "quirk-update-before-create")
    events = await turn.run("read then touch")
    starts = turn.of(ToolStartEvent)
    assert [(start.tool, start.call_id) for start in starts] == [
        ("read_file", "read_file__1"),
        ("execute_command", "run_shell_command__2"),
    ]
    assert [(end.call_id, end.success) for end in turn.of(ToolEndEvent)] == [
        ("read_file__1", True),
        ("run_shell_command__2", True),
    ]
    [asked] = turn.of(HitlRequestEvent)
    assert (asked.call_id, asked.arguments) == ("run_shell_command__2", {"command": "touch marker.txt"})
    assert turn.answers()[0] == {"outcome": {"outcome": "selected", "optionId": "proceed_once"}}
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.total_tokens) == (250, 10, 260)


async def test_re_announced_id(tmp_path: Path) -> None:
    turn = Turn(tmp_path, "quirk-re-announced-id")
    await turn.run("touch marker")
    [start] = turn.of(ToolStartEvent)
    assert start.call_id == "call_cb1"
    [asked] = turn.of(HitlRequestEvent)
    # Announced as `other`, re-announced as `execute`: judged as the command it is.
    assert (asked.call_id, asked.tool_name, asked.arguments) == (
        "call_cb1",
        "execute_command",
        {"command": "touch marker.txt"},
    )
    [end] = turn.of(ToolEndEvent)
    assert (end.call_id, end.success, end.output) == (
        "call_cb1",
        True,
        '{"type": "text", "text": "Exit Code: 0"}',
    )
    assert turn.answers()[0] == {"outcome": {"outcome": "selected", "optionId": "allow"}}


async def test_prefixed_id(tmp_path: Path) -> None:
    turn = Turn(tmp_path, "quirk-prefixed-id")
    await turn.run("touch twice")
    assert [start.call_id for start in turn.of(ToolStartEvent)] == ["0:call_x", "1:call_x"]
    asked = turn.of(HitlRequestEvent)
    # The permission carries no rawInput: the arguments the agent streamed as text are judged.
    assert [(request.call_id, request.arguments) for request in asked] == [
        ("0:call_x", {"command": "touch a.txt"}),
        ("1:call_x", {"command": "touch b.txt"}),
    ]
    assert [end.success for end in turn.of(ToolEndEvent)] == [True, True]
    answers = turn.answers()
    assert answers[0] == answers[1] == {"outcome": {"outcome": "selected", "optionId": "approve_once"}}


async def test_string_request_ids(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("line one\nline two\nline three\n")
    turn = Turn(tmp_path, "quirk-string-request-ids")
    await turn.run("read notes")
    answers = turn.answers()
    assert answers["fs-read-1"] == {"content": "line two\n"}
    assert answers["7"] == {"outcome": {"outcome": "selected", "optionId": "proceed_once"}}
    assert 7 not in answers
    [asked] = turn.of(HitlRequestEvent)
    assert asked.call_id == "call_touch"


async def test_permission_id_differs(tmp_path: Path) -> None:
    turn = Turn(tmp_path, "quirk-permission-id-differs")
    await turn.run("touch marker")
    [start] = turn.of(ToolStartEvent)
    [asked] = turn.of(HitlRequestEvent)
    assert start.call_id == asked.call_id == "call_dc0"
    assert asked.arguments == {"command": "touch marker.txt"}
    assert turn.answers()[0] == {"outcome": {"outcome": "selected", "optionId": "approve"}}


async def test_result_without_text(tmp_path: Path) -> None:
    turn = Turn(tmp_path, "quirk-result-without-text")
    events = await turn.run("what is the answer")
    assert turn.of(TextDeltaEvent) == [TextDeltaEvent(content="The answer is 42.")]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.total_tokens) == (30, 7, 37)


@pytest.mark.parametrize(
    ("answers", "option"),
    [
        ({"Which database?": ["SQLite"]}, "q1:2"),
        ({"Which database?": ["SQLite - a file"]}, "q1:2"),
        ({"Which database?": ["MongoDB"]}, "q1:cancel"),
        ({"Which database?": ["SQLite", "Postgres"]}, "q1:cancel"),
        (None, "q1:cancel"),
    ],
)
async def test_reasonix_ask_question(tmp_path: Path, answers: Answers | None, option: str) -> None:
    questions = Answerer(answers)
    turn = Turn(
        tmp_path, "quirk-reasonix-ask-question", questions=questions, spec=resolve_backend("reasonix")
    )
    await turn.run("ASKME which database should I use?")
    [request] = questions.requests
    assert request.id == "ask-1-q1"
    assert request.call_id == "call_ask1"
    [question] = request.questions
    assert (question.question, question.header) == ("Which database?", "Database")
    assert [(choice.label, choice.description) for choice in question.options] == [
        ("Postgres", "the big one"),
        ("SQLite", "a file"),
    ]
    assert (question.multi_select, question.allow_free_text) == (False, False)
    assert turn.of(HitlRequestEvent) == []
    assert turn.answers()[1] == {"outcome": {"outcome": "selected", "optionId": option}}
    assert [start.tool for start in turn.of(ToolStartEvent)] == ["ask"]


async def test_reasonix_fails_the_turn_after_a_declined_question(tmp_path: Path) -> None:
    turn = Turn(
        tmp_path, "quirk-reasonix-ask-declined", questions=Answerer(None), spec=resolve_backend("reasonix")
    )
    events = await turn.run("ASKME which database should I use?", stop_reason=None)
    assert turn.answers()[1] == {"outcome": {"outcome": "selected", "optionId": "q1:cancel"}}
    [end] = turn.of(ToolEndEvent)
    assert (end.call_id, end.success, end.output) == ("call_ask1", False, "ask: context canceled")
    assert [type(event).__name__ for event in events[-2:]] == ["ErrorEvent", "TurnEndEvent"]


def recorded_answer(transcript: str) -> dict[str, Any]:
    """What the real client answered to the recording's one permission request."""
    lines = [json.loads(line) for line in path_of(transcript).read_text().splitlines() if line.strip()]
    asked = [
        line["message"]["id"]
        for line in lines
        if line.get("message", {}).get("method") == "session/request_permission"
    ]
    [request_id] = asked
    [answer] = [
        line["message"]["result"]
        for line in lines
        if line.get("from") == "client"
        and "method" not in line["message"]
        and line["message"].get("id") == request_id
    ]
    return {"id": request_id, "result": answer}


def recordings() -> list[Any]:
    """The recordings of the real CLIs asking permission for one command."""
    names = sorted(
        path.stem
        for pattern in ("*-permission-approve.jsonl", "*-permission-reject.jsonl")
        for path in (Path(__file__).parent / "acp_transcripts").glob(pattern)
    )
    return names


@pytest.mark.parametrize("transcript", recordings())
async def test_real_recordings_answer_as_the_recorded_human_did(tmp_path: Path, transcript: str) -> None:
    spec = resolve_backend(transcript.split("-")[0])
    turn = Turn(tmp_path, transcript, spec=spec, approve=transcript.endswith("-approve"))
    expected = recorded_answer(transcript)
    await turn.run("RUNTOOL go", stop_reason=None)
    assert turn.answers()[expected["id"]] == expected["result"]
    [asked] = turn.of(HitlRequestEvent)
    assert asked.tool_name == "execute_command"
    assert asked.arguments == {"command": "touch hive_tool_ran.txt"} or "hive_tool_ran.txt" in str(
        asked.arguments
    )
    starts = turn.of(ToolStartEvent)
    assert [start.call_id for start in starts] == [asked.call_id]
