"""The loop and the context engine together: what is sent is prepared, the conversation stays whole, the budget
backstop compacts instead of sticking, an overflow is compacted and retried once, and each compaction is one
addendum of its turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from collections.abc import Sequence

import anyio
import pytest
from core_harness import WAIT
from core_harness import assert_verified
from core_harness import history

from hive_core import Agent
from hive_core import Capabilities
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import ChatUpdate
from hive_core import FinishUpdate
from hive_core import Message
from hive_core import TextPart
from hive_core import TextUpdate
from hive_core import TokenBudgetChatClient
from hive_core import ToolCallPart
from hive_core import ToolCallUpdate
from hive_core import ToolResultPart
from hive_core import UsageUpdate
from hive_core import collect_turn
from hive_core import tool
from hive_core.approvals import ALLOW_ALL
from hive_core.budget import BUDGET_EXHAUSTED_TEXT
from hive_core.context import CompactionSettings
from hive_core.context import ContextManager
from hive_core.context import ContextWindow
from hive_core.context import estimate_tokens
from hive_core.failures import context_overflowed
from hive_core.failures import is_context_overflow
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import fail
from hive_core.testing import reply
from hive_protocol import AddendumEvent
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import StopReason
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent

pytestmark = pytest.mark.anyio

SUMMARY_MARK = "You summarize"


def fixed_clock() -> float:
    return 0.0


def stop_of(events: Sequence[Event]) -> StopReason | None:
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    return end.stop_reason


def is_summary_request(messages: Sequence[Message], options: ChatOptions) -> bool:
    return not options.tools and any(m.role == "system" and SUMMARY_MARK in m.text for m in messages)


def text_of(messages: Sequence[Message]) -> str:
    return "\n".join(
        part.text if isinstance(part, TextPart) else part.content
        for m in messages
        for part in m.parts
        if isinstance(part, TextPart | ToolResultPart)
    )


class Responder:
    """A model that answers by looking at the request: a summary when asked for one, a call of ``read`` when the
    last message is the user's, a short reply after a tool result. Records every request."""

    def __init__(self, window: int | None) -> None:
        self._capabilities = Capabilities(context_window=window)
        self.requests: list[tuple[list[Message], ChatOptions]] = []
        self.summaries = 0

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        self.requests.append((list(messages), options))
        if is_summary_request(messages, options):
            self.summaries += 1
            yield TextUpdate(f"SUMMARY-{self.summaries}")
        elif messages[-1].role == "user":
            index = len(self.requests)
            yield ToolCallUpdate(0, f"c{index}", "read", f'{{"name": "part{index}"}}')
            yield FinishUpdate("tool_calls")
            return
        else:
            yield TextUpdate("done")
        yield UsageUpdate(estimate_tokens(messages, options), 2)
        yield FinishUpdate("stop")


@tool(read_only=True)
def read(name: str) -> str:
    """Read a part.

    Args:
        name: The part.
    """
    return f"{name}:" + "r" * 3000


async def turn(agent: Agent, session_history: list[Message] | None = None, text: str = "go") -> list[Event]:
    session = agent.session(session_history or [])
    with anyio.fail_after(WAIT):
        return await collect_turn(session, text)


async def test_the_default_agent_prepares_each_request_and_keeps_the_conversation_whole() -> None:
    long = "line\n" * 12_000  # 60,000 characters: cut to its head and tail in what is sent
    client = ScriptedChatClient([reply("ok")], capabilities=Capabilities(context_window=128_000))
    agent = Agent(client, clock=fixed_clock, policy=ALLOW_ALL)
    assert isinstance(agent.context, ContextManager)
    conversation = [
        Message("user", [TextPart("read it")]),
        Message("assistant", [ToolCallPart("c1", "read_file", '{"path": "big"}', {"path": "big"})]),
        Message("tool", [ToolResultPart("c1", "read_file", long)]),
    ]
    session = agent.session(conversation)
    with anyio.fail_after(WAIT):
        await collect_turn(session, "and now?")
    [(sent, _)] = client.requests
    [result] = [p for m in sent for p in m.parts if isinstance(p, ToolResultPart)]
    assert len(result.content) < 30_000 < len(long)
    assert "lines omitted" in result.content
    # The conversation itself (what the store records) still holds the whole result.
    [kept] = [p for m in session.conversation for p in m.parts if isinstance(p, ToolResultPart)]
    assert kept.content == long
    assert agent.context.last is not None
    assert agent.context.last.messages == sent


async def test_an_embedder_passes_its_own_context_manager() -> None:
    client = ScriptedChatClient([reply("ok")])
    manager = ContextManager(CompactionSettings(enable_tool_result_compaction=False), window=1_000)
    agent = Agent(client, context=manager, clock=fixed_clock, policy=ALLOW_ALL)
    assert agent.context is manager
    await turn(agent)
    assert manager.last is not None
    assert manager.last.window == ContextWindow(1_000, "configured")
    # A session may take one of its own.
    other = ContextManager()
    session = agent.session(context=other)
    with anyio.fail_after(WAIT):
        await collect_turn(session, "hi")
    assert session.context is other
    assert other.last is not None


async def test_a_long_session_stays_inside_the_window_and_reports_its_compactions() -> None:
    window = 3_000
    model = Responder(window)
    agent = Agent(TokenBudgetChatClient(model), tools=[read], clock=fixed_clock, policy=ALLOW_ALL)
    session = agent.session()
    addenda: list[str] = []
    with anyio.fail_after(WAIT):
        for n in range(12):
            events = await collect_turn(session, f"turn {n}: " + "u" * 1_200)
            assert_verified(events, turns=1)
            assert stop_of(events) == "completed"
            assert not any(
                isinstance(e, TextDeltaEvent) and e.content == BUDGET_EXHAUSTED_TEXT for e in events
            )
            found = [e for e in events if isinstance(e, AddendumEvent)]
            assert len(found) <= 1
            if found:
                # After the last text delta, right before turn_end.
                assert events[-2] is found[0]
                addenda.append(found[0].content)
    assert model.summaries >= 1
    assert addenda
    assert all(a.startswith("compacted ") and " tokens" in a for a in addenda)
    total = estimate_tokens(session.conversation)
    assert total > 3 * window  # the conversation is whole: several windows' worth
    for messages, options in model.requests:
        assert estimate_tokens(messages, options) <= window
        if is_summary_request(messages, options):
            continue
        calls = {p.id for m in messages for p in m.parts if isinstance(p, ToolCallPart)}
        results = {p.call_id for m in messages for p in m.parts if isinstance(p, ToolResultPart)}
        assert calls == results  # every call has its result, every result its call
        assert messages[-1].role in ("user", "tool")


async def test_the_summary_the_model_wrote_is_what_the_next_request_carries() -> None:
    window = 3_000
    model = Responder(window)
    agent = Agent(model, tools=[read], clock=fixed_clock, policy=ALLOW_ALL)
    session = agent.session()
    with anyio.fail_after(WAIT):
        for n in range(8):
            await collect_turn(session, f"turn {n}: " + "u" * 1_200)
    indexes = [i for i, (m, o) in enumerate(model.requests) if is_summary_request(m, o)]
    assert indexes
    for number, index in enumerate(indexes, start=1):
        following, _ = model.requests[index + 1]
        assert f"[Previous conversation summary]: SUMMARY-{number}" in [m.text for m in following]
        # The newest turn (the protected tail) is sent whole.
        assert following[-1].role in ("user", "tool")


async def test_a_session_at_the_budget_compacts_instead_of_refusing() -> None:
    # A history over the backstop's 80% (as a session that once hit it has), with compaction's own trigger off:
    # the loop compacts because the backstop would refuse, and the turn gets its answer.
    past = history(6, 1_000)
    window = 3_000
    assert estimate_tokens(past) > 0.8 * window
    model = Responder(window)
    settings = CompactionSettings(use_token_based_compaction=False, threshold_percentage=5.0)
    agent = Agent(
        TokenBudgetChatClient(model), context=ContextManager(settings), clock=fixed_clock, policy=ALLOW_ALL
    )
    agent.tools["read"] = read
    events = await turn(agent, past, "new question")
    assert_verified(events, turns=1)
    texts = [e.content for e in events if isinstance(e, TextDeltaEvent)]
    assert BUDGET_EXHAUSTED_TEXT not in texts
    assert texts == ["done"]
    [addendum] = [e for e in events if isinstance(e, AddendumEvent)]
    assert addendum.content.startswith("compacted ")
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert model.summaries >= 1
    assert addendum.content.count("compacted ") == model.summaries  # one addendum for the whole turn
    sent, _ = model.requests[-1]
    assert "new question" in text_of(sent)


async def test_only_a_request_that_cannot_fit_even_compacted_is_refused() -> None:
    inner = ScriptedChatClient([], capabilities=Capabilities(context_window=100))
    events = await turn(
        Agent(TokenBudgetChatClient(inner), clock=fixed_clock, policy=ALLOW_ALL), None, "x" * 2_000
    )
    assert events[0] == TextDeltaEvent(content=BUDGET_EXHAUSTED_TEXT)
    assert stop_of(events) == "output_limit"
    assert inner.requests == []


# -- compactOnOverflow ------------------------------------------------------------------------------------


def overflow_once(answer: str, error: ChatError) -> list[ScriptedRound]:
    return [fail(error), reply("SUMMARY-X"), reply(answer)]


@pytest.mark.parametrize(
    "error",
    [
        ChatError(
            "openai: HTTP 400: This model's maximum context length is 8192 tokens", code="context_limit"
        ),
        ChatError(
            "llama.cpp: HTTP 400: the request exceeds the available context size, try increasing it",
            code="request_rejected",
        ),
    ],
)
async def test_an_overflow_reported_by_the_server_is_compacted_and_retried_once(error: ChatError) -> None:
    client = ScriptedChatClient(overflow_once("fits now", error))  # no window known: the default is a guess
    agent = Agent(client, clock=fixed_clock, policy=ALLOW_ALL)
    events = await turn(agent, history(3, 3_900), "again")
    assert_verified(events, turns=1)
    assert TextDeltaEvent(content="fits now") in events
    [addendum] = [e for e in events if isinstance(e, AddendumEvent)]
    assert "compacted" in addendum.content
    assert "into a summary" in addendum.content
    assert stop_of(events) == "completed"
    first, summary, retried = (messages for messages, _ in client.requests)
    assert is_summary_request(summary, client.requests[1][1])
    assert len(retried) < len(first)
    assert "[Previous conversation summary]: SUMMARY-X" in [m.text for m in retried]
    assert retried[-1].text == "again"
    client.assert_consumed()


async def test_an_overflow_is_retried_only_once() -> None:
    error = ChatError("prompt is too long", code="context_limit")
    client = ScriptedChatClient([fail(error), reply("SUMMARY-X"), fail(error)])
    events = await turn(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), history(3, 3_900), "again")
    assert isinstance(events[0], AddendumEvent)  # the compaction that was made is still reported
    assert events[1:] == [ErrorEvent(message="prompt is too long", code="context_limit"), TurnEndEvent()]
    assert_verified(events, turns=1)
    client.assert_consumed()


async def test_an_overflow_with_nothing_to_compact_is_the_error() -> None:
    error = ChatError("prompt is too long", code="context_limit")
    client = ScriptedChatClient([fail(error)])
    events = await turn(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), None, "hi")
    assert events == [ErrorEvent(message="prompt is too long", code="context_limit"), TurnEndEvent()]
    client.assert_consumed()


async def test_with_compact_on_overflow_off_the_overflow_is_the_error() -> None:
    error = ChatError("prompt is too long", code="context_limit")
    client = ScriptedChatClient([fail(error)])
    manager = ContextManager(CompactionSettings(compact_on_overflow=False))
    events = await turn(
        Agent(client, context=manager, clock=fixed_clock, policy=ALLOW_ALL), history(3, 3_900), "again"
    )
    assert events == [ErrorEvent(message="prompt is too long", code="context_limit"), TurnEndEvent()]
    client.assert_consumed()


async def test_an_empty_reply_cut_at_its_first_token_counts_as_an_overflow() -> None:
    client = ScriptedChatClient([reply(finish="length"), reply("SUMMARY-X"), reply("answered")])
    events = await turn(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), history(3, 3_900), "again")
    assert TextDeltaEvent(content="answered") in events
    assert stop_of(events) == "completed"
    client.assert_consumed()


async def test_a_failure_after_text_is_not_retried() -> None:
    error = ChatError("prompt is too long", code="context_limit")
    client = ScriptedChatClient([fail(error, "partial")])
    events = await turn(Agent(client, clock=fixed_clock, policy=ALLOW_ALL), history(3, 3_900), "again")
    assert events[0] == TextDeltaEvent(content="partial")
    assert isinstance(events[-2], ErrorEvent)
    client.assert_consumed()


def test_overflow_texts_of_every_provider_are_recognised() -> None:
    for text in (
        "This model's maximum context length is 128000 tokens",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "the request exceeds the available context size, try increasing it",
        "input is too long for requested model",
        "too many tokens",
        "context_length_exceeded",
    ):
        assert is_context_overflow(text), text
    assert not is_context_overflow("invalid api key")
    assert context_overflowed(ChatError("anything", code="context_limit"))
    assert not context_overflowed(ChatError("prompt is too long", code="auth"))
    assert not context_overflowed(ValueError("prompt is too long"))


# -- /compact and the window ------------------------------------------------------------------------------


async def test_compact_on_demand_is_kept_for_the_next_request() -> None:
    client = ScriptedChatClient([reply("SUMMARY-NOW"), reply("next")])
    agent = Agent(client, clock=fixed_clock, policy=ALLOW_ALL)
    session = agent.session(history(6, 2_000))
    with anyio.fail_after(WAIT):
        report = await session.compact()
        assert report is not None
        assert report.summarized
        assert report.messages_after < report.messages_before
        assert report.tokens_after < report.tokens_before
        await collect_turn(session, "go on")
    sent, _ = client.requests[-1]
    assert "[Previous conversation summary]: SUMMARY-NOW" in [m.text for m in sent]
    assert len(session.conversation) == 14  # nothing of the conversation itself was dropped


async def test_compact_with_nothing_to_compact_says_so() -> None:
    session = Agent(ScriptedChatClient([]), clock=fixed_clock, policy=ALLOW_ALL).session()
    with anyio.fail_after(WAIT):
        assert await session.compact() is None


def test_the_backstop_measures_against_the_resolved_window() -> None:
    unknown = ScriptedChatClient([])
    assert TokenBudgetChatClient(unknown).window == ContextWindow(8192, "default")
    configured = TokenBudgetChatClient(unknown, configured_window=4_000)
    assert configured.window == ContextWindow(4_000, "configured")
    assert configured.budget == 3_200
    known = ScriptedChatClient([], capabilities=Capabilities(context_window=100_000))
    assert TokenBudgetChatClient(known, configured_window=4_000).window == ContextWindow(100_000, "catalog")
    with pytest.raises(ValueError, match="must be positive"):
        TokenBudgetChatClient(unknown, configured_window=0)


class Probed:
    """A client that learns its window from its server when probed."""

    def __init__(self) -> None:
        self.probes = 0
        self._capabilities = Capabilities()
        self.inner = ScriptedChatClient([reply("a"), reply("b")])

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    async def probe_capabilities(self) -> Capabilities:
        self.probes += 1
        self._capabilities = Capabilities(context_window=32_768, context_window_source="server")
        return self._capabilities

    def stream(self, messages: Sequence[Message], options: ChatOptions) -> AsyncIterator[ChatUpdate]:
        return self.inner.stream(messages, options)


async def test_the_window_the_server_reports_is_probed_once_before_the_first_request() -> None:
    model = Probed()
    budget = TokenBudgetChatClient(model)
    agent = Agent(budget, clock=fixed_clock, policy=ALLOW_ALL)
    session = agent.session()
    with anyio.fail_after(WAIT):
        await collect_turn(session, "one")
        await collect_turn(session, "two")
    assert model.probes == 1
    assert budget.window == ContextWindow(32_768, "server")
    assert agent.context.last is not None
    assert agent.context.last.window == ContextWindow(32_768, "server")
