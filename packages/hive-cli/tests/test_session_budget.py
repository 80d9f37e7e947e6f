"""Session budgets end to end (``budget`` in config.yaml): through ``hive run --server`` and ``hive -p`` against the
scripted model server, whose rounds report the usage the budget counts."""

from __future__ import annotations

from typing import Any

import msgspec
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from genai_prices import Usage
from genai_prices import calc_price

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import Usage as ScriptUsage
from hive_protocol import verify


def _budget(ws: Workspace, yaml_text: str) -> Workspace:
    (ws.project / ".hive" / "config.yaml").write_text(yaml_text, encoding="utf-8")
    return ws


def _ends(events: list[dict[str, Any]]) -> tuple[str, str | None]:
    """The turn's addendum (``""`` for none) and its stop reason."""
    addenda = [e["content"] for e in events if e["type"] == "addendum"]
    assert len(addenda) <= 1
    return (addenda[0] if addenda else ""), events[-1].get("stop_reason")


def test_a_warning_then_a_stop_and_no_more_requests(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("One.", usage=(8_500, 10)), text("Two.", usage=(1_500, 10)), text("Never sent."))
    _budget(ws.use(server), "budget:\n  maxSessionTokens: 10000\n")
    with ws.start("run", "--server", "--session-id", "spend") as proc:
        assert proc.next_event()["type"] == "session_started"
        first = proc.turn("one")
        second = proc.turn("two")
        third = proc.turn("three")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
        lines = list(proc.out)

    warning, stop = _ends(first)
    assert stop == "completed"
    assert (
        warning
        == "budget.maxSessionTokens: 8510 of 10000 tokens used: the session has used 80% of its budget"
    )
    note, stop = _ends(second)
    assert stop == "budget_exhausted"
    assert note.startswith("budget.maxSessionTokens: 10020 of 10000 tokens used;")
    assert [e["type"] for e in second[-2:]] == ["addendum", "turn_end"]
    assert second[-1]["total_tokens"] == 1510
    # Over the limit, the next turn asks the model nothing.
    note, stop = _ends(third)
    assert stop == "budget_exhausted"
    assert "would reach the limit, so it was not sent" in note
    assert [e["type"] for e in third] == ["addendum", "turn_end"]
    assert len(model_requests(server)) == 2
    assert verify(lines, turns=3) == []


def test_the_stop_after_a_round_with_tool_calls_runs_none_of_them(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    (ws.project / "notes.txt").write_text("notes", encoding="utf-8")
    costly = msgspec.structs.replace(
        calls(("c1", "read_file", {"path": "notes.txt"})),
        usage=ScriptUsage(input_tokens=2_500, output_tokens=5),
    )
    server.add(costly, text("Never sent."))
    _budget(ws.use(server).allow_all(), "budget:\n  maxSessionTokens: 2000\n")
    with ws.start("run", "--server") as proc:
        assert proc.next_event()["type"] == "session_started"
        events = proc.turn("read it")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    note, stop = _ends(events)
    assert stop == "budget_exhausted"
    assert note.startswith("budget.maxSessionTokens: 2505 of 2000 tokens used;")
    assert not [e for e in events if e["type"] == "tool_start"]
    assert len(model_requests(server)) == 1


def test_a_resumed_session_keeps_what_it_spent(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("One.", usage=(6_000, 10)), text("Two.", usage=(2_000, 10)))
    _budget(ws.use(server), "budget:\n  maxSessionTokens: 10000\n")
    spent: list[tuple[str, str | None]] = []
    for prompt in ("one", "two"):  # two processes, one session
        with ws.start("run", "--server", "--session-id", "kept") as proc:
            assert proc.next_event()["type"] == "session_started"
            spent.append(_ends(proc.turn(prompt)))
            proc.send({"type": "shutdown"})
            assert proc.wait() == 0, proc.stderr
    assert spent[0] == ("", "completed")
    # 2010 tokens alone are far from the warning; with the first process's 6010 they pass 80%.
    assert spent[1] == (
        "budget.maxSessionTokens: 8020 of 10000 tokens used: the session has used 80% of its budget",
        "completed",
    )


def test_without_stop_on_limit_the_limit_is_only_said(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("One.", usage=(120, 10)), text("Two.", usage=(120, 10)))
    _budget(ws.use(server), "budget:\n  maxSessionTokens: 100\n  stopOnLimit: false\n")
    with ws.start("run", "--server") as proc:
        assert proc.next_event()["type"] == "session_started"
        first, second = proc.turn("one"), proc.turn("two")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    assert _ends(first) == (
        "budget.maxSessionTokens: 130 of 100 tokens used: the session reached its budget (stopOnLimit is off)",
        "completed",
    )
    assert _ends(second) == ("", "completed")


def test_json_output_shows_the_cost_of_a_known_model(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Priced.", usage=(1_000, 200)))
    result = ws.use(server).run("-p", "hi", "-o", "json", env={"OPENAI_MODEL": "gpt-4o"})
    assert result.code == 0, result
    document = result.document()
    expected = float(
        calc_price(Usage(input_tokens=1_000, output_tokens=200), "gpt-4o", provider_id="openai").total_price
    )
    assert expected > 0
    assert document["cost_usd"] == expected
    assert document["cost"] == f"${expected:.4f}"


def test_json_output_says_cost_unknown_for_an_unknown_model(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Unpriced.", usage=(1_000, 200)))
    result = ws.use(server).run("-p", "hi", "-o", "json")
    assert result.code == 0, result
    assert (result.document()["cost_usd"], result.document()["cost"]) == (None, "cost unknown")


def test_a_cost_limit_stops_a_priced_session(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Dear.", usage=(100_000, 10_000)), text("Never sent."))
    _budget(ws.use(server), "budget:\n  maxSessionCost: 0.05\n")
    result = ws.run("-p", "hi", "-o", "json", env={"OPENAI_MODEL": "gpt-4o"})
    assert result.code == 2, result  # stopped short
    document = result.document()
    assert document["stop_reason"] == "budget_exhausted"
    assert document["cost_usd"] > 0.05
    assert len(model_requests(server)) == 1


def test_a_budget_of_zero_is_refused_with_its_line(ws: Workspace, server: ScriptedModelServer) -> None:
    config = ws.project / ".hive" / "config.yaml"
    for yaml_text, line, key in (
        ("budget:\n  maxSessionTokens: 0\n", 2, "maxSessionTokens"),
        ("budget:\n  stopOnLimit: true\n  maxSessionCost: 0\n", 3, "maxSessionCost"),
        ("budget:\n  warnAtPercent: 150\n", 2, "warnAtPercent"),
    ):
        _budget(ws.use(server), yaml_text)
        result = ws.run("-p", "hi")
        assert result.code != 0, result
        assert f"{config}:{line}" in result.stderr, result.stderr
        assert key in result.stderr
    assert model_requests(server) == []


def test_tokens_shows_the_session_cost_or_says_it_is_unknown(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Priced.", usage=(1_000, 200)), text("Unpriced.", usage=(1_000, 200)))
    expected = float(
        calc_price(Usage(input_tokens=1_000, output_tokens=200), "gpt-4o", provider_id="openai").total_price
    )
    ws.use(server).env["OPENAI_MODEL"] = "gpt-4o"
    with ws.prompt() as term:
        term.enter("hi", "Priced.")
        term.enter("/tokens", f"this session: 1200 tokens, ${expected:.4f}")
        term.type("/exit\r")
        assert term.wait() == 0
    ws.env["OPENAI_MODEL"] = "scripted"
    with ws.prompt() as term:
        term.enter("hi", "Unpriced.")
        term.enter("/tokens", "this session: 1200 tokens, cost unknown (no price for openai/scripted)")
        term.type("/exit\r")
        assert term.wait() == 0
