"""Copilot's ``ask_user`` questions as hive questions and the answers Copilot can take, and the rest of
:class:`CopilotBackend` that needs no real CLI: the fake agent speaking Copilot's framed protocol (answered and
declined questions, a server dying with a question pending, bad requests, broken framing), subagents and
permissions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.exceptions import RequestError
from acp_fake_agent import AGENT
from acp_fake_agent import read_log
from acp_fake_agent import transcript as transcript_path

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.questions import Answers
from hive_core.runners import collect_turn
from hive_core.testing import Answerer
from hive_protocol import AgentWorkEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.copilot.backend import NO_ASK_USER
from hive_providers.backends.copilot.backend import NO_AUTO_LOGIN
from hive_providers.backends.copilot.backend import CopilotBackend
from hive_providers.backends.copilot.transport import frame
from hive_providers.backends.copilot.turn import DECLINED_QUESTION
from hive_providers.backends.copilot.turn import CopilotTurn
from hive_providers.backends.copilot.turn import Send
from hive_providers.backends.copilot.turn import question_of
from hive_providers.backends.copilot.turn import validated_answer
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio

CHOICES: dict[str, Any] = {"question": "Which database?", "choices": ["SQLite", "PostgreSQL"]}


def _turn(
    questions: Any = None, *, approvals: Any = None, send: Send | None = None
) -> tuple[CopilotTurn, list[Event]]:
    """A turn of session ``sess-1`` with no policy, and the events it emits; ``send`` answers its requests
    to the server (by default any request fails the test)."""
    events: list[Event] = []

    async def unexpected(method: str, params: dict[str, Any]) -> Any:
        raise AssertionError(f"unexpected request {method}")

    turn = CopilotTurn(
        emit=events.append,
        session_id="sess-1",
        send=send or unexpected,
        policy=None,
        approvals=approvals,
        questions=questions,
        taken=set(),
        question_numbers=lambda: 7,
    )
    return turn, events


def test_string_choices_become_options_and_free_text_follows_allow_freeform() -> None:
    question = question_of({**CHOICES, "allowFreeform": False})
    assert question is not None
    assert [option.label for option in question.options] == ["SQLite", "PostgreSQL"]
    assert all(option.description is None for option in question.options)
    assert not question.multi_select
    assert not question.allow_free_text
    allowed = question_of(CHOICES)  # Copilot's default is to allow free text
    assert allowed is not None
    assert allowed.allow_free_text
    open_question = question_of({"question": "Name it", "allowFreeform": False})
    assert open_question is not None
    assert open_question.allow_free_text  # no choices: any one value
    assert question_of({"choices": ["a"]}) is None


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ({"Which database?": ["SQLite"]}, "SQLite"),
        ({"Which database?": ["Redis"]}, None),  # not offered, free text off
        ({"Which database?": ["SQLite", "PostgreSQL"]}, None),  # more than one value
        ({"Which database?": [""]}, None),
        ({"Which database?": ["  "]}, None),
        ({"Another question?": ["SQLite"]}, None),
        ({}, None),
        (None, None),
    ],
)
def test_only_one_offered_value_is_an_answer_when_free_text_is_off(
    answers: Answers | None, expected: str | None
) -> None:
    question = question_of({**CHOICES, "allowFreeform": False})
    assert question is not None
    assert validated_answer(question, answers) == expected


def test_free_text_is_an_answer_when_allowed() -> None:
    question = question_of(CHOICES)
    assert question is not None
    assert validated_answer(question, {"Which database?": ["Redis"]}) == "Redis"


async def test_an_answer_goes_back_with_whether_it_was_free_text() -> None:
    service = Answerer({"Which database?": ["SQLite"]})
    turn, _ = _turn(service)
    turn.on_event(
        {"type": "user_input.requested", "data": {**CHOICES, "requestId": "r-1", "toolCallId": "call_ask"}},
        lambda _: None,
    )
    with anyio.fail_after(5):
        assert await turn.ask(CHOICES) == {"answer": "SQLite", "wasFreeform": False}
    [asked] = service.requests
    assert asked.id == "call_ask"  # the tool call's id, announced by user_input.requested
    free = Answerer({"Which database?": ["Redis"]})
    turn, _ = _turn(free)
    with anyio.fail_after(5):
        assert await turn.ask(CHOICES) == {"answer": "Redis", "wasFreeform": True}
    assert free.requests[0].id == "copilot-input-sess-1-7"  # nothing announced it


@pytest.mark.parametrize("service", [None, Answerer(None), Answerer({"Which database?": ["a", "b"]})])
async def test_a_decline_fails_the_request(service: Answerer | None) -> None:
    turn, _ = _turn(service)
    with anyio.fail_after(5), pytest.raises(RequestError, match=DECLINED_QUESTION):
        await turn.ask({**CHOICES, "allowFreeform": False})


async def test_a_question_without_text_is_invalid_params() -> None:
    turn, _ = _turn(Answerer({"x": ["y"]}))
    with anyio.fail_after(5), pytest.raises(RequestError) as raised:
        await turn.ask({"choices": ["a"]})
    assert raised.value.code == -32602


async def test_a_cancelled_turn_closes_its_question_without_declining() -> None:
    class _Waiting:
        started = anyio.Event()

        async def ask(self, request: QuestionRequestEvent) -> Answers | None:
            self.started.set()
            await anyio.sleep_forever()
            raise AssertionError("never answered")

    service = _Waiting()
    turn, _ = _turn(service)
    outcome: list[BaseException] = []

    async def asking() -> None:
        try:
            await turn.ask(CHOICES)
        except RequestError as exc:
            outcome.append(exc)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(asking)
            await service.started.wait()
            turn.cancel()
    [error] = outcome
    assert isinstance(error, RequestError)
    assert DECLINED_QUESTION not in str(error)


def test_no_ask_user_is_passed_only_without_a_question_service(tmp_path: Path) -> None:
    spec = resolve_backend("copilot")
    asked = CopilotBackend(
        spec,
        BackendOptions(
            cwd=tmp_path, executable="/bin/copilot", arguments=(NO_ASK_USER,), questions=Answerer(None)
        ),
    )
    assert NO_ASK_USER not in asked.command()
    assert "--acp" not in asked.command()
    silent = CopilotBackend(spec, BackendOptions(cwd=tmp_path, executable="/bin/copilot"))
    assert silent.command()[-1] == NO_ASK_USER
    assert silent.command()[1:4] == ["--headless", "--no-auto-update", "--stdio"]
    assert NO_AUTO_LOGIN not in silent.command()  # the user's own login serves a run without an endpoint
    offline = CopilotBackend(
        spec,
        BackendOptions(
            cwd=tmp_path, executable="/bin/copilot", endpoint=ModelEndpoint(base_url="http://127.0.0.1:9/v1")
        ),
    )
    assert NO_AUTO_LOGIN in offline.command()


def test_messages_are_framed_with_their_byte_length() -> None:
    data = frame({"jsonrpc": "2.0", "method": "ping", "params": {"text": "é"}})
    head, _, body = data.partition(b"\r\n\r\n")
    assert head == b"Content-Length: %d" % len(body)
    assert "é".encode() in body


# -- the backend against the fake agent speaking Copilot's framed protocol -------------------------------------


class _Wire:
    """A question service standing in for a client on the wire: publishes each question, then ``decide``s."""

    def __init__(self, decide: Any) -> None:
        self.decide = decide
        self.asked: list[QuestionRequestEvent] = []

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        self.asked.append(request)
        return await self.decide(request)


def _fake(tmp_path: Path, transcript: str, questions: Any) -> CopilotBackend:
    """A :class:`CopilotBackend` whose ``copilot`` is the fake agent replaying ``transcript`` framed."""
    program = tmp_path / "copilot"
    program.write_text(
        "#!/bin/sh\n"
        f'exec "{sys.executable}" "{AGENT}" "{transcript_path(transcript)}" '
        f'--log "{tmp_path / "log.jsonl"}" --framed --wait 20 "$@"\n'
    )
    program.chmod(0o755)
    return CopilotBackend(
        resolve_backend("copilot"),
        BackendOptions(cwd=tmp_path, executable=str(program), questions=questions, cancel_grace=1.0),
    )


def _answers_to(tmp_path: Path, request_id: int) -> dict[str, Any]:
    [answer] = [
        message
        for message in read_log(tmp_path / "log.jsonl")
        if message.get("id") == request_id and "method" not in message
    ]
    return answer


async def _run(backend: CopilotBackend) -> list[Event]:
    try:
        with anyio.fail_after(20):
            return await collect_turn(backend, "ASKME please")
    finally:
        await backend.aclose()


async def test_a_fake_server_question_is_answered_on_its_request(tmp_path: Path) -> None:
    async def sqlite(_: QuestionRequestEvent) -> Answers:
        return {"Which database?": ["SQLite"]}

    wire = _Wire(sqlite)
    events = await _run(_fake(tmp_path, "copilot-server-question", wire))
    assert verify(events, turns=1) == []
    [asked] = wire.asked
    assert asked.id == "call_ask"
    starts = [event for event in events if isinstance(event, ToolStartEvent)]
    assert asked.call_id == starts[0].call_id  # the question names the ask_user call it belongs to
    assert not asked.questions[0].allow_free_text
    assert _answers_to(tmp_path, 900)["result"] == {"answer": "SQLite", "wasFreeform": False}
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.stop_reason, end.input_tokens, end.output_tokens, end.cached_input_tokens) == (
        "completed",
        100,
        7,
        40,
    )
    log = read_log(tmp_path / "log.jsonl")
    [create] = [message for message in log if message.get("method") == "session.create"]
    assert create["params"]["requestUserInput"] is True
    assert create["params"]["requestPermission"] is True


async def test_an_answer_that_is_not_offered_declines_on_the_request(tmp_path: Path) -> None:
    async def redis(_: QuestionRequestEvent) -> Answers:
        return {"Which database?": ["Redis"]}  # free text is off for this question

    events = await _run(_fake(tmp_path, "copilot-server-question", _Wire(redis)))
    assert verify(events, turns=1) == []
    error = _answers_to(tmp_path, 900)["error"]
    assert error["message"] == DECLINED_QUESTION


async def test_a_server_that_dies_with_a_question_pending_fails_the_turn(tmp_path: Path) -> None:
    async def never(_: QuestionRequestEvent) -> Answers:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    wire = _Wire(never)
    backend = _fake(tmp_path, "copilot-server-question-dies", wire)
    events = await _run(backend)
    assert verify(events, turns=1) == []
    assert len(wire.asked) == 1
    [error] = [event for event in events if isinstance(event, ErrorEvent)]
    assert "exited with code 3" in error.message, error
    assert "out of cheese" in error.message, error
    assert all(
        end.success is False for end in events if isinstance(end, ToolEndEvent)
    )  # the ask_user call was closed
    assert [e for e in events if isinstance(e, ToolEndEvent)], events
    assert backend.last_pid is not None
    assert not _alive(backend.last_pid)


async def test_bad_requests_are_answered_with_errors_and_the_turn_goes_on(tmp_path: Path) -> None:
    async def unused(_: QuestionRequestEvent) -> Answers:
        raise AssertionError("no question should be asked")

    events = await _run(_fake(tmp_path, "copilot-server-bad-requests", _Wire(unused)))
    assert verify(events, turns=1) == []
    assert "Carrying on." in "".join(e.content for e in events if isinstance(e, TextDeltaEvent))
    assert _answers_to(tmp_path, 901)["error"]["code"] == -32602
    assert _answers_to(tmp_path, 902)["error"]["code"] == -32601


async def test_broken_framing_fails_the_turn_instead_of_hanging(tmp_path: Path) -> None:
    async def unused(_: QuestionRequestEvent) -> Answers:
        raise AssertionError("no question should be asked")

    backend = _fake(tmp_path, "copilot-server-bad-framing", _Wire(unused))
    events = await _run(backend)
    assert verify(events, turns=1) == []
    [error] = [event for event in events if isinstance(event, ErrorEvent)]
    assert "closed its output" in error.message or "were not JSON-RPC" in error.message, error
    assert backend.last_pid is not None
    assert not _alive(backend.last_pid)


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


# -- the rest of a turn's stream: subagents and permissions --------------------------------------------------


async def test_a_subagents_stream_is_agent_work_not_the_reply() -> None:
    turn, events = _turn(None)

    def on(kind: str, data: dict[str, Any], agent: str | None = None) -> None:
        event: dict[str, Any] = {"type": kind, "data": data}
        if agent is not None:
            event["agentId"] = agent
        turn.on_event(event, lambda _: None)

    on(
        "tool.execution_start",
        {"toolCallId": "call_task", "toolName": "task", "arguments": {"prompt": "look"}},
    )
    on(
        "subagent.started",
        {"toolCallId": "call_task", "agentName": "explore", "agentDescription": "Explore"},
        "a1",
    )
    on("assistant.message_delta", {"messageId": "s1", "deltaContent": "inner words"}, "a1")
    on("tool.execution_start", {"toolCallId": "call_inner", "toolName": "grep", "arguments": {}}, "a1")
    on("assistant.message", {"messageId": "s1", "content": "Found it."}, "a1")
    on("subagent.completed", {"toolCallId": "call_task", "agentName": "explore"}, "a1")
    on("assistant.message_delta", {"messageId": "m1", "deltaContent": "Done."})
    texts = [event.content for event in events if isinstance(event, TextDeltaEvent)]
    assert texts == ["Done."]  # the subagent's words are not the reply
    work = [event for event in events if isinstance(event, AgentWorkEvent)]
    assert [item.status for event in work for item in event.items] == [
        "running",
        "running",
        "running",
        "completed",
    ]
    last = work[-1].items[0]
    assert last.id == "copilot-subagent-call_task"
    assert (last.title, last.summary, last.tool_calls, last.blocks_completion) == (
        "Explore",
        "Found it.",
        1,
        False,
    )
    assert [event.tool for event in events if isinstance(event, ToolStartEvent)] == ["task"]


async def test_a_permission_approved_with_changed_arguments_is_rejected_with_them() -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    async def send(method: str, params: dict[str, Any]) -> Any:
        sent.append((method, params))
        return {"success": True}

    class _Changing:
        async def request(self, request: ApprovalRequest) -> ApprovalDecision:
            return ApprovalDecision(approved=True, modified_arguments={"command": "touch other.txt"})

    class _Plain:
        async def request(self, request: ApprovalRequest) -> ApprovalDecision:
            return ApprovalDecision(approved=True)

    for approvals, expected in ((_Changing(), "reject"), (_Plain(), "approve-once")):
        sent.clear()
        turn, _ = _turn(approvals=approvals, send=send)
        work: list[Any] = []
        turn.on_event(
            {
                "type": "permission.requested",
                "data": {
                    "requestId": "p1",
                    "permissionRequest": {
                        "kind": "shell",
                        "toolCallId": "c1",
                        "fullCommandText": "touch a.txt",
                    },
                },
            },
            work.append,
        )
        with anyio.fail_after(5):
            await work[0]
        [(method, params)] = sent
        assert method == "session.permissions.handlePendingPermissionRequest"
        assert params["requestId"] == "p1"
        assert params["result"]["kind"] == expected
        if expected == "reject":
            assert "touch other.txt" in params["result"]["feedback"]


async def test_several_questions_and_permissions_of_one_turn_wait_and_cancel_together() -> None:
    class _Held:
        def __init__(self) -> None:
            self.waiting = 0
            self.all_waiting = anyio.Event()

        def _wait(self) -> None:
            self.waiting += 1
            if self.waiting == 3:
                self.all_waiting.set()

        async def ask(self, request: QuestionRequestEvent) -> Answers | None:
            self._wait()
            await anyio.sleep_forever()
            raise AssertionError("never answered")

        async def request(self, request: ApprovalRequest) -> ApprovalDecision:
            self._wait()
            await anyio.sleep_forever()
            raise AssertionError("never decided")

    held = _Held()

    async def send(method: str, params: dict[str, Any]) -> Any:
        raise AssertionError(f"a cancelled permission was answered: {method} {params}")

    turn, _ = _turn(held, approvals=held, send=send)
    errors: list[RequestError] = []

    async def asking(text: str) -> None:
        try:
            await turn.ask({"question": text})
        except RequestError as exc:
            errors.append(exc)

    permission = {
        "type": "permission.requested",
        "data": {"requestId": "p1", "permissionRequest": {"kind": "shell", "fullCommandText": "ls"}},
    }
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(asking, "First?")
            group.start_soon(asking, "Second?")
            turn.on_event(permission, lambda work: group.start_soon(lambda: work))
            await held.all_waiting.wait()
            turn.cancel()
        await asking("Too late?")  # a question after the cancel ends at once
    assert len(errors) == 3
    assert all(DECLINED_QUESTION not in str(error) for error in errors)
