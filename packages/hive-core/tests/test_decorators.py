"""Chat client decorators: the token-budget backstop, and retry with provider fallback."""

from __future__ import annotations

import anyio
import pytest
from core_harness import WAIT
from core_harness import Wire
from core_harness import assert_verified
from core_harness import kinds
from core_harness import of_type

from hive_core import Agent
from hive_core import Capabilities
from hive_core import ChatClient
from hive_core import ChatError
from hive_core import ChatOptions
from hive_core import FallbackChatClient
from hive_core import LazyChatClient
from hive_core import Message
from hive_core import SessionRunner
from hive_core import TextPart
from hive_core import TokenBudgetChatClient
from hive_core import ToolCallPart
from hive_core import ToolResultPart
from hive_core import collect_turn
from hive_core.approvals import ALLOW_ALL
from hive_core.budget import BUDGET_EXHAUSTED_TEXT
from hive_core.budget import estimate_tokens
from hive_core.chat import probed_capabilities
from hive_core.context import ContextWindow
from hive_core.fallback import RetryingChatClient
from hive_core.testing import ScriptedChatClient
from hive_core.testing import ScriptedRound
from hive_core.testing import fail
from hive_core.testing import reply
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import FallbackCategory
from hive_protocol import FallbackEvent
from hive_protocol import FallbackKind
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


def fixed_clock() -> float:
    return 0.0


async def turn(client: ChatClient, content: str = "hi") -> list[Event]:
    agent = Agent(client, clock=fixed_clock, policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        return await collect_turn(agent.session(), content)


# -- token budget ---------------------------------------------------------------------------------------


async def test_a_request_over_the_budget_is_not_sent() -> None:
    inner = ScriptedChatClient([], capabilities=Capabilities(context_window=100))
    # 293 characters estimate to 74 tokens, + 4 for the message and 3 for the request = 81: over 80% of 100.
    events = await turn(TokenBudgetChatClient(inner), "x" * 293)

    assert events == [
        TextDeltaEvent(content=BUDGET_EXHAUSTED_TEXT),
        TurnEndEvent(stop_reason="output_limit", duration_ms=0),
    ]
    assert BUDGET_EXHAUSTED_TEXT.startswith("[partial response: token budget exhausted")
    assert inner.requests == []
    assert_verified(events, turns=1)


async def test_a_request_at_the_budget_is_sent() -> None:
    inner = ScriptedChatClient([reply("fits")], capabilities=Capabilities(context_window=100))
    # 292 characters estimate to 73 + 4 + 3 = 80 tokens: exactly 80% of the window is still allowed.
    events = await turn(TokenBudgetChatClient(inner), "x" * 292)

    assert events == [TextDeltaEvent(content="fits"), TurnEndEvent(stop_reason="completed", duration_ms=0)]
    assert len(inner.requests) == 1


async def test_without_a_known_window_the_default_is_used() -> None:
    inner = ScriptedChatClient([reply("fits")])
    budget = TokenBudgetChatClient(inner, threshold=0.5, default_window=10)
    assert budget.window == ContextWindow(10, "default")
    assert budget.budget == 5
    assert budget.capabilities.context_window is None
    events = await turn(budget, "x" * 24)  # 6 tokens > 5
    assert events[-1] == TurnEndEvent(stop_reason="output_limit", duration_ms=0)


async def test_the_budget_counts_instructions() -> None:
    inner = ScriptedChatClient([], capabilities=Capabilities(context_window=100))
    agent = Agent(TokenBudgetChatClient(inner), instructions="i" * 320, clock=fixed_clock, policy=ALLOW_ALL)
    with anyio.fail_after(WAIT):
        events = await collect_turn(agent.session(), "short question")
    assert events[-1] == TurnEndEvent(stop_reason="output_limit", duration_ms=0)


def test_estimate_counts_every_part() -> None:
    messages = [
        Message("user", [TextPart("a" * 8)]),
        Message("assistant", [ToolCallPart("c1", "tool", '{"k":"v"}', {"k": "v"})]),
        Message("tool", [ToolResultPart("c1", "tool", "r" * 12)]),
    ]
    # Per message: characters / 4 rounded up, + 4: 8 → 2 + 4; the call's name and JSON (4 + 9) → 4 + 4;
    # 12 → 3 + 4; + 3 for the request = 24; instructions "abc" add 1.
    assert estimate_tokens(messages) == 24
    assert estimate_tokens(messages, ChatOptions(instructions="abc")) == 25


@pytest.mark.parametrize(("threshold", "window"), [(0.0, 10), (1.5, 10), (0.8, 0)])
def test_budget_rejects_bad_settings(threshold: float, window: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        TokenBudgetChatClient(ScriptedChatClient([]), threshold=threshold, default_window=window)


# -- retry and fallback ----------------------------------------------------------------------------------


class Sleeps:
    """An injected ``sleep`` that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def notice(
    kind: FallbackKind, index: int, category: FallbackCategory, message: str, attempt: int, total: int = 2
) -> FallbackEvent:
    return FallbackEvent(
        kind=kind,
        provider_index=index,
        total_providers=total,
        category=category,
        message=message,
        attempt=attempt,
        max_attempts=3,
    )


async def test_a_rate_limit_is_retried_after_the_advised_delay() -> None:
    sleeps = Sleeps()
    provider = ScriptedChatClient(
        [fail(ChatError("slow down", code="rate_limit", retry_after=2.5)), reply("ok")]
    )
    events = await turn(FallbackChatClient([provider], sleep=sleeps))

    assert events == [
        notice("retry", 0, "rate_limit", "slow down", 1, total=1),
        TextDeltaEvent(content="ok"),
        TurnEndEvent(stop_reason="completed", duration_ms=0),
    ]
    assert sleeps.delays == [2.5]
    assert_verified(events, turns=1)


async def test_transient_failures_back_off_exponentially_up_to_the_cap() -> None:
    sleeps = Sleeps()
    provider = ScriptedChatClient(
        [
            fail(ConnectionError("reset")),
            fail(TimeoutError()),
            fail(ChatError("later", code="rate_limit", retry_after=99.0)),
            reply("ok"),
        ]
    )
    client = FallbackChatClient([provider], max_attempts=4, base_delay=1.5, max_delay=10.0, sleep=sleeps)
    events = await turn(client)

    assert sleeps.delays == [1.5, 3.0, 10.0]
    assert [(e.kind, e.category, e.attempt) for e in of_type(events, FallbackEvent)] == [
        ("retry", "transient", 1),
        ("retry", "transient", 2),
        ("retry", "rate_limit", 3),
    ]
    assert of_type(events, FallbackEvent)[1].message == "TimeoutError"
    assert events[-1] == TurnEndEvent(stop_reason="completed", duration_ms=0)


async def test_an_auth_failure_falls_back_to_the_next_provider() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([fail(ChatError("bad key", code="auth"))])
    second = ScriptedChatClient([reply("from the second")])
    events = await turn(FallbackChatClient([first, second], sleep=sleeps))

    assert events == [
        notice("fallback", 0, "auth", "bad key", 1),
        TextDeltaEvent(content="from the second"),
        TurnEndEvent(stop_reason="completed", duration_ms=0),
    ]
    assert sleeps.delays == []
    first.assert_consumed()
    second.assert_consumed()


async def test_retry_then_fallback() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([fail(ChatError("overloaded", code="network"))] * 3)
    second = ScriptedChatClient([reply("rescued")])
    events = await turn(FallbackChatClient([first, second], sleep=sleeps))

    assert of_type(events, FallbackEvent) == [
        notice("retry", 0, "transient", "overloaded", 1),
        notice("retry", 0, "transient", "overloaded", 2),
        notice("fallback", 0, "transient", "overloaded", 3),
    ]
    assert sleeps.delays == [1.0, 2.0]
    assert of_type(events, TextDeltaEvent) == [TextDeltaEvent(content="rescued")]
    first.assert_consumed()
    assert_verified(events, turns=1)


async def test_a_fatal_failure_is_raised_at_once() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([fail(ChatError("prompt too long", code="context_limit"))])
    second = ScriptedChatClient([])
    events = await turn(FallbackChatClient([first, second], sleep=sleeps))

    assert events == [
        notice("exhausted", 0, "fatal", "prompt too long", 1),
        ErrorEvent(message="prompt too long", code="context_limit"),
        TurnEndEvent(),
    ]
    assert second.requests == []
    assert sleeps.delays == []
    assert_verified(events, turns=1)


async def test_the_last_provider_out_of_attempts_fails_the_turn() -> None:
    sleeps = Sleeps()
    only = ScriptedChatClient([fail(ChatError("busy", code="rate_limit"))] * 2)
    events = await turn(FallbackChatClient([only], max_attempts=2, sleep=sleeps))

    assert [(e.kind, e.attempt) for e in of_type(events, FallbackEvent)] == [("retry", 1), ("exhausted", 2)]
    assert kinds(events)[-2:] == ["error", "turn_end"]
    assert of_type(events, ErrorEvent)[0].code == "rate_limit"
    assert_verified(events, turns=1)


async def test_an_auth_failure_on_the_last_provider_is_not_retried() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([fail(ChatError("bad key", code="auth"))])
    second = ScriptedChatClient([fail(ChatError("no credit", code="billing"))])
    events = await turn(FallbackChatClient([first, second], sleep=sleeps))

    assert [(e.kind, e.provider_index, e.category) for e in of_type(events, FallbackEvent)] == [
        ("fallback", 0, "auth"),
        ("exhausted", 1, "auth"),
    ]
    assert of_type(events, ErrorEvent) == [ErrorEvent(message="no credit", code="billing")]
    assert sleeps.delays == []


async def test_a_stream_that_fails_midway_is_not_retried() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([fail(ChatError("dropped", code="network"), "half an ans")])
    second = ScriptedChatClient([])
    events = await turn(FallbackChatClient([first, second], sleep=sleeps))

    assert events == [
        TextDeltaEvent(content="half an ans"),
        ErrorEvent(message="dropped", code="network"),
        TurnEndEvent(),
    ]
    assert second.requests == []
    assert sleeps.delays == []


async def test_other_exceptions_pass_through_untouched() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient([ScriptedRound([], KeyError("bug"))])
    events = await turn(FallbackChatClient([first, ScriptedChatClient([])], sleep=sleeps))

    assert of_type(events, FallbackEvent) == []
    assert of_type(events, ErrorEvent)[0].code == "internal"


async def test_a_retrying_client_tries_again_quietly_as_many_times_as_told() -> None:
    sleeps = Sleeps()
    provider = ScriptedChatClient(
        [
            fail(ChatError("busy", code="internal")),
            fail(ChatError("slow down", code="rate_limit", retry_after=2.5)),
            reply("ok"),
        ]
    )
    events = await turn(RetryingChatClient(provider, retries=2, base_delay=0.5, sleep=sleeps))

    assert events == [TextDeltaEvent(content="ok"), TurnEndEvent(stop_reason="completed", duration_ms=0)]
    assert len(provider.requests) == 3
    assert sleeps.delays == [0.5, 2.5]


@pytest.mark.parametrize(
    ("rounds", "requests"),
    [
        ([fail(ChatError("busy", code="internal"))] * 2, 2),  # out of retries
        ([fail(ChatError("no such model", code="request_rejected"))], 1),  # would fail again
        ([fail(ChatError("dropped", code="network"), "half")], 1),  # something was streamed
    ],
    ids=["out-of-retries", "fatal", "midway"],
)
async def test_a_retrying_client_gives_up(rounds: list[ScriptedRound], requests: int) -> None:
    provider = ScriptedChatClient(rounds)
    events = await turn(RetryingChatClient(provider, retries=1, sleep=Sleeps()))

    assert len(of_type(events, ErrorEvent)) == 1
    assert of_type(events, FallbackEvent) == []
    assert len(provider.requests) == requests


async def test_a_provider_moved_past_is_skipped_by_later_requests() -> None:
    first = ScriptedChatClient([fail(ChatError("bad key", code="auth"))])
    second = ScriptedChatClient([reply("one"), reply("two")])
    last = ScriptedChatClient([])
    client = FallbackChatClient([first, second, last], sleep=Sleeps())
    agent = Agent(client, clock=fixed_clock, policy=ALLOW_ALL)
    session = agent.session()

    with anyio.fail_after(WAIT):
        opening = await collect_turn(session, "hi")
        later = await collect_turn(session, "again")

    assert [(e.kind, e.provider_index) for e in of_type(opening, FallbackEvent)] == [("fallback", 0)]
    assert client.dead == {0}
    # No second request to the dead provider, and no event saying so: its fallback event said it once.
    assert len(first.requests) == 1
    assert later == [TextDeltaEvent(content="two"), TurnEndEvent(stop_reason="completed", duration_ms=0)]
    second.assert_consumed()
    assert last.requests == []


async def test_the_last_provider_is_never_skipped() -> None:
    first = ScriptedChatClient([fail(ChatError("bad key", code="auth"))])
    second = ScriptedChatClient([fail(ChatError("no credit", code="billing")), reply("back")])
    client = FallbackChatClient([first, second], sleep=Sleeps())

    assert of_type(await turn(client), ErrorEvent) == [ErrorEvent(message="no credit", code="billing")]
    assert client.dead == {0}
    assert of_type(await turn(client), TextDeltaEvent) == [TextDeltaEvent(content="back")]


async def test_a_lazy_client_is_built_by_its_first_request_only() -> None:
    built: list[ScriptedChatClient] = []

    def connect() -> ChatClient:
        built.append(ScriptedChatClient([reply("late")], capabilities=Capabilities(context_window=500)))
        return built[-1]

    lazy = LazyChatClient(connect)
    primary = ScriptedChatClient(
        [reply("early"), fail(ChatError("gone", code="auth"))], capabilities=Capabilities(context_window=300)
    )
    client = FallbackChatClient([primary, lazy], sleep=Sleeps())

    assert (await probed_capabilities(client)).context_window == 300
    assert of_type(await turn(client), TextDeltaEvent) == [TextDeltaEvent(content="early")]
    assert built == []
    assert of_type(await turn(client), TextDeltaEvent) == [TextDeltaEvent(content="late")]
    assert len(built) == 1
    assert lazy.client is built[0]
    # The dead primary's smaller window no longer narrows what is sent.
    assert client.capabilities.context_window == 500


def test_fallback_window_is_the_smallest_known() -> None:
    clients = [
        ScriptedChatClient([], capabilities=Capabilities(context_window=8000)),
        ScriptedChatClient([]),
        ScriptedChatClient([], capabilities=Capabilities(context_window=4000)),
    ]
    assert FallbackChatClient(clients).capabilities.context_window == 4000
    assert FallbackChatClient([ScriptedChatClient([])]).capabilities.context_window is None
    with pytest.raises(ValueError, match="at least one client"):
        FallbackChatClient([])
    with pytest.raises(ValueError, match="max_attempts"):
        FallbackChatClient(clients, max_attempts=0)


class _ProbingClient(ScriptedChatClient):
    """A client whose server, once asked, reports a window smaller than any the others know."""

    def __init__(self) -> None:
        super().__init__([])
        self.probes = 0

    async def probe_capabilities(self) -> Capabilities:
        self.probes += 1
        self._capabilities = Capabilities(context_window=2000, context_window_source="server")
        return self._capabilities


async def test_fallback_probes_every_provider_and_keeps_the_window_source() -> None:
    probing = _ProbingClient()
    catalogued = ScriptedChatClient(
        [], capabilities=Capabilities(context_window=4000, context_window_source="catalog")
    )
    client = FallbackChatClient([probing, catalogued])
    assert client.capabilities.context_window_source == "catalog"
    assert (client.capabilities.context_window, client.capabilities.context_window_source) == (
        4000,
        "catalog",
    )
    probed = await probed_capabilities(client)
    assert (probed.context_window, probed.context_window_source) == (2000, "server")
    assert probing.probes == 1


async def test_fallback_events_are_relayed_on_the_wire() -> None:
    sleeps = Sleeps()
    first = ScriptedChatClient(
        [fail(ChatError("slow", code="rate_limit", retry_after=0.5)), fail(ChatError("key", code="auth"))]
    )
    second = ScriptedChatClient([reply("second provider")])
    agent = Agent(FallbackChatClient([first, second], sleep=sleeps), clock=fixed_clock, policy=ALLOW_ALL)
    wire = Wire(SessionRunner(agent.session(), session_id="s1"))

    events = await wire.run(UserMessageRequest(content="hi"))

    assert kinds(events) == ["session_started", "fallback", "fallback", "text_delta", "turn_end"]
    assert [(e.kind, e.category) for e in of_type(events, FallbackEvent)] == [
        ("retry", "rate_limit"),
        ("fallback", "auth"),
    ]
    assert sleeps.delays == [0.5]
    assert_verified(events, turns=1)


async def test_budget_inside_fallback_stops_before_any_provider_is_asked() -> None:
    inner = ScriptedChatClient([], capabilities=Capabilities(context_window=10))
    events = await turn(FallbackChatClient([TokenBudgetChatClient(inner)]), "x" * 100)
    assert events[-1] == TurnEndEvent(stop_reason="output_limit", duration_ms=0)
    assert inner.requests == []


def test_the_backstop_refuses_against_a_guessed_window_only_when_asked_to() -> None:
    big = [Message("user", [TextPart("x" * 100_000)])]
    unknown = ScriptedChatClient([], capabilities=Capabilities())
    known = ScriptedChatClient(
        [], capabilities=Capabilities(context_window=8192, context_window_source="catalog")
    )
    assert not TokenBudgetChatClient(unknown).admits(big, ChatOptions())
    assert TokenBudgetChatClient(unknown, refuse_on_default=False).admits(big, ChatOptions())
    assert not TokenBudgetChatClient(known, refuse_on_default=False).admits(big, ChatOptions())
