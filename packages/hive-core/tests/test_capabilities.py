"""What a chat client says it can do (:class:`Capabilities`), and who reads it: the loop offers tools only to a
client that takes them, the token budget measures against its window, fallback combines its clients'."""

from __future__ import annotations

import anyio
import pytest
from core_harness import WAIT

from hive_core import Agent
from hive_core import Capabilities
from hive_core import FallbackChatClient
from hive_core import TokenBudgetChatClient
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.chat import AsyncClosable
from hive_core.chat import ChatClient
from hive_core.chat import ModelLister
from hive_core.testing import ScriptedChatClient
from hive_core.testing import reply
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


@tool(read_only=True)
def look(name: str) -> str:
    """Look at something.

    Args:
        name: What to look at.
    """
    return name


@pytest.mark.parametrize("mode", ["auto", "require:look"])
async def test_a_client_without_tools_is_offered_none(mode: str) -> None:
    client = ScriptedChatClient([reply("plain")], capabilities=Capabilities(tools=False))
    agent = Agent(client, tools=[look], policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        await collect_turn(
            agent.session(), UserMessageRequest(content="hi", options=TurnOptions(tool_mode=mode))
        )
    [(_, options)] = client.requests
    assert options.tools == []
    assert options.tool_choice == "none"


async def test_a_client_with_tools_is_offered_them() -> None:
    client = ScriptedChatClient([reply("ok")])
    agent = Agent(client, tools=[look], policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        await collect_turn(agent.session(), "hi")
    [(_, options)] = client.requests
    assert [spec.name for spec in options.tools] == ["look"]


def test_the_decorators_report_what_their_clients_can_do() -> None:
    full = Capabilities(tools=True, streamed_tool_calls=True, thinking=True, context_window=8000)
    plain = Capabilities(tools=False, streamed_tool_calls=False, thinking=False, context_window=4000)
    assert TokenBudgetChatClient(ScriptedChatClient([], capabilities=full)).capabilities == full
    clients = [ScriptedChatClient([], capabilities=full), ScriptedChatClient([], capabilities=plain)]
    assert FallbackChatClient(clients).capabilities == Capabilities(
        tools=False, streamed_tool_calls=False, thinking=True, context_window=4000
    )


def test_the_protocols_are_structural() -> None:
    class Lister:
        async def list_models(self) -> list[str]:
            return []

        async def aclose(self) -> None:
            pass

    assert isinstance(ScriptedChatClient([]), ChatClient)
    assert isinstance(Lister(), ModelLister)
    assert isinstance(Lister(), AsyncClosable)
    assert not isinstance(ScriptedChatClient([]), ModelLister)
