"""``hive doctor`` and ``hive models``: checks and exit codes, and model lists (``hive update``: test_update.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from cli_harness import MODEL
from cli_harness import Workspace
from providers_metadata import metadata_server

from hive_conformance.model_server import ScriptedModelServer
from hive_core.context import DEFAULT_CONTEXT_WINDOW
from hive_core.context import ContextWindow
from hive_core.sandbox import probe_bubblewrap

DEFAULT_WINDOW = ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
"""What a session assumes for a model nobody reports a window for (the scripted server's)."""

OLLAMA_SHOW = {"model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40_960}}
"""Ollama's ``/api/show`` of a model trained with 40,960 tokens."""


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def unreachable_openai() -> dict[str, str]:
    """The variables of an ``openai`` provider whose endpoint is a local port nothing listens on."""
    return {
        "OPENAI_API_KEY": "test",
        "OPENAI_MODEL": MODEL,
        "OPENAI_ENDPOINT": f"http://127.0.0.1:{closed_port()}/v1",
    }


def git_init(path: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q"], cwd=path, env=env, check=True, timeout=30, capture_output=True)


# -- doctor ------------------------------------------------------------------------------------------------------


def test_doctor_passes_with_a_reachable_provider(ws: Workspace, server: ScriptedModelServer) -> None:
    result = ws.use(server).run("doctor")
    assert result.code == 0, result
    out = result.stdout
    for section in ("Configuration", "Providers", "Connectivity", "Environment"):
        assert f"\n{section}\n" in out
    assert f"✓ openai: {MODEL}, window {DEFAULT_WINDOW.describe()}\n" in out
    assert "✓ openai: reachable (1 model(s))" in out
    assert "✗" not in out
    # No global config file and no repository are warnings, never errors.
    assert "! no global config file" in out
    assert "! the project is not a git repository" in out
    assert "Some warnings found." in out
    assert [r.endpoint for r in server.requests] == ["models"]


def test_doctor_fails_with_exit_1_when_nothing_is_configured(ws: Workspace) -> None:
    result = ws.run("doctor")
    assert result.code == 1, result
    assert "✗ no provider configured and local inference is off" in result.stdout
    assert "Some checks failed." in result.stdout


def test_doctor_fails_with_exit_1_when_the_provider_is_unreachable(ws: Workspace) -> None:
    verbose = ws.run("doctor", "--verbose", env=unreachable_openai())
    assert verbose.code == 1, verbose
    assert "Some checks failed." in verbose.stdout
    # --verbose adds the failure's detail under the check.
    detail = verbose.stdout.split("✗ openai: not reachable\n")[1].splitlines()[0]
    assert detail.startswith("      openai: ")
    assert len(detail.strip()) > len("openai: ")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_doctor_passes_on_local_inference_alone(ws: Workspace) -> None:
    git_init(ws.project)
    assert ws.run("set", "chatBehavior.maxOutputTokens", "1024").code == 0
    if not probe_bubblewrap().usable:
        # Without a sandbox the default mode warns; choosing to run unconfined is a passing configuration.
        assert ws.run("set", "sandbox.mode", "off").code == 0
    env = {key: value for key, value in ws.env.items() if key != "LMSUPPLY_ENABLED"}
    ws.env = env
    result = ws.run("doctor")
    assert result.code == 0, result
    assert "✓ Using local inference only" in result.stdout
    # SmolLM2's GGUF header says 8192, which bounds the size the machine's memory allows.
    assert f"✓ local: the default model, window {ContextWindow(8192, 'server').describe()}\n" in result.stdout
    assert "✓ local: reachable (1 model(s))" in result.stdout
    assert "All checks passed!" in result.stdout


# -- models ------------------------------------------------------------------------------------------------------


def test_models_lists_the_providers_models(ws: Workspace, server: ScriptedModelServer) -> None:
    as_json = ws.use(server).run("models", "-o", "json")
    assert as_json.code == 0, as_json
    assert as_json.line_document() == [
        {
            "model_id": MODEL,
            "provider": "openai",
            "display_name": MODEL,
            "is_default": True,
            "context_window": DEFAULT_CONTEXT_WINDOW,
            "context_window_source": "default",
        }
    ]
    as_text = ws.run("models")
    assert (as_text.code, as_text.stdout) == (0, f"* openai     {MODEL}  {DEFAULT_WINDOW.describe()}\n")


def test_models_of_the_local_provider_mark_its_default_model(ws: Workspace) -> None:
    result = ws.run("models", "--provider", "local", "-o", "json")
    assert result.code == 0, result
    [row] = result.line_document()
    assert row["provider"] == "local"
    assert row["model_id"].endswith(".gguf")
    assert row["is_default"] is True
    unknown = ws.run("models", "--provider", "nonsense")
    assert unknown.code == 1
    assert "unknown provider" in unknown.stderr


def test_models_is_exit_1_when_no_provider_answers(ws: Workspace) -> None:
    result = ws.run("models", "-o", "json", env=unreachable_openai())
    assert result.code == 1, result
    assert result.line_document() == []
    assert "could not list models" in result.stderr


def test_doctor_and_models_take_a_catalog_window_and_say_so(ws: Workspace) -> None:
    with ScriptedModelServer(model="gpt-4.1") as server:
        ws.use(server).env["OPENAI_MODEL"] = "gpt-4.1-2025-04-14"
        doctor = ws.run("doctor")
        models = ws.run("models", "-o", "json")
    catalog = ContextWindow(1_047_576, "catalog").describe()
    assert f"✓ openai: gpt-4.1-2025-04-14, window {catalog}\n" in doctor.stdout, doctor
    [row] = models.line_document()
    assert (row["model_id"], row["context_window"], row["context_window_source"]) == (
        "gpt-4.1",
        1_047_576,
        "catalog",
    )


def test_max_context_tokens_is_the_window_when_nothing_reports_one(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    assert ws.run("set", "compaction.maxContextTokens", "65536").code == 0
    doctor = ws.use(server).run("doctor")
    assert f"✓ openai: {MODEL}, window {ContextWindow(65_536, 'configured').describe()}\n" in doctor.stdout
    [row] = ws.run("models", "-o", "json").line_document()
    assert (row["context_window"], row["context_window_source"]) == (65_536, "configured")


def test_doctor_and_models_ask_an_ollama_server_for_the_window(ws: Workspace) -> None:
    listed = {
        "object": "list",
        "data": [{"id": "qwen3:8b", "object": "model", "created": 0, "owned_by": "x"}],
    }
    routes = {"POST /api/show": (200, OLLAMA_SHOW), "GET /v1/models": (200, listed)}
    with metadata_server(routes) as server:
        ws.env.update(OLLAMA_ENABLED="true", OLLAMA_ENDPOINT=server.url, OLLAMA_MODEL="qwen3:8b")
        # The server says more than maxContextTokens: its figure wins.
        assert ws.run("set", "compaction.maxContextTokens", "65536").code == 0
        doctor = ws.run("doctor")
        models = ws.run("models", "-o", "json")
        asked = [seen.body for seen in server.seen if seen.path == "/api/show"]
    assert doctor.code == 0, doctor
    assert f"✓ ollama: qwen3:8b, window {ContextWindow(40_960, 'server').describe()}\n" in doctor.stdout
    assert "✓ ollama: reachable (1 model(s))" in doctor.stdout
    assert models.line_document() == [
        {
            "model_id": "qwen3:8b",
            "provider": "ollama",
            "display_name": "qwen3:8b",
            "is_default": True,
            "context_window": 40_960,
            "context_window_source": "server",
        }
    ]
    assert asked == [{"model": "qwen3:8b"}, {"model": "qwen3:8b"}]
