"""Claude Code's stream-json mapped to hive events, and its control channel, without the real CLI.

Recorded stream-json lines (Claude Code 2.1.197 against the scripted model server, shortened) go through
:class:`StreamMapper`; the control channel's answers are checked on :class:`PermissionResponder`; and
``claude_fake_cli.py`` plays the CLI's side of a question, a malformed request and the ways a CLI fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from backend_harness import of
from backend_harness import replay
from question_fakes import NeverAnswers

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import Verdict
from hive_core.failures import ChatError
from hive_core.runners import SessionRunner
from hive_core.testing import Answerer
from hive_core.testing import Approver
from hive_protocol import AgentWorkEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.claude import StreamMapper
from hive_providers.backends.claude.control import DECLINED_QUESTION
from hive_providers.backends.claude.control import PermissionResponder
from hive_providers.backends.claude.messages import decode_message
from hive_providers.backends.kit.errors import BackendNotInstalled
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.tool_calls import ToolCallTracker
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio

_FAKE = Path(__file__).with_name("claude_fake_cli.py")

# Claude Code 2.1.197, a Bash call approved, then the reply (uuids and usage details dropped).
_TOOL_TURN = [
    {
        "type": "system",
        "subtype": "init",
        "session_id": "6949e8cf",
        "tools": ["Bash"],
        "model": "local-model",
    },
    {"type": "system", "subtype": "status", "status": "requesting", "session_id": "6949e8cf"},
    {
        "type": "stream_event",
        "event": {"type": "message_start", "message": {"id": "msg_0", "content": []}},
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "call_hive0", "name": "Bash", "input": {}},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "touch x"}'},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "assistant",
        "message": {
            "id": "msg_0",
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_hive0", "name": "Bash", "input": {"command": "touch x"}}
            ],
        },
        "parent_tool_use_id": None,
        "session_id": "6949e8cf",
    },
    {"type": "stream_event", "event": {"type": "message_stop"}, "parent_tool_use_id": None},
    {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "tool_use_id": "call_hive0",
                    "type": "tool_result",
                    "content": "(Bash completed with no output)",
                    "is_error": False,
                }
            ],
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {"type": "message_start", "message": {"id": "msg_1", "content": []}},
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "thinking", "thinking": ""},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "hmm"},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "MOCK_REPLY"},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "stream_event",
        "event": {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": " done"},
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "assistant",
        "message": {
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "MOCK_REPLY done"}],
        },
        "parent_tool_use_id": None,
    },
    {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "num_turns": 2,
        "result": "MOCK_REPLY done",
        "stop_reason": "end_turn",
        "session_id": "6949e8cf",
        "usage": {
            "input_tokens": 43704,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 96,
            "output_tokens": 10,
        },
    },
]


def _map(messages: list[dict[str, Any]]) -> tuple[StreamMapper, list[Event]]:
    return replay(StreamMapper, lambda mapper, message: mapper.on_message(decode_message(message)), messages)


def test_a_tool_turn_maps_to_one_call_and_the_streamed_text_once() -> None:
    mapper, events = _map(_TOOL_TURN)
    assert mapper.session_id == "6949e8cf"
    kinds = [type(event) for event in events]
    assert kinds == [
        ToolStartEvent,
        ToolEndEvent,
        ThinkingDeltaEvent,
        TextDeltaEvent,
        TextDeltaEvent,
        TurnEndEvent,
    ]
    [start], [end] = of(events, ToolStartEvent), of(events, ToolEndEvent)
    assert (start.tool, start.input, start.call_id) == (
        "execute_command",
        {"command": "touch x"},
        "call_hive0",
    )
    assert end.success
    assert end.call_id == "call_hive0"
    assert end.output == "(Bash completed with no output)"
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "MOCK_REPLY done"
    turn_end = events[-1]
    assert isinstance(turn_end, TurnEndEvent)
    assert turn_end.stop_reason == "completed"
    assert (turn_end.input_tokens, turn_end.output_tokens, turn_end.cached_input_tokens) == (43800, 10, 96)


def test_text_without_partial_messages_comes_from_the_assistant_message() -> None:
    messages = [m for m in _TOOL_TURN if m["type"] != "stream_event"]
    _, events = _map(messages)
    texts = [e.content for e in events if isinstance(e, TextDeltaEvent)]
    assert texts == ["MOCK_REPLY done"]


def test_the_result_text_is_the_reply_when_nothing_streamed() -> None:
    _, events = _map(
        [{"type": "result", "subtype": "success", "result": "only here", "stop_reason": "max_tokens"}]
    )
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["only here"]
    assert isinstance(events[-1], TurnEndEvent)
    assert events[-1].stop_reason == "output_limit"


def test_a_task_subagent_becomes_agent_work_not_turn_text() -> None:
    task = {
        "type": "tool_use",
        "id": "toolu_task",
        "name": "Task",
        "input": {"description": "Look around", "prompt": "..."},
    }
    messages = [
        {"type": "assistant", "message": {"id": "m1", "content": [task]}, "parent_tool_use_id": None},
        {
            "type": "assistant",
            "message": {"id": "m2", "content": [{"type": "text", "text": "sub says hi"}]},
            "parent_tool_use_id": "toolu_task",
        },
        {
            "type": "user",
            "message": {"content": [{"type": "tool_result", "tool_use_id": "toolu_sub1", "content": "ok"}]},
            "parent_tool_use_id": "toolu_task",
        },
        {
            "type": "user",
            "message": {
                "content": [{"type": "tool_result", "tool_use_id": "toolu_task", "content": "found it"}]
            },
            "parent_tool_use_id": None,
        },
        {"type": "result", "subtype": "success", "result": "", "stop_reason": "end_turn"},
    ]
    _, events = _map(messages)
    work = [e for e in events if isinstance(e, AgentWorkEvent)]
    assert [w.items[0].status for w in work] == ["running", "running", "running", "completed"]
    assert work[1].items[0].summary == "sub says hi"
    assert work[2].items[0].tool_calls == 1
    assert work[-1].items[0].id == "claude:toolu_task"
    assert work[-1].items[0].title == "Look around"
    assert not [e for e in events if isinstance(e, TextDeltaEvent)]
    assert [e.tool for e in events if isinstance(e, ToolStartEvent)] == ["task"]


class _Policy:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.judged: list[tuple[str, dict[str, Any]]] = []

    def evaluate(self, tool: str, arguments: Any) -> Verdict:
        self.judged.append((tool, dict(arguments)))
        return self.verdict


def _responder(**kwargs: Any) -> tuple[PermissionResponder, list[Event]]:
    events: list[Event] = []
    fields: dict[str, Any] = {"policy": None, "approvals": None, "questions": None, **kwargs}
    return PermissionResponder(tracker=ToolCallTracker(events.append), **fields), events


def _can_use(tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"subtype": "can_use_tool", "tool_name": tool, "input": tool_input, "tool_use_id": "toolu_1"}


async def test_an_approved_edit_is_judged_as_edit_file_and_allowed_with_the_modified_input() -> None:
    approvals = Approver(ApprovalDecision(approved=True, modified_arguments={"content": "new"}))
    responder, events = _responder(approvals=approvals)
    answer = await responder.can_use_tool(
        _can_use("Edit", {"file_path": "a.py", "old_string": "x", "new_string": "y"})
    )
    assert answer == {
        "behavior": "allow",
        "updatedInput": {"file_path": "a.py", "old_string": "x", "new_string": "new"},
    }
    assert approvals.requests[0].tool_name == "edit_file"
    assert approvals.requests[0].arguments == {"path": "a.py", "content": "y"}
    assert isinstance(events[0], ToolStartEvent)
    assert approvals.requests[0].call_id == events[0].call_id


async def test_a_rule_denial_and_a_rejection_are_denies_with_the_reason() -> None:
    policy = _Policy(Verdict.deny("no rm here"))
    responder, _ = _responder(policy=policy)
    answer = await responder.can_use_tool(_can_use("Bash", {"command": "rm -rf /"}))
    assert answer["behavior"] == "deny"
    assert "no rm here" in answer["message"]
    assert policy.judged == [("execute_command", {"command": "rm -rf /"})]
    responder, _ = _responder(approvals=Approver(ApprovalDecision(approved=False, reason="not today")))
    answer = await responder.can_use_tool(_can_use("Write", {"file_path": "b", "content": "c"}))
    assert answer["behavior"] == "deny"
    assert "not today" in answer["message"]
    responder, _ = _responder()
    answer = await responder.can_use_tool(_can_use("Read", {"file_path": "/etc/passwd"}))
    assert answer["behavior"] == "deny", "no approval service must fail closed"


async def test_an_allowing_rule_runs_the_call_unasked() -> None:
    approvals = Approver(ApprovalDecision(approved=False))
    responder, _ = _responder(policy=_Policy(Verdict.allow()), approvals=approvals)
    answer = await responder.can_use_tool(_can_use("Read", {"file_path": "README.md"}))
    assert answer == {"behavior": "allow", "updatedInput": {"file_path": "README.md"}}
    assert approvals.requests == []


def _fake_backend(tmp_path: Path, mode: str, **options: Any) -> ClaudeCodeBackend:
    return ClaudeCodeBackend(
        resolve_backend("claude-code"),
        BackendOptions(
            cwd=tmp_path, executable=sys.executable, arguments=(str(_FAKE), mode), cancel_grace=1.0, **options
        ),
    )


async def _turn(backend: ClaudeCodeBackend) -> list[Event]:
    events: list[Event] = []
    with anyio.fail_after(30):
        await SessionRunner(backend).run_turn(UserMessageRequest(content="hi"), events.append)
    return events


def _result_json(events: list[Event]) -> dict[str, Any]:
    return json.loads("".join(e.content for e in events if isinstance(e, TextDeltaEvent)))


async def test_an_answered_question_writes_back_the_input_plus_answers(tmp_path: Path) -> None:
    questions = Answerer({"Which database?": ["Postgres"], "Which extras?": ["Docs", "CI"]})
    backend = _fake_backend(tmp_path, "ask", questions=questions)
    events = await _turn(backend)
    (asked,) = questions.requests
    assert [q.question for q in asked.questions] == ["Which database?", "Which extras?"]
    assert [q.multi_select for q in asked.questions] == [False, True]
    assert asked.questions[0].options[0].description == "the big one"
    assert asked.call_id == "toolu_ask"
    response = _result_json(events)
    assert response["behavior"] == "allow"
    assert response["updatedInput"]["answers"] == {"Which database?": "Postgres", "Which extras?": "Docs, CI"}
    assert response["updatedInput"]["questions"][0]["question"] == "Which database?"
    assert backend.session_id == "fake-session-1"
    assert isinstance(events[-1], TurnEndEvent)
    assert events[-1].stop_reason == "completed"
    assert (
        verify([b'{"type":"session_started","session_id":"s","protocol_version":1}', *map(_encode, events)])
        == []
    )


def _encode(event: Event) -> bytes:
    import msgspec

    return msgspec.json.encode(event)


@pytest.mark.parametrize(
    "answers",
    [
        None,
        {"Which database?": ["Postgres", "SQLite"], "Which extras?": ["Docs"]},
        {"Which database?": ["Postgres"]},
    ],
    ids=["declined", "two-answers-to-single-choice", "one-unanswered"],
)
async def test_a_declined_or_incomplete_answer_is_a_deny(
    tmp_path: Path, answers: dict[str, list[str]] | None
) -> None:
    events = await _turn(_fake_backend(tmp_path, "ask", questions=Answerer(answers)))
    response = _result_json(events)
    assert response == {"behavior": "deny", "message": DECLINED_QUESTION, "interrupt": False}


async def test_without_a_question_service_a_question_is_declined(tmp_path: Path) -> None:
    response = _result_json(await _turn(_fake_backend(tmp_path, "ask")))
    assert response["behavior"] == "deny"
    assert DECLINED_QUESTION in response["message"]


async def test_a_malformed_control_request_gets_an_error_answer(tmp_path: Path) -> None:
    events = await _turn(_fake_backend(tmp_path, "malformed"))
    response = _result_json(events)
    assert response["subtype"] == "error"
    assert response["request_id"] == "bad-1"
    assert "malformed" in response["error"]


async def test_a_cli_exiting_at_start_is_a_start_error_quoting_stderr(tmp_path: Path) -> None:
    backend = _fake_backend(tmp_path, "exit_at_start")
    with pytest.raises(BackendStartError, match=r"exited with code 3 at start.*no credentials"):
        with anyio.fail_after(30):
            await backend(UserMessageRequest(content="hi"), lambda event: None)


async def test_a_cli_printing_no_json_and_ending_is_an_error_naming_the_noise(tmp_path: Path) -> None:
    events = await _turn(_fake_backend(tmp_path, "noise"))
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert "not stream-json" in errors[0].message
    assert "Welcome" in errors[0].message
    assert isinstance(events[-1], TurnEndEvent)
    assert events[-1].stop_reason is None


async def test_a_cli_dying_with_a_question_pending_is_an_error_not_a_hang(tmp_path: Path) -> None:
    questions = NeverAnswers()
    backend = _fake_backend(tmp_path, "die_pending", questions=questions)
    with pytest.raises(ChatError, match="exited with code 9 during the turn"):
        with anyio.fail_after(30):
            await backend(UserMessageRequest(content="hi"), lambda event: None)
    assert len(questions.requests) == 1


async def test_a_missing_program_is_not_installed(tmp_path: Path) -> None:
    backend = ClaudeCodeBackend(
        resolve_backend("claude-code"), BackendOptions(cwd=tmp_path, executable="no-such-claude-here")
    )
    with pytest.raises(BackendNotInstalled):
        await backend(UserMessageRequest(content="hi"), lambda event: None)


# -- the decoder ------------------------------------------------------------------------------------------------


def test_every_recorded_message_decodes_to_its_struct() -> None:
    from hive_providers.backends.claude import messages

    decoded = [decode_message(message) for message in _TOOL_TURN]
    kinds = {message["type"]: type(typed) for message, typed in zip(_TOOL_TURN, decoded, strict=True)}
    assert kinds["system"] is messages.SystemMessage
    assert kinds["stream_event"] is messages.StreamEventMessage
    assert kinds["assistant"] is messages.AssistantMessage
    assert kinds["user"] is messages.UserMessage
    assert kinds["result"] is messages.ResultMessage
    [result] = [typed for typed in decoded if isinstance(typed, messages.ResultMessage)]
    assert result.usage is not None
    assert result.usage.input_tokens == 43704


def test_an_unknown_or_unreadable_message_decodes_to_unknown_and_a_bad_result_still_ends() -> None:
    from hive_providers.backends.claude import messages
    from hive_providers.backends.kit.wire import Unknown

    newer = decode_message({"type": "rate_limit_event", "info": {}})
    assert newer == Unknown("rate_limit_event", {"type": "rate_limit_event", "info": {}})
    wrong = decode_message({"type": "assistant", "message": "not an object"})
    assert isinstance(wrong, Unknown)
    assert wrong.kind == "assistant"
    assert wrong.problem
    assert decode_message({"type": "result", "usage": "lots"}) == messages.ResultMessage()
    [block] = [messages.BLOCKS.decode({"type": "tool_use", "id": "t", "name": "Bash", "input": None, "x": 1})]
    assert block == messages.ToolUseBlock(id="t", name="Bash", input=None)
    assert isinstance(messages.BLOCKS.decode({"type": "image"}), Unknown)
