"""MCP tools in hive's loop: whole turns through ``Agent`` with the scripted model, under the permission rules."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest
from core_harness import assert_verified
from core_harness import of_type
from mcp_harness import WAIT
from mcp_harness import Signals
from mcp_harness import next_line
from mcp_harness import stdio_plugin

from hive_core import Agent
from hive_core import ChatOptions
from hive_core import Message
from hive_core import SessionRunner
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.mcp import McpPlugins
from hive_core.permissions import PermissionPolicy
from hive_core.permissions import PermissionRule
from hive_core.permissions import PermissionRules
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import call
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


def tool_ends(events: Sequence[Event]) -> dict[str, ToolEndEvent]:
    return {event.call_id: event for event in of_type(events, ToolEndEvent)}


def turn_end(events: Sequence[Event]) -> TurnEndEvent:
    ends = of_type(events, TurnEndEvent)
    assert len(ends) == 1
    return ends[0]


async def _turn_with_the_test_server(
    model: ScriptedChatClient, working_dir: Path, prompt: str
) -> list[Event]:
    """One turn of ``prompt`` with the test server's tools (no rules): every scripted round played, the events
    verified."""
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            agent = Agent(model, tools=plugins.tools, working_dir=working_dir, policy=ALLOW_ALL)
            events = await collect_turn(agent.session(), prompt)
    model.assert_consumed()
    assert_verified(events)
    return events


async def test_a_turn_calls_an_mcp_tool_and_the_model_reads_its_result(tmp_path: Path) -> None:
    def offered_and_answered(messages: Sequence[Message], options: ChatOptions) -> None:
        assert "mcp__srv__echo" in [spec.name for spec in options.tools]
        results = messages[-1].tool_results
        assert [(r.name, r.content, r.is_error) for r in results] == [
            ("mcp__srv__echo", "hello from mcp", False)
        ]

    def offered(messages: Sequence[Message], options: ChatOptions) -> None:
        echo = next(spec for spec in options.tools if spec.name == "mcp__srv__echo")
        assert echo.parameters["required"] == ["text"]

    model = ScriptedChatClient(
        [
            ScriptedRound(call(("mcp__srv__echo", {"text": "hello from mcp"}, "c1")).updates, check=offered),
            ScriptedRound(reply("It said hello.").updates, check=offered_and_answered),
        ]
    )
    events = await _turn_with_the_test_server(model, tmp_path, "echo something")
    start = of_type(events, ToolStartEvent)[0]
    assert (start.tool, start.input) == ("mcp__srv__echo", {"text": "hello from mcp"})
    end = tool_ends(events)["c1"]
    assert (end.success, end.output, end.refusal) == (True, "hello from mcp", None)
    assert turn_end(events).stop_reason == "completed"


async def test_the_mcp_tools_rules_allow_one_tool_and_deny_another(tmp_path: Path) -> None:
    rules = PermissionRules(
        mcp_tools=(
            PermissionRule(pattern="mcp__srv__echo", action="allow"),
            PermissionRule(
                pattern="mcp__srv__crash", action="deny", reason="Crashing the server is not allowed"
            ),
        ),
        default_action="deny",
    )
    model = ScriptedChatClient(
        [
            call(
                ("mcp__srv__echo", {"text": "allowed"}, "c1"),
                ("mcp__srv__crash", {}, "c2"),
                ("mcp__srv__pid", {}, "c3"),
            ),
            reply("ok"),
        ]
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            policy = PermissionPolicy(rules, tmp_path)
            agent = Agent(model, tools=plugins.tools, policy=policy, working_dir=tmp_path)
            events = await collect_turn(agent.session(), "try them")
            # The denied call never reached the server: it still runs its first process.
            assert plugins.connections["srv"].connection_count == 1
            assert plugins.connections["srv"].state == "ready"
    assert_verified(events)
    ends = tool_ends(events)
    assert (ends["c1"].success, ends["c1"].output) == (True, "allowed")
    assert (ends["c2"].success, ends["c2"].refusal) == (False, "denied")
    assert ends["c2"].output is not None
    assert "Crashing the server is not allowed" in ends["c2"].output
    # No rule names mcp__srv__pid: the default action decides.
    assert (ends["c3"].success, ends["c3"].refusal) == (False, "denied")


async def test_repeated_mcp_errors_stop_the_turn(tmp_path: Path) -> None:
    failing = ("mcp__srv__fail", {"message": "database locked"})
    model = ScriptedChatClient([call(failing), call(failing), call(failing)])
    events = await _turn_with_the_test_server(model, tmp_path, "keep trying")
    ends = of_type(events, ToolEndEvent)
    assert [(e.success, e.refusal) for e in ends] == [(False, None), (False, None), (False, "repeated_error")]
    assert ends[0].output is not None
    assert "database locked" in ends[0].output
    assert turn_end(events).stop_reason == "tool_terminated"


async def test_the_per_call_timeout_stops_a_slow_tool_and_the_server_sees_it(tmp_path: Path) -> None:
    with anyio.fail_after(WAIT):
        async with Signals().open() as signals, McpPlugins([stdio_plugin(timeout=0.5)]) as plugins:
            model = ScriptedChatClient(
                [
                    call(("mcp__srv__slow", {"seconds": 60, "signal_port": signals.port}, "c1")),
                    reply("too slow"),
                ]
            )
            agent = Agent(model, tools=plugins.tools, working_dir=tmp_path, policy=ALLOW_ALL)
            events = await collect_turn(agent.session(), "be slow")
            report = await signals.accept()
            assert await next_line(report) == "started"
            assert await next_line(report) == "cancelled"
    assert_verified(events)
    end = tool_ends(events)["c1"]
    assert (end.success, end.refusal) == (False, "timed_out")
    assert turn_end(events).stop_reason == "completed"


async def test_cancelling_the_turn_cancels_the_call_on_the_server(tmp_path: Path) -> None:
    events: list[Event] = []
    with anyio.fail_after(WAIT):
        async with Signals().open() as signals, McpPlugins([stdio_plugin()]) as plugins:
            model = ScriptedChatClient(
                [call(("mcp__srv__slow", {"seconds": 60, "signal_port": signals.port}, "c1"))]
            )
            runner = SessionRunner(
                Agent(model, tools=plugins.tools, working_dir=tmp_path, policy=ALLOW_ALL).session()
            )
            async with anyio.create_task_group() as group:
                group.start_soon(runner.run_turn, UserMessageRequest(content="wait"), events.append)
                report = await signals.accept()
                assert await next_line(report) == "started"
                assert runner.cancel()
                assert await next_line(report) == "cancelled"
    assert_verified(events)
    end = tool_ends(events)["c1"]
    assert not end.success
    assert turn_end(events).stop_reason == "cancelled"


async def test_a_tool_added_by_the_server_is_offered_in_the_next_turn(tmp_path: Path) -> None:
    def offers_extra(messages: Sequence[Message], options: ChatOptions) -> None:
        assert "mcp__srv__extra" in [spec.name for spec in options.tools]

    model = ScriptedChatClient(
        [
            call(("mcp__srv__grow", {}, "c1")),
            reply("grown"),
            ScriptedRound(call(("mcp__srv__extra", {"value": 4}, "c2")).updates, check=offers_extra),
            reply("eight"),
        ]
    )
    with anyio.fail_after(WAIT):
        async with McpPlugins([stdio_plugin()]) as plugins:
            agent = Agent(model, tools=[], working_dir=tmp_path, policy=ALLOW_ALL)
            plugins.sync_tools(agent.tools)
            assert "mcp__srv__extra" not in agent.tools
            session = agent.session()
            first = await collect_turn(session, "grow")
            await plugins.connections["srv"].wait_for(lambda c: any(info.name == "extra" for info in c.tools))
            second = await collect_turn(session, "use it")
    model.assert_consumed()
    assert tool_ends(first)["c1"].output == "grown"
    assert tool_ends(second)["c2"].output == "8"
