"""``hive doctor`` chooses the provider as a run does: the error every run would stop with is reported (exit 1),
never a ✓ over it; a working choice is named."""

from __future__ import annotations

from cli_harness import Workspace

from hive_conformance.model_server import ScriptedModelServer


def test_doctor_reports_the_half_configured_provider_a_run_fails_on(ws: Workspace) -> None:
    # Local inference on and ready, and OpenAI half set up: every run fails, so doctor must say so.
    del ws.env["LMSUPPLY_ENABLED"]
    ws.env["OPENAI_MODEL"] = "gpt-4o"
    run = ws.run("-p", "hello")
    assert run.code == 1, run
    assert "half-configured" in run.stderr, run

    result = ws.run("doctor")
    assert result.code == 1, result
    assert "✗ a run would fail: OpenAI is half-configured" in result.stdout, result
    assert "OPENAI_API_KEY" in result.stdout
    assert "Using local inference only" not in result.stdout
    assert "Some checks failed." in result.stdout


def test_doctor_names_the_provider_a_run_uses(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    result = ws.run("doctor")
    assert "✓ a run uses openai: scripted" in result.stdout, result
    assert "a run would fail" not in result.stdout
