"""The real OpenCode CLI, offline, driven in process through :class:`OpenCodeServeBackend` on ``opencode serve``,
against the scripted model server (Chat Completions, agent-CLI responder).

A ``bash`` ``touch`` that OpenCode asks about (the backend sets ``bash``/``edit`` to ``ask``) runs when approved
and not when rejected; a new backend resumes the session and the model is sent the earlier turn, a fork gets a
new id and the same history; the ``question`` tool's question is answered on the wire (the model is given the
answer back) and declined (the model is told on the next request); a cancel during text, during the approval and
during the question ends the turn ``cancelled`` with every tool closed, and after ``aclose`` no process is left.
Every turn's events pass :func:`hive_protocol.verify`.

Skipped, saying why, when OpenCode is not installed (``.ci/agent-clis`` installs it).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

import anyio
import pytest
from agent_clis_harness import DEFAULT_COMMAND
from agent_clis_harness import MODEL
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import Project
from agent_clis_harness import assert_nothing_left
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_harness import require_cli
from agent_clis_turns import Approvals
from agent_clis_turns import AskEverything
from agent_clis_turns import CancelLater
from agent_clis_turns import cancelled_at_first_text
from agent_clis_turns import checked
from agent_clis_turns import end_of
from agent_clis_turns import reply_text
from agent_clis_turns import the_call
from agent_clis_turns import turn_events

from hive_conformance.model_server.agent_cli import ANSWERED_REPLY
from hive_conformance.model_server.agent_cli import QUESTION_TEXT
from hive_core.runners import SessionRunner
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.opencode import OpenCodeServeBackend
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

ASK_PROMPT: Final = "ASKME go"
ANSWER: Final = 'User has answered your questions: "Which database?"="SQLite"'
DISMISSED: Final = "The user dismissed this question"


class Questions:
    """Answers every question with ``answer`` (``None``: declines; ``on_ask`` set: runs it and never answers)."""

    def __init__(self, answer: str | None, on_ask: Callable[[], None] | None = None) -> None:
        self.answer = answer
        self.on_ask = on_ask
        self.asked: list[QuestionRequestEvent] = []

    async def ask(self, request: QuestionRequestEvent) -> dict[str, list[str]] | None:
        self.asked.append(request)
        if self.on_ask is not None:
            self.on_ask()
            await anyio.sleep_forever()
        return None if self.answer is None else {request.questions[0].question: [self.answer]}


def backend(
    project: Project,
    server_url: str,
    *,
    approvals: Approvals | None = None,
    questions: Questions | None = None,
    resume: str | None = None,
    fork: bool = False,
) -> OpenCodeServeBackend:
    options = BackendOptions(
        cwd=project.project,
        executable=str(require_cli("opencode")),
        endpoint=ModelEndpoint(base_url=f"{server_url}/v1", model=MODEL),
        home=project.root / "home",
        resume=resume,
        fork=fork,
        policy=AskEverything(),
        approvals=approvals if approvals is not None else Approvals(approve=None),
        questions=questions,
        startup_timeout=60.0,
        cancel_grace=3.0,
    )
    return OpenCodeServeBackend(resolve_backend("opencode"), options)


async def run(agent: OpenCodeServeBackend, prompt: str) -> list[Event]:
    return checked(await turn_events(SessionRunner(agent), prompt))


def server_pid(agent: OpenCodeServeBackend) -> int:
    assert agent.server is not None
    assert agent.server.process is not None
    return agent.server.process.pid


def assert_group_gone(pid: int) -> None:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return
    raise AssertionError(f"the process group of opencode serve ({pid}) is still alive")


async def test_an_approved_command_runs_and_a_new_backend_resumes_the_session(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    approvals = Approvals(approve=True)
    first = backend(project, server.url, approvals=approvals)
    try:
        events = await run(first, TOOL_PROMPT)
        pid = server_pid(first)
    finally:
        await first.aclose()
    assert project.tool_ran, events
    start, end = the_call(events, "execute_command")
    assert start.input == {"command": DEFAULT_COMMAND}
    assert end.success is True
    [asked] = approvals.requests
    assert (asked.call_id, asked.tool_name, asked.arguments) == (
        start.call_id,
        "execute_command",
        {"command": DEFAULT_COMMAND},
    )
    turn_end = end_of(events)
    assert turn_end.stop_reason == "completed"
    assert turn_end.input_tokens, turn_end
    assert turn_end.output_tokens, turn_end
    assert reply_text(events) == "MOCK_REPLY done"
    session = first.session_id
    assert session is not None
    assert session.startswith("ses_")
    assert_group_gone(pid)
    assert_nothing_left(os.getpid())

    since = len(server.requests)
    second = backend(project, server.url, resume=session)
    try:
        again = await run(second, "hello again")
    finally:
        await second.aclose()
    assert end_of(again).stop_reason == "completed", again
    assert reply_text(again) == "MOCK_REPLY ok"
    assert second.session_id == session
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any("hello again" in t and TOOL_PROMPT in t for t in texts), (
        "the resumed turn does not carry the first"
    )

    since = len(server.requests)
    forked = backend(project, server.url, resume=session, fork=True)
    try:
        copy = await run(forked, "hello fork")
    finally:
        await forked.aclose()
    assert end_of(copy).stop_reason == "completed", copy
    assert forked.session_id is not None
    assert forked.session_id != session
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any("hello fork" in t and "hello again" in t for t in texts), "the fork does not carry the history"
    assert_nothing_left(os.getpid())


async def test_a_rejected_command_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    approvals = Approvals(approve=False)
    agent = backend(project, server.url, approvals=approvals)
    try:
        events = await run(agent, TOOL_PROMPT)
    finally:
        await agent.aclose()
    assert not project.tool_ran, "OpenCode ran the rejected command"
    assert len(approvals.requests) == 1
    _, end = the_call(events, "execute_command")
    assert (end.success, end.refusal) == (False, "rejected")
    assert end_of(events).stop_reason == "completed"
    assert_nothing_left(os.getpid())


async def test_a_question_answered_on_the_wire(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    questions = Questions(answer="SQLite")
    agent = backend(project, server.url, questions=questions)
    try:
        events = await run(agent, ASK_PROMPT)
    finally:
        await agent.aclose()
    [asked] = questions.asked
    [question] = asked.questions
    assert question.question == QUESTION_TEXT
    assert [o.label for o in question.options] == ["SQLite", "PostgreSQL"]
    assert question.multi_select is False
    start, end = the_call(events, "question")
    assert asked.call_id == start.call_id
    assert end.success is True
    assert reply_text(events).startswith(ANSWERED_REPLY + ANSWER), reply_text(events)
    assert end_of(events).stop_reason == "completed"
    assert_nothing_left(os.getpid())


async def test_a_declined_question_is_dismissed(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    questions = Questions(answer=None)
    agent = backend(project, server.url, questions=questions)
    try:
        events = await run(agent, ASK_PROMPT)
        since = len(server.requests)
        after = await run(agent, "hello")
    finally:
        await agent.aclose()
    assert len(questions.asked) == 1
    _, end = the_call(events, "question")
    assert end.success is False
    assert end_of(events).stop_reason == "completed"
    assert ANSWERED_REPLY not in reply_text(events)
    # OpenCode ends the run on a dismissed question; the model is told with the next request.
    texts = [request_text(r) for r in model_requests(server, since)]
    assert any(DISMISSED in t for t in texts), texts
    assert end_of(after).stop_reason == "completed"
    assert_nothing_left(os.getpid())


async def test_cancel_during_text(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    agent = backend(project, server.url)
    try:
        events = await cancelled_at_first_text(SessionRunner(agent), SLOW_PROMPT)
        after = await run(agent, "hello")
        pid = server_pid(agent)
    finally:
        await agent.aclose()
    checked(events)
    assert end_of(events).stop_reason == "cancelled", events
    assert "chunk79" not in reply_text(events)
    assert end_of(after).stop_reason == "completed", after
    assert_group_gone(pid)
    assert_nothing_left(os.getpid())


async def test_cancel_during_the_approval(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    cancel = CancelLater()
    agent = backend(project, server.url, approvals=Approvals(approve=None, on_request=cancel))
    cancel.runner = SessionRunner(agent)
    try:
        events = await turn_events(cancel.runner, TOOL_PROMPT)
        pid = server_pid(agent)
    finally:
        await agent.aclose()
    checked(events)
    assert end_of(events).stop_reason == "cancelled", events
    _, end = the_call(events, "execute_command")
    assert end.success is False
    assert not project.tool_ran, "OpenCode ran the command of a cancelled turn"
    assert_group_gone(pid)
    assert_nothing_left(os.getpid())


async def test_cancel_during_the_question(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("opencode")
    project = Project.create(tmp_path)
    cancel = CancelLater()
    questions = Questions(answer=None, on_ask=cancel)
    agent = backend(project, server.url, questions=questions)
    cancel.runner = SessionRunner(agent)
    try:
        events = await turn_events(cancel.runner, ASK_PROMPT)
        after = await run(agent, "hello")
        pid = server_pid(agent)
    finally:
        await agent.aclose()
    checked(events)
    assert len(questions.asked) == 1
    assert end_of(events).stop_reason == "cancelled", events
    _, end = the_call(events, "question")
    assert end.success is False
    assert end_of(after).stop_reason == "completed", after
    assert_group_gone(pid)
    assert_nothing_left(os.getpid())
