"""hive-core's tracing interface in a whole turn: the span tree a recording tracer receives for a turn that calls an
MCP tool, a CLI-run turn's CLIENT span, and nothing started when no tracer is installed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus
from core_harness import Wire
from mcp_harness import WAIT
from mcp_harness import http_plugin
from mcp_harness import stdio_plugin

from hive_core import Agent
from hive_core import SessionRunner
from hive_core import ToolContext
from hive_core.approvals import ALLOW_ALL
from hive_core.mcp import McpPlugins
from hive_core.mcp import ProtocolMode
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tools import EventSink
from hive_core.tracing import RESUMED_ATTRIBUTE
from hive_core.tracing import AttributeValue
from hive_core.tracing import Span
from hive_core.tracing import SpanKind
from hive_core.tracing import TracedAgent
from hive_core.tracing import TracedChatClient
from hive_core.tracing import install_tracer
from hive_protocol import Event
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


@dataclass
class _Recorded:
    name: str
    kind: SpanKind
    parent: _Recorded | None
    attributes: dict[str, AttributeValue]
    error: str | None = None
    ended: bool = False

    def set(self, key: str, value: AttributeValue) -> None:
        self.attributes[key] = value

    def fail(self, error_type: str) -> None:
        self.error = error_type

    def end(self) -> None:
        assert not self.ended, f"{self.name} ended twice"
        self.ended = True


@dataclass
class _RecordingTracer:
    spans: list[_Recorded] = field(default_factory=list[_Recorded])
    capture_content: bool = False

    @property
    def enabled(self) -> bool:
        return True

    def start(
        self, name: str, kind: SpanKind, attributes: Mapping[str, AttributeValue], parent: Span | None
    ) -> Span:
        assert parent is None or isinstance(parent, _Recorded)
        span = _Recorded(name, kind, parent, dict(attributes))
        self.spans.append(span)
        return span

    def named(self, name: str) -> _Recorded:
        [span] = [span for span in self.spans if span.name == name]
        return span


@contextmanager
def _recording() -> Iterator[_RecordingTracer]:
    recorder = _RecordingTracer()
    install_tracer(recorder)
    try:
        yield recorder
    finally:
        install_tracer(None)


async def test_an_mcp_call_is_a_client_span_under_its_tool_call_under_the_turn() -> None:
    model = ScriptedChatClient(
        [
            ScriptedRound(call(("mcp__srv__echo", {"text": "hi"}, "c1")).updates),
            ScriptedRound(reply("It said hi.").updates),
        ]
    )
    events: list[Event] = []
    with _recording() as tracer, anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            client = TracedChatClient(model, provider="openai", model="m")
            session = Agent(client, tools=plugins.tools, policy=ALLOW_ALL).session()
            runner = SessionRunner(session, session_id="s-1")
            await runner.run_turn(UserMessageRequest(content="echo hi"), events.append)

    turn = tracer.named("invoke_agent hive")
    assert (turn.kind, turn.parent, turn.attributes["gen_ai.conversation.id"]) == ("internal", None, "s-1")
    tool = tracer.named("execute_tool mcp__srv__echo")
    assert tool.parent is turn
    assert tool.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool.attributes["hive.permission.verdict"] == "allowed"
    mcp = tracer.named("tools/call echo")
    assert (mcp.kind, mcp.parent) == ("client", tool)
    assert mcp.attributes["mcp.method.name"] == "tools/call"
    assert mcp.attributes["hive.mcp.server"] == "srv"
    assert "mcp.session.id" not in mcp.attributes  # stdio has no session id
    assert [span.parent for span in tracer.spans if span.name == "chat m"] == [turn, turn]
    assert all(span.ended and span.error is None for span in tracer.spans)


async def test_a_turn_a_cli_runs_is_a_client_span_named_for_it() -> None:
    model = ScriptedChatClient([ScriptedRound(reply("done").updates)])
    with _recording() as tracer:
        runner = SessionRunner(
            Agent(model).session(),
            session_id="s-2",
            traced_as=TracedAgent("codex", model="gpt-5", client=True),
        )
        await runner.run_turn(UserMessageRequest(content="go"), lambda event: None)
    [turn] = tracer.spans
    assert (turn.name, turn.kind) == ("invoke_agent codex", "client")
    assert turn.attributes["gen_ai.agent.name"] == "codex"
    assert turn.attributes["gen_ai.request.model"] == "gpt-5"
    assert "gen_ai.provider.name" not in turn.attributes


async def test_a_failed_turn_records_its_error_code() -> None:
    model = ScriptedChatClient([])  # asked for a round it does not have: the turn fails
    with _recording() as tracer:
        runner = SessionRunner(Agent(model).session(), session_id="s-3")
        await runner.run_turn(UserMessageRequest(content="go"), lambda event: None)
    [turn] = tracer.spans
    assert turn.error is not None
    assert turn.ended


async def test_a_resumed_turn_is_an_agent_span_of_its_own() -> None:
    model = ScriptedChatClient([ScriptedRound(reply("next").updates)])

    async def resume(emit: EventSink, *, task_status: TaskStatus[None]) -> None:
        task_status.started()
        emit(TurnEndEvent(stop_reason="completed", input_tokens=7, output_tokens=3))

    with _recording() as tracer:
        runner = SessionRunner(Agent(model).session(), session_id="s-4", resume=resume)
        await Wire(runner).run(UserMessageRequest(content="go on"))
    resumed, queued = tracer.spans
    assert (resumed.name, resumed.parent) == ("invoke_agent hive", None)
    assert resumed.attributes["gen_ai.conversation.id"] == "s-4"
    assert resumed.attributes[RESUMED_ATTRIBUTE] is True
    assert resumed.attributes["gen_ai.usage.input_tokens"] == 7
    assert resumed.attributes["gen_ai.response.finish_reasons"] == ["completed"]
    assert resumed.ended
    assert resumed.error is None
    assert queued.name == "invoke_agent hive"
    assert RESUMED_ATTRIBUTE not in queued.attributes


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_mcp_call_over_http_names_the_servers_session(
    http_server: tuple[str, object], mode: ProtocolMode
) -> None:
    url, _ = http_server
    context = ToolContext("call_1", "mcp__web__header", Path.cwd(), lambda event: None)
    with _recording() as tracer, anyio.fail_after(WAIT):
        async with McpPlugins([http_plugin(url)], mode=mode) as plugins:
            found = plugins.tool("mcp__web__header")
            assert found is not None
            outcome = await found.invoke({"key": "mcp-session-id"}, context)
    # The session id the SDK sent with the call (a 2026 server returns the tool's result as structured content).
    sent = outcome.content if mode == "legacy" else json.loads(outcome.content)["result"]
    span = tracer.named("tools/call header")
    if mode == "legacy":  # a 2025 connection has a session: the server gave it an id
        assert sent
        assert span.attributes["mcp.session.id"] == sent
    else:  # a 2026 connection is stateless: no session, no id
        assert not sent
        assert "mcp.session.id" not in span.attributes
