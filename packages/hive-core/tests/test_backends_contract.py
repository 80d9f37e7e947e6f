"""The backend contract: the built-in loop is the backend named ``hive``, served by the runners like any other, and
questions are asked over the wire and answered (or declined) through the question bridge."""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from core_harness import one_question

from hive_core import Agent
from hive_core import AgentBackend
from hive_core import HiveBackend
from hive_core import QuestionBridge
from hive_core import QuestionService
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.testing import ScriptedChatClient
from hive_core.testing import reply
from hive_protocol import Event
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify

pytestmark = pytest.mark.anyio


class _Client:
    """The runner's sink as a bridge sees it: keeps what was published and says when something was."""

    def __init__(self) -> None:
        self.published: list[Event] = []
        self.arrived = anyio.Event()

    def __call__(self, event: Event) -> None:
        self.published.append(event)
        self.arrived.set()

    async def wait(self) -> None:
        with anyio.fail_after(5):
            await self.arrived.wait()


def _question(request_id: str = "ask-1") -> QuestionRequestEvent:
    return one_question(request_id, "Which database?", ["SQLite", "PostgreSQL"], free_text=False)


async def _asked(
    bridge: QuestionBridge, settle: Callable[[_Client], object]
) -> list[dict[str, list[str]] | None]:
    """What ``bridge.ask(_question())`` returned, with a client attached and ``settle`` called once the question
    was published."""
    client = _Client()
    bridge.attach(client)
    answers: list[dict[str, list[str]] | None] = []
    async with anyio.create_task_group() as group:

        async def ask() -> None:
            answers.append(await bridge.ask(_question()))

        group.start_soon(ask)
        await client.wait()
        settle(client)
    return answers


async def test_the_built_in_loop_is_the_backend_named_hive() -> None:
    client = ScriptedChatClient([reply("Hello", " there")])
    backend = HiveBackend(Agent(client, policy=ALLOW_ALL).session())

    assert isinstance(backend, AgentBackend)
    events = await collect_turn(backend, "hi")

    assert [e.content for e in events if isinstance(e, TextDeltaEvent)] == ["Hello", " there"]
    assert isinstance(events[-1], TurnEndEvent)
    verify(events)
    probe = await backend.probe()
    assert (probe.name, probe.installed, probe.offline) == ("hive", True, True)
    assert backend.session_id is None


async def test_a_question_is_published_and_its_answer_returned() -> None:
    bridge = QuestionBridge()
    assert isinstance(bridge, QuestionService)

    def answer(client: _Client) -> None:
        assert client.published == [_question()]
        assert not bridge.answer(
            QuestionResponseRequest(id="ask-other", answers={"Which database?": "SQLite"})
        )
        assert bridge.answer(QuestionResponseRequest(id="ask-1", answers={"Which database?": "SQLite"}))

    assert await _asked(bridge, answer) == [{"Which database?": ["SQLite"]}]
    assert not bridge.answer(QuestionResponseRequest(id="ask-1"))  # settled: a second answer matches nothing


async def test_a_response_without_answers_declines() -> None:
    bridge = QuestionBridge()
    assert await _asked(bridge, lambda _client: bridge.answer(QuestionResponseRequest(id="ask-1"))) == [None]


async def test_no_client_or_no_answer_in_time_declines() -> None:
    assert await QuestionBridge().ask(_question()) is None  # nobody attached: never asked, declined

    bridge = QuestionBridge(timeout=0.05)
    bridge.attach(lambda _event: None)
    with anyio.fail_after(5):
        assert await bridge.ask(_question()) is None


async def test_detaching_declines_the_waiting_question() -> None:
    bridge = QuestionBridge()
    assert await _asked(bridge, lambda _client: bridge.detach()) == [None]
    assert await bridge.ask(_question("ask-2")) is None
