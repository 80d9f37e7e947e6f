"""The offline recipes: each writes what its CLI reads into the private home, nothing outside it, and returns an
environment that points the CLI there, at the endpoint, in a mode that asks before running tools."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hive_providers.backends.kit.errors import BackendUnavailable
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import ModelEndpoint
from hive_providers.backends.offline import OFFLINE_RECIPES
from hive_providers.backends.offline import OfflineContext
from hive_providers.backends.offline import prepare_offline
from hive_providers.backends.registry import resolve_backend

ENDPOINT = ModelEndpoint(base_url="http://127.0.0.1:4567/v1", model="tiny-model", api_key="k-123")


def run(name: str, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    env = OFFLINE_RECIPES[name](OfflineContext(home=home, cwd=cwd, endpoint=ENDPOINT))
    return home, env


def files_under(root: Path) -> set[Path]:
    return {path.relative_to(root) for path in root.rglob("*") if path.is_file()}


@pytest.mark.parametrize("name", sorted(OFFLINE_RECIPES))
def test_every_recipe_writes_only_under_the_home_and_points_the_environment_there(
    name: str, tmp_path: Path
) -> None:
    home, env = run(name, tmp_path)
    assert files_under(tmp_path / "project") == set()
    assert {path.parts[0] for path in files_under(tmp_path)} <= {"home"}
    assert env["HOME"] == str(home)
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        assert Path(env[variable]).is_relative_to(home)
    for variable, value in env.items():
        if variable.endswith(("_HOME", "_CONFIG", "_DIR")):
            assert Path(value).is_relative_to(home), variable
    assert all(isinstance(value, str) for value in env.values())


def test_every_offline_backend_has_a_recipe() -> None:
    for name in OFFLINE_RECIPES:
        assert resolve_backend(name).offline, name


def test_gemini_uses_the_api_key_auth_and_the_endpoint_root(tmp_path: Path) -> None:
    home, env = run("gemini", tmp_path)
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert settings["model"]["name"] == "tiny-model"
    assert env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:4567"
    assert env["GEMINI_API_KEY"] == "k-123"
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    # No approval mode is configured: its default mode asks.
    assert "approvalMode" not in json.dumps(settings)


def test_copilot_is_offline_with_its_own_provider(tmp_path: Path) -> None:
    _home, env = run("copilot", tmp_path)
    assert env["COPILOT_OFFLINE"] == "true"
    assert env["COPILOT_PROVIDER_BASE_URL"] == ENDPOINT.base_url
    assert env["COPILOT_PROVIDER_API_KEY"] == "k-123"
    assert env["COPILOT_MODEL"] == "tiny-model"
    assert Path(env["COPILOT_HOME"]).is_dir()
    assert not any("allow" in variable.lower() for variable in env)


def test_opencode_gets_a_local_provider_that_asks_for_commands_and_edits(tmp_path: Path) -> None:
    home, env = run("opencode", tmp_path)
    config = json.loads(Path(env["OPENCODE_CONFIG"]).read_text())
    assert Path(env["OPENCODE_CONFIG"]).is_relative_to(home)
    provider = config["provider"]["local"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"] == {"baseURL": ENDPOINT.base_url, "apiKey": "k-123"}
    assert provider["models"]["tiny-model"]["tool_call"] is True
    assert config["model"] == "local/tiny-model"
    assert config["permission"]["bash"] == "ask"
    assert config["permission"]["edit"] == "ask"
    assert env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"


def test_kimi_is_in_manual_permission_mode(tmp_path: Path) -> None:
    _home, env = run("kimi", tmp_path)
    config = tomllib.loads((Path(env["KIMI_CODE_HOME"]) / "config.toml").read_text())
    assert config["default_permission_mode"] == "manual"
    assert config["telemetry"] is False
    assert config["default_model"] == "local/tiny-model"
    assert config["providers"]["local"] == {
        "type": "openai",
        "base_url": ENDPOINT.base_url,
        "api_key": "k-123",
    }
    model: dict[str, Any] = config["models"]["local/tiny-model"]
    assert model["provider"] == "local"
    assert model["model"] == "tiny-model"
    assert model["max_context_size"] == ENDPOINT.context_window


def test_reasonix_keeps_its_key_only_in_its_dotenv(tmp_path: Path) -> None:
    home, env = run("reasonix", tmp_path)
    config = tomllib.loads((home / ".reasonix" / "config.toml").read_text())
    [provider] = config["providers"]
    assert config["default_model"] == provider["name"] == "local"
    assert provider["kind"] == "openai"
    assert provider["base_url"] == ENDPOINT.base_url
    assert provider["model"] == "tiny-model"
    assert (home / ".reasonix" / ".env").read_text() == f"{provider['api_key_env']}=k-123\n"
    assert "k-123" not in (home / ".reasonix" / "config.toml").read_text()
    assert config["permissions"]["mode"] == "ask"
    assert env["REASONIX_TELEMETRY"] == "0"


def test_hermes_gets_a_custom_provider_with_at_least_its_minimum_context(tmp_path: Path) -> None:
    _home, env = run("hermes", tmp_path)
    config = yaml.safe_load((Path(env["HERMES_HOME"]) / "config.yaml").read_text())
    assert config["model"]["provider"] == "custom"
    assert config["model"]["base_url"] == ENDPOINT.base_url
    assert config["model"]["default"] == "tiny-model"
    assert config["model"]["api_key"] == "k-123"
    assert config["model"]["context_length"] >= 65536


def test_deepagents_reads_its_key_from_the_environment(tmp_path: Path) -> None:
    home, env = run("deepagents", tmp_path)
    config = tomllib.loads((home / ".deepagents" / "config.toml").read_text())
    assert config["models"]["default"] == "openai:tiny-model"
    provider = config["models"]["providers"]["openai"]
    assert provider["base_url"] == ENDPOINT.base_url
    assert env[provider["api_key_env"]] == "k-123"


def test_codebuddy_gets_the_full_chat_completions_url(tmp_path: Path) -> None:
    home, env = run("codebuddy", tmp_path)
    config = json.loads((home / ".codebuddy" / "models.json").read_text())
    [model] = config["models"]
    assert model["id"] == "tiny-model"
    assert model["url"] == "http://127.0.0.1:4567/v1/chat/completions"
    assert model["apiKey"] == "k-123"
    assert model["supportsToolCall"] is True
    assert config["availableModels"] == ["tiny-model"]
    assert env["CODEBUDDY_API_KEY"] == "k-123"


def test_prepare_offline_defaults_to_a_home_under_the_hive_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_HOME", str(tmp_path / "hive"))
    options = BackendOptions(cwd=tmp_path, endpoint=ENDPOINT)
    env = prepare_offline(resolve_backend("opencode"), options)
    home = tmp_path / "hive" / "agents" / "opencode" / "home"
    assert env["HOME"] == str(home)
    assert Path(env["OPENCODE_CONFIG"]).is_file()


def test_prepare_offline_uses_the_given_home(tmp_path: Path) -> None:
    options = BackendOptions(cwd=tmp_path, endpoint=ENDPOINT, home=tmp_path / "private" / "home")
    env = prepare_offline(resolve_backend("kimi"), options)
    assert env["HOME"] == str(tmp_path / "private" / "home")
    assert (tmp_path / "private" / "home" / ".kimi-code" / "config.toml").is_file()


def test_prepare_offline_refuses_a_backend_without_a_recipe_or_an_endpoint(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="local model endpoint"):
        prepare_offline(resolve_backend("qodercli"), BackendOptions(cwd=tmp_path, endpoint=ENDPOINT))
    with pytest.raises(BackendUnavailable, match="endpoint"):
        prepare_offline(resolve_backend("opencode"), BackendOptions(cwd=tmp_path, home=tmp_path / "home"))
    assert not (tmp_path / "home").exists()
