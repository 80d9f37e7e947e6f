"""The small-model tool profile: each turn is offered only the tools its message points at, none for a plain
question, and the tools a task already used stay offered."""

from __future__ import annotations

import pytest

from hive_core import Agent
from hive_core import Message
from hive_core import TextPart
from hive_core import ToolCallPart
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.builtin_tools import builtin_tools
from hive_core.testing import ScriptedChatClient
from hive_core.testing import call
from hive_core.testing import reply
from hive_core.tool_retrieval import ToolRetrieval
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio

TOOLS = {t.name: t for t in builtin_tools()}
RETRIEVAL = ToolRetrieval()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@tool
def weather(city: str) -> str:
    """Tell the current weather forecast of a city.

    Args:
        city: The city.
    """
    return f"sunny in {city}"


@pytest.mark.parametrize(
    "prompt", ["Say hello in five words", "What is the capital of France?", "Thanks, that was great!"]
)
def test_a_plain_question_is_offered_no_tools(prompt: str) -> None:
    assert RETRIEVAL.select(prompt, [], TOOLS) == ()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Run the tests and tell me what fails", "execute_command"),
        ("What is in setup.py?", "read_file"),
        ("Fix the typo in src/app.py", "edit_file"),
        ("Where is parse_config defined?", "grep_files"),
        ("List the folders of this project", "list_directory"),
    ],
)
def test_a_request_is_offered_the_tool_its_words_point_at(prompt: str, expected: str) -> None:
    chosen = RETRIEVAL.select(prompt, [], TOOLS)
    assert chosen[0] == expected or expected in chosen
    assert 0 < len(chosen) <= RETRIEVAL.limit


def test_tools_used_earlier_stay_offered_and_other_tools_match_their_description() -> None:
    history = [
        Message("user", [TextPart("run the tests")]),
        Message("assistant", [ToolCallPart("c1", "execute_command", {"command": "pytest"})]),
    ]
    assert RETRIEVAL.select("and now?", history, TOOLS) == ("execute_command",)
    tools = {**TOOLS, "weather": weather}
    assert RETRIEVAL.select("What's the weather forecast in Oslo?", [], tools) == ("weather",)


async def test_the_agent_offers_the_selected_tools_and_a_turn_naming_tools_overrides_it() -> None:
    client = ScriptedChatClient(
        [reply("Hello there, nice to meet you!"), call(("execute_command", {"command": "true"})), reply("ok")]
    )
    agent = Agent(client, tools=TOOLS.values(), tool_selector=RETRIEVAL, policy=ALLOW_ALL)
    session = agent.session()
    await collect_turn(session, UserMessageRequest(content="Say hello in five words"))
    plain = client.requests[0][1]
    assert plain.tools == []
    assert plain.tool_choice == "none"
    await collect_turn(session, UserMessageRequest(content="run the command true"))
    assert client.requests[1][1].tools[0].name == "execute_command"
    named = Agent(
        ScriptedChatClient([reply("ok")]), tools=TOOLS.values(), tool_selector=RETRIEVAL, policy=ALLOW_ALL
    )
    request = UserMessageRequest(content="hello", options=TurnOptions(tool_names=["read_file"]))
    await collect_turn(named.session(), request)
    assert isinstance(named.client, ScriptedChatClient)
    assert [spec.name for spec in named.client.requests[0][1].tools] == ["read_file"]
