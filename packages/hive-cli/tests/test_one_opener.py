"""One opener for every session: :func:`~hive_cli.opening.open_session` opens hive's own loop (as a
:class:`~hive_core.backends.HiveBackend`) and a coding-agent CLI alike, asking the prompts it is given, and a turn
runs, asks and is recorded the same way on each."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextlib import nullcontext

import anyio
import pytest
from agent_cli_harness import FakeCli
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import text

from hive_cli.assemble import HostOptions
from hive_cli.opening import OpenSession
from hive_cli.opening import Prompts
from hive_cli.opening import open_session
from hive_cli.session_store import session_store_path
from hive_conformance.model_server import ScriptedModelServer
from hive_core import TokenBudgetChatClient
from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.backends import HIVE_BACKEND
from hive_core.backends import HiveBackend
from hive_core.permissions import SessionGrants
from hive_core.questions import Answers
from hive_core.sessions import SqliteSessionStore
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.openai_responses import OpenAIResponsesChatClient


class _Approver:
    """Approves every call, remembering what it was asked."""

    def __init__(self) -> None:
        self.grants: SessionGrants | None = None
        self.on_stop: Callable[[], object] | None = None
        self.screen: Callable[[], AbstractContextManager[object]] = nullcontext
        self.asked: list[ApprovalRequest] = []

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        self.asked.append(request)
        return ApprovalDecision(approved=True)


class _Questioner:
    """Declines every question."""

    def __init__(self) -> None:
        self.timeout: float | None = None
        self.screen: Callable[[], AbstractContextManager[object]] = nullcontext

    async def ask(self, request: QuestionRequestEvent) -> Answers | None:
        return None


def _turn(session: OpenSession, content: str) -> list[Event]:
    events: list[Event] = []

    async def run() -> None:
        async with session.plugins():
            await session.runner.run_turn(UserMessageRequest(content=content), events.append)
        client = session.host.client  # closed on this event loop, as the process's end would
        if isinstance(client, TokenBudgetChatClient) and isinstance(client.inner, OpenAIResponsesChatClient):
            await client.inner.aclose()

    anyio.run(run)
    return events


def _open(ws: Workspace, agent: str, prompts: Prompts) -> OpenSession:
    return open_session(HostOptions(cwd=ws.project, agent=agent), prompts=prompts)


def _reply(events: list[Event]) -> str:
    return "".join(e.content for e in events if isinstance(e, TextDeltaEvent))


def _recorded(ws: Workspace, session_id: str) -> int:
    with SqliteSessionStore(session_store_path(ws.env)) as store:
        info = store.get(session_id)
        assert info is not None
        return info.message_count


@pytest.mark.parametrize("agent", [HIVE_BACKEND, "gemini"])
def test_one_opener_runs_a_turn_on_the_built_in_loop_and_on_a_cli(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    if agent == HIVE_BACKEND:
        ws.use(server)
        server.add(
            calls(("call_1", "execute_command", {"command": "touch made.txt"})), text("Created made.txt")
        )
    else:
        cli = FakeCli.install(ws, "gemini")
        ws.env.update(cli.env("cli-permission-approve"))
    for name in list(os.environ):
        if name not in ws.env:
            monkeypatch.delenv(name)
    for name, value in ws.env.items():
        monkeypatch.setenv(name, value)
    ws.trust_now()
    approver, questioner = _Approver(), _Questioner()

    with _open(ws, agent, Prompts(approver, questioner)) as session:
        assert isinstance(session.backend, HiveBackend) is (agent == HIVE_BACKEND)
        assert (session.agent_session is not None) is (agent == HIVE_BACKEND)
        assert session.prompters == (approver, questioner)
        assert approver.on_stop == session.runner.cancel
        assert questioner.timeout is not None  # set from the configuration: 30 minutes when unset
        events = _turn(session, "make a file")
        session.end()

    assert "Created made.txt" in _reply(events)
    assert isinstance(events[-1], TurnEndEvent)
    assert events[-1].stop_reason == "completed"
    # The same approver passed in was asked, on either road, about the same call.
    [asked] = approver.asked
    assert (asked.tool_name, asked.arguments) == ("execute_command", {"command": "touch made.txt"})
    assert _recorded(ws, session.session_id) >= 2
