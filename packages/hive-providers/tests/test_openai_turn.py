"""A whole hive turn over the OpenAI adapters: the agent loop calls a tool, sends its result, and finishes."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from providers_harness import chat_tool_call

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Round
from hive_conformance.script import ScriptText
from hive_conformance.script import ScriptThinking
from hive_conformance.script import ScriptToolCall
from hive_conformance.script import Usage
from hive_core import Agent
from hive_core import ChatClient
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_protocol import TextDeltaEvent
from hive_protocol import ThinkingDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.openai_responses import OpenAIResponsesChatClient

pytestmark = pytest.mark.anyio


@tool(read_only=True)
def read_file(path: str) -> str:
    """Read a text file.

    Args:
        path: The file to read.
    """
    return f"contents of {path}"


ROUNDS = [
    Round(
        parts=[
            ScriptThinking(chunks=["I need ", "the file."], signature="enc-1"),
            ScriptToolCall(id="call_1", name="read_file", arguments=['{"path": ', '"a.txt"}']),
        ],
        usage=Usage(input_tokens=40, output_tokens=10, cached_input_tokens=8),
    ),
    Round(parts=[ScriptText(chunks=["It says ", "hello."])], usage=Usage(input_tokens=60, output_tokens=4)),
]


def chat(url: str) -> OpenAIChatClient:
    return OpenAIChatClient(model="gpt-test", api_key="k", base_url=url + "/v1", max_retries=0)


def responses(url: str) -> OpenAIResponsesChatClient:
    return OpenAIResponsesChatClient(
        model="gpt-test", api_key="k", base_url=url + "/v1", max_retries=0, reasoning=True
    )


@pytest.mark.parametrize("make", [chat, responses], ids=["chat", "responses"])
async def test_a_tool_round_then_a_text_round(
    make: Callable[[str], OpenAIChatClient | OpenAIResponsesChatClient],
) -> None:
    async with ScriptedModelServer(ROUNDS) as server:
        client = make(server.url)
        assert isinstance(client, ChatClient)
        agent = Agent(client, tools=[read_file], instructions="Be brief.", policy=ALLOW_ALL)
        with anyio.fail_after(20):
            events = await collect_turn(agent.session(), "What is in a.txt?")
        await client.aclose()
        server.assert_consumed()
        first, second = (request.body for request in server.requests)

    assert verify(events) == []
    starts = [e for e in events if isinstance(e, ToolStartEvent)]
    ends = [e for e in events if isinstance(e, ToolEndEvent)]
    assert [(s.tool, s.input, s.call_id) for s in starts] == [("read_file", {"path": "a.txt"}, "call_1")]
    assert [(e.call_id, e.success, e.output) for e in ends] == [("call_1", True, "contents of a.txt")]
    assert "".join(e.content for e in events if isinstance(e, ThinkingDeltaEvent)) == "I need the file."
    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["It says ", "hello."]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.cached_input_tokens) == (100, 14, 8)
    assert end.stop_reason == "completed"

    if isinstance(client, OpenAIChatClient):
        assert first["messages"] == [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "What is in a.txt?"},
        ]
        assert [t["function"]["name"] for t in first["tools"]] == ["read_file"]
        assert second["messages"][2:] == [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [chat_tool_call("call_1", '{"path": "a.txt"}')],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "contents of a.txt"},
        ]
    else:
        assert first["instructions"] == "Be brief."
        assert [t["name"] for t in first["tools"]] == ["read_file"]
        assert second["input"][1:] == [
            {
                "type": "reasoning",
                "id": "rs_scripted_0_0",
                "encrypted_content": "enc-1",
                "summary": [{"type": "summary_text", "text": "I need the file."}],
            },
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read_file",
                "arguments": '{"path": "a.txt"}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "contents of a.txt"},
        ]
