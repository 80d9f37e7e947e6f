"""Verdict constructors and the strictness order used to combine verdicts."""

from __future__ import annotations

import typing

import msgspec
import pytest

from hive_core.approvals import Verdict
from hive_core.approvals import strictest


def test_constructors_set_the_usual_levels() -> None:
    assert Verdict.allow("fine") == Verdict(action="allow", reason="fine", level=None)
    assert Verdict.deny("no") == Verdict(action="deny", reason="no", level="critical")
    assert Verdict.ask("maybe") == Verdict(action="ask", reason="maybe", level="medium")
    assert Verdict.ask("maybe", level="high").level == "high"
    assert Verdict.of("ask", "x", ask_level="critical") == Verdict(action="ask", reason="x", level="critical")
    assert Verdict.of("deny", "x").level == "critical"
    assert Verdict.of("allow", "x").level is None


def test_verdict_fields() -> None:
    hints = typing.get_type_hints(Verdict)
    assert list(Verdict.__struct_fields__) == ["action", "reason", "level"]
    assert set(typing.get_args(hints["action"])) == {"allow", "deny", "ask"}
    level_args = {arg for member in typing.get_args(hints["level"]) for arg in typing.get_args(member)}
    assert level_args == {"low", "medium", "high", "critical"}


def test_verdict_is_frozen() -> None:
    verdict = Verdict.allow()
    with pytest.raises(AttributeError):
        verdict.action = "deny"  # type: ignore[misc]


def test_verdict_encodes_with_msgspec() -> None:
    assert msgspec.json.decode(msgspec.json.encode(Verdict.ask("r", level="high"))) == {
        "action": "ask",
        "reason": "r",
        "level": "high",
    }


def test_deny_beats_ask_beats_allow() -> None:
    allow, ask, deny = Verdict.allow("a"), Verdict.ask("b"), Verdict.deny("c", level=None)
    assert strictest([allow, ask, deny]) is deny
    assert strictest([deny, ask, allow]) is deny
    assert strictest([allow, ask]) is ask
    assert strictest([ask, allow]) is ask
    assert strictest([allow]) is allow


def test_same_action_higher_level_wins_and_ties_keep_the_first() -> None:
    medium, high = Verdict.ask("m"), Verdict.ask("h", level="high")
    assert strictest([medium, high]) is high
    first, second = Verdict.ask("first"), Verdict.ask("second")
    assert strictest([first, second]) is first


def test_strictest_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        strictest([])
