"""Providers as users expect, from the command line: ``OPENAI_BASE_URL`` and ``openai.api: chat`` against a
Chat Completions server, ``-m`` naming its provider and short aliases, the default model of a key without one
announced on stderr, and a half-configured provider refused instead of falling back to the local model."""

from __future__ import annotations

from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import RecordedRequest
from hive_conformance.model_server import ScriptedModelServer
from hive_providers.catalog import DEFAULT_MODELS
from hive_providers.catalog import MODEL_ALIASES


def anthropic_requests(server: ScriptedModelServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.path == "/v1/messages"]


def test_openai_base_url_with_api_chat_talks_chat_completions(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hello", usage=(5, 1)))
    (ws.home / "config.yaml").write_text("openai:\n  api: chat\n", encoding="utf-8")
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_MODEL": "local-model", "OPENAI_BASE_URL": server.url + "/v1"}
    result = ws.run("-p", "hi", "-o", "json", env=env)
    assert result.code == 0, result
    assert result.line_document()["content"] == "Hello"
    [request] = model_requests(server)
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "local-model"
    assert request.headers.get("authorization") == "Bearer sk-test"
    server.assert_consumed()


def test_an_alias_names_the_provider_and_its_model(ws: Workspace, server: ScriptedModelServer) -> None:
    server.add(text("Hi", usage=(5, 1)))
    (ws.home / "config.yaml").write_text(f"anthropic:\n  endpoint: {server.url}\n", encoding="utf-8")
    env = {"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-openai", "OPENAI_MODEL": "gpt-4o"}
    result = ws.run("-p", "hi", "-m", "sonnet", "-o", "json", env=env)
    assert result.code == 0, result
    [request] = anthropic_requests(server)
    assert request.path == "/v1/messages"
    assert request.body["model"] == MODEL_ALIASES["sonnet"][1]


def test_a_key_without_a_model_uses_the_default_model_and_says_so(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    server.add(text("Hi", usage=(5, 1)))
    (ws.home / "config.yaml").write_text(f"anthropic:\n  endpoint: {server.url}\n", encoding="utf-8")
    result = ws.run("-p", "hi", "-o", "json", env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert result.code == 0, result
    [request] = anthropic_requests(server)
    assert request.body["model"] == DEFAULT_MODELS["anthropic"]
    assert DEFAULT_MODELS["anthropic"] in result.stderr
    assert "ANTHROPIC_MODEL" in result.stderr


def test_a_half_configured_provider_is_an_error_not_the_local_model(ws: Workspace) -> None:
    result = ws.run("-p", "hi", env={"AZURE_OPENAI_API_KEY": "k", "LMSUPPLY_ENABLED": "true"})
    assert result.code != 0, result
    assert "AZURE_OPENAI_ENDPOINT" in result.stderr
    assert "AZURE_OPENAI_DEPLOYMENT" in result.stderr
    assert result.stdout == ""


def test_a_model_for_a_provider_without_its_key_is_an_error(ws: Workspace) -> None:
    result = ws.run("-p", "hi", "-m", "gemini-2.5-pro", env={"LMSUPPLY_ENABLED": "true"})
    assert result.code != 0, result
    assert "GOOGLEAI_API_KEY" in result.stderr
