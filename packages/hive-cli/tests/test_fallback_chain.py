"""The ``fallback`` list end to end through ``hive run --server``: a provider answering 500 hands the turn to the
next one with a ``fallback`` event on the wire, is skipped by the session's later turns, and a list naming an
unknown provider stops the start with its file and line."""

from __future__ import annotations

from pathlib import Path

from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import scripted_server
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round

# The adapter's own retries of a failed request (its SDK's two) come before the chain moves on.
_REQUESTS_PER_FAILURE = 3


def _broken() -> Round:
    return Round(failure=HttpFailure(status=500, message="the primary is down"))


def _with_fallback(ws: Workspace, primary: ScriptedModelServer, second: ScriptedModelServer) -> Workspace:
    """The session's provider (openai) on ``primary``, and ``xai`` on ``second`` as its one fallback."""
    (ws.project / ".hive" / "config.yaml").write_text(
        f"fallback:\n  - provider: xai\n    model: {MODEL}\n", encoding="utf-8"
    )
    ws.env.update(XAI_API_KEY="second-key", XAI_ENDPOINT=second.url + "/v1")
    return ws.use(primary)


def test_a_failing_provider_falls_back_and_stays_skipped(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(*[_broken()] * _REQUESTS_PER_FAILURE)
    with scripted_server(text("from the second"), text("still the second")) as second:
        with _with_fallback(ws, server, second).serve() as proc:
            first_turn = proc.turn("hello")
            asked_primary = len(model_requests(server))
            next_turn = proc.turn("again")

        assert [event["type"] for event in first_turn] == ["fallback", "text_delta", "turn_end"]
        fallback = first_turn[0]
        assert fallback["kind"] == "fallback"
        assert (fallback["provider_index"], fallback["total_providers"]) == (0, 2)
        assert fallback["category"] == "transient"
        assert "the primary is down" in fallback["message"]
        assert first_turn[1]["content"] == "from the second"
        assert first_turn[-1]["stop_reason"] == "completed"
        assert asked_primary == _REQUESTS_PER_FAILURE

        # The dead provider is not asked again: the next turn goes straight to the second, without an event.
        assert [event["type"] for event in next_turn] == ["text_delta", "turn_end"]
        assert next_turn[0]["content"] == "still the second"
        assert len(model_requests(server)) == asked_primary
        [_, again] = model_requests(second)
        assert again.body["model"] == MODEL
        assert "again" in str(again.body["messages"])


def test_a_working_provider_never_builds_its_fallback(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("fine"))
    with scripted_server() as second:
        with _with_fallback(ws, server, second).serve() as proc:
            events = proc.turn("hello")
        assert [event["type"] for event in events] == ["text_delta", "turn_end"]
        assert second.requests == []


def _refused_start(ws: Workspace, server: ScriptedModelServer, config_text: str) -> tuple[Path, str]:
    """``hive run --server`` with ``config_text`` as the project's config: the file, and what it said on
    stderr before it exited with an error, having asked no model."""
    config = ws.project / ".hive" / "config.yaml"
    config.write_text(config_text, encoding="utf-8")
    with ws.use(server).start("run", "--server") as proc:
        assert proc.wait() != 0
    assert server.requests == []
    return config, proc.stderr


def test_a_fallback_naming_an_unknown_provider_is_refused_with_its_line(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    config, stderr = _refused_start(
        ws, server, "fallback:\n  - provider: xai\n    model: m\n  - provider: nobody\n    model: m\n"
    )
    assert f"{config}:4:" in stderr
    assert "'fallback.1.provider'" in stderr
    assert "'nobody'" in stderr
    assert "xai" in stderr  # the names it could have been


def test_a_fallback_entry_without_a_provider_is_refused(ws: Workspace) -> None:
    config = ws.project / ".hive" / "config.yaml"
    config.write_text("fallback:\n  - model: m\n", encoding="utf-8")
    result = ws.run("config", "show")
    assert result.code != 0
    assert f"{config}:2:" in result.stderr
    assert "'fallback.0' must set 'provider'" in result.stderr


def test_a_fallback_provider_not_set_up_stops_the_start(ws: Workspace, server: ScriptedModelServer) -> None:
    config, stderr = _refused_start(ws, server, "fallback:\n  - provider: anthropic\n")
    assert f"fallback entry 1 ({config}:1)" in stderr
    assert "ANTHROPIC_API_KEY" in stderr


def test_config_show_and_doctor_show_the_chain(ws: Workspace, server: ScriptedModelServer) -> None:
    with scripted_server() as second:
        _with_fallback(ws, server, second)
        shown = ws.run("config", "show")
        doctor = ws.run("doctor")
    assert shown.code == 0, shown.stderr
    assert f'fallback = [{{"provider": "xai", "model": "{MODEL}"}}]' in shown.stdout
    assert f"fallback 1: xai: {MODEL}" in doctor.stdout
