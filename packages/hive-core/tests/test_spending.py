"""Session spending in hive's loop (the SDK): a cost limit priced by the host's table, an unknown price that never
stops a session as if it were free, and the sum a resumed session starts from."""

from __future__ import annotations

import pytest
from core_harness import assert_verified

from hive_core import Agent
from hive_core import UsageUpdate
from hive_core import collect_turn
from hive_core.spending import RequestSpend
from hive_core.spending import SpendingLimits
from hive_core.spending import Spent
from hive_core.testing import ScriptedChatClient
from hive_core.testing import reply
from hive_protocol import AddendumEvent
from hive_protocol import Event
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest

pytestmark = pytest.mark.anyio


class PerToken:
    """A price table of one model: a tenth of a cent a token; any other model is unknown."""

    def model(self, override: str | None, /) -> str:
        return f"test/{override or 'priced'}"

    def price(self, model: str, usage: UsageUpdate, /) -> float | None:
        return (usage.input_tokens + usage.output_tokens) / 1000 if model == "test/priced" else None


def _end(events: list[Event]) -> tuple[str, str | None]:
    notes = [e.content for e in events if isinstance(e, AddendumEvent)]
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    return ("".join(notes), end.stop_reason)


async def test_a_cost_limit_stops_the_session_at_its_price() -> None:
    client = ScriptedChatClient([reply("One.", usage=(600, 10)), reply("Two.", usage=(300, 10))])
    limits = SpendingLimits(max_session_cost=0.9)
    session = Agent(client, spending=limits, pricing=PerToken()).session()
    first = await collect_turn(session, "one")
    second = await collect_turn(session, "two")
    third = await collect_turn(session, "three")
    assert _end(first) == ("", "completed")  # $0.61: below 80% of $0.90
    assert _end(second) == (
        "budget.maxSessionCost: $0.9200 of $0.9000 spent; the session reached its budget and the turn stopped",
        "budget_exhausted",
    )
    assert _end(third)[1] == "budget_exhausted"
    assert session.spending.cost() == pytest.approx(0.92)
    assert (session.spending.turn_cost(), session.spending.spent.tokens) == (0.0, 920)
    for events in (first, second, third):
        assert_verified(events, turns=1)
    client.assert_consumed()


async def test_an_unknown_price_is_no_price_and_stops_nothing_but_tokens() -> None:
    client = ScriptedChatClient([reply("One.", usage=(600, 10)), reply("Two.", usage=(600, 10))])
    limits = SpendingLimits(max_session_cost=0.001, max_session_tokens=1000)
    session = Agent(client, spending=limits, pricing=PerToken()).session()
    first = await collect_turn(session, UserMessageRequest(content="one", model="other"))
    assert _end(first) == ("", "completed")
    assert session.spending.cost() is None
    second = await collect_turn(session, "two")
    assert _end(second)[1] == "budget_exhausted"
    assert "budget.maxSessionTokens: 1220 of 1000 tokens used" in _end(second)[0]
    assert session.spending.cost() is None  # one request unpriced: the sum would understate it


async def test_a_resumed_session_starts_from_its_stored_spends() -> None:
    spent = Spent.of([RequestSpend(model="test/priced", input_tokens=5, output_tokens=2), "not a spend"])
    spent.add(RequestSpend(model="test/priced", input_tokens=3, output_tokens=1))
    assert spent.tokens == 11
    assert spent.cost(PerToken()) == pytest.approx(0.011)
    assert spent.cost(None) is None
    assert Spent().cost(None) == 0.0
