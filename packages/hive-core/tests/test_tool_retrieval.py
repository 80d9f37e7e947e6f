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
from hive_core.tool_retrieval import tool_retrieval_from_config
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
    assert 0 < len(chosen) <= RETRIEVAL.max_tools


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


def _called(*names: str) -> list[Message]:
    return [Message("assistant", [ToolCallPart(f"c{i}", name, "{}")]) for i, name in enumerate(names)]


def test_sticky_tools_leave_the_scored_slots_to_relevant_tools() -> None:
    history = _called("read_file", "write_file", "execute_command")
    sticky = ToolRetrieval(max_tools=3, sticky_tool_limit=3, sticky_change_score=2.0)
    assert sticky.select("Where is parse_config defined?", history, TOOLS) == (
        "execute_command",
        "write_file",
        "read_file",
    )
    reserved = ToolRetrieval(max_tools=3, sticky_tool_limit=3, min_scored_slots=1, sticky_change_score=2.0)
    assert reserved.select("Where is parse_config defined?", history, TOOLS) == (
        "execute_command",
        "write_file",
        "grep_files",
    )
    # No relevant tool: the reserved slot goes back to the sticky ones.
    assert reserved.select("Thanks, that was great!", history, TOOLS) == (
        "execute_command",
        "write_file",
        "read_file",
    )


def test_min_relevance_score_leaves_out_weak_matches() -> None:
    scores = ToolRetrieval().scores("Run the tests and tell me what fails", TOOLS)
    assert scores["execute_command"] == 1
    weak = {name for name, score in scores.items() if score < 1}
    assert weak
    strict = ToolRetrieval(max_tools=10, min_relevance_score=0.99)
    assert strict.select("Run the tests and tell me what fails", [], TOOLS) == ("execute_command",)
    loose = ToolRetrieval(max_tools=10)
    assert weak <= set(loose.select("Run the tests and tell me what fails", [], TOOLS))


def test_the_config_section_builds_the_selector_only_when_enabled() -> None:
    class Loaded:
        def __init__(self, section: dict[str, object]) -> None:
            self._section = section

        def section(self, name: str, /) -> dict[str, object]:
            assert name == "toolRetrieval"
            return self._section

    fields: dict[str, object] = {
        "enabled": True,
        "maxTools": 5,
        "minRelevanceScore": 0.5,
        "minScoredSlots": 2,
        "alwaysInclude": ["manage_todo"],
        "stickyToolLimit": 1,
        "stickyChangeScore": 0.8,
    }
    assert tool_retrieval_from_config(Loaded({**fields, "enabled": False})) is None
    built = tool_retrieval_from_config(Loaded(fields))
    assert built is not None
    assert (built.max_tools, built.min_relevance_score, built.min_scored_slots) == (5, 0.5, 2)
    assert (built.always_include, built.sticky_tool_limit, built.sticky_change_score) == (
        ("manage_todo",),
        1,
        0.8,
    )
