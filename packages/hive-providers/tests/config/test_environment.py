"""The environment variables of the seed, each mapped to its key (by hive's provider table), from the
environment and from .env: the configuration loader is the one place they are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA

# The exhaustive list of the seed (README and code), written out here independently of the table.
TEXT_VARIABLES = {
    "GPUSTACK_ENDPOINT": "gpuStack.endpoint",
    "GPUSTACK_API_KEY": "gpuStack.apiKey",
    "GPUSTACK_MODEL": "gpuStack.model",
    "OPENAI_API_KEY": "openai.apiKey",
    "OPENAI_MODEL": "openai.model",
    "OPENAI_ENDPOINT": "openai.endpoint",
    # Beyond the seed: the openai SDK's own variable for the endpoint.
    "OPENAI_BASE_URL": "openai.endpoint",
    "ANTHROPIC_API_KEY": "anthropic.apiKey",
    "ANTHROPIC_MODEL": "anthropic.model",
    "GOOGLEAI_API_KEY": "googleai.apiKey",
    "GOOGLE_API_KEY": "googleai.apiKey",
    "GOOGLEAI_MODEL": "googleai.model",
    "XAI_API_KEY": "xai.apiKey",
    "XAI_MODEL": "xai.model",
    "XAI_ENDPOINT": "xai.endpoint",
    "AZURE_OPENAI_ENDPOINT": "azureopenai.endpoint",
    "AZURE_OPENAI_API_KEY": "azureopenai.apiKey",
    "AZURE_OPENAI_DEPLOYMENT": "azureopenai.deploymentName",
    "OLLAMA_ENDPOINT": "ollama.endpoint",
    "OLLAMA_MODEL": "ollama.model",
    "LMSTUDIO_ENDPOINT": "lmstudio.endpoint",
    "LMSTUDIO_MODEL": "lmstudio.model",
}
# Beyond the seed: variables of keys that take one of a few values.
CHOICE_VARIABLES = {"OPENAI_API": ("openai.api", "chat")}
BOOLEAN_VARIABLES = {
    "OLLAMA_ENABLED": ("ollama.enabled", False),
    "LMSTUDIO_ENABLED": ("lmstudio.enabled", False),
    "LMSUPPLY_ENABLED": ("lmsupply.enabled", True),
}


def test_the_table_is_exactly_the_seeds_list() -> None:
    variables = CONFIG_SCHEMA.environment
    expected = set(TEXT_VARIABLES) | set(BOOLEAN_VARIABLES) | set(CHOICE_VARIABLES)
    # hive's own: the session store (sessions.store), which every process a command starts must find too.
    own = {"HIVE_SESSION_STORE"}
    assert {variable.name for variable in variables} == expected | own
    assert not any(
        variable.name.startswith(("HIVE_", "IRONHIVE_")) for variable in variables if variable.name not in own
    )


@pytest.mark.parametrize(("variable", "key"), sorted(TEXT_VARIABLES.items()))
@pytest.mark.parametrize("layer", ["env", "dotenv"])
def test_each_text_variable_sets_its_key(
    project: Path, env: dict[str, str], variable: str, key: str, layer: str
) -> None:
    value = f"value-of-{variable.lower()}"
    if layer == "env":
        env[variable] = value
    else:
        (project / ".env").write_text(f"{variable}={value}\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA, trusted=True)
    assert loaded.get(key) == value
    origin = loaded.origin(key)
    assert origin is not None
    assert (origin.layer, origin.variable) == (layer, variable)
    # It sets that key and nothing else.
    assert [name for name, origin in loaded.origins.items() if origin.layer != "default"] == [key]


@pytest.mark.parametrize(("variable", "key_default"), sorted(BOOLEAN_VARIABLES.items()))
@pytest.mark.parametrize(
    ("text", "expected"), [("true", True), ("TRUE", True), ("False", False), (" false ", False)]
)
def test_each_boolean_variable_sets_its_key(
    project: Path,
    env: dict[str, str],
    variable: str,
    key_default: tuple[str, bool],
    text: str,
    expected: bool,
) -> None:
    key, default = key_default
    assert load_config(project, env, schema=CONFIG_SCHEMA).get(key) is default
    env[variable] = text
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get(key) is expected
    assert loaded.warnings == ()


@pytest.mark.parametrize(("variable", "key_value"), sorted(CHOICE_VARIABLES.items()))
def test_each_choice_variable_sets_its_key(
    project: Path, env: dict[str, str], variable: str, key_value: tuple[str, str]
) -> None:
    key, value = key_value
    env[variable] = value
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get(key) == value
    origin = loaded.origin(key)
    assert origin is not None
    assert origin.variable == variable


@pytest.mark.parametrize("text", ["yes", "1", "on", "enabled"])
def test_a_boolean_that_is_not_true_or_false_is_ignored_with_a_warning(
    project: Path, env: dict[str, str], text: str
) -> None:
    env["LMSUPPLY_ENABLED"] = text
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("lmsupply.enabled") is True  # the default stands
    [warning] = loaded.warnings
    assert warning.key == "lmsupply.enabled"
    assert "LMSUPPLY_ENABLED" in str(warning)


def test_an_empty_boolean_is_not_set(project: Path, env: dict[str, str]) -> None:
    env["OLLAMA_ENABLED"] = ""
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("ollama.enabled") is False
    assert loaded.warnings == ()
    origin = loaded.origin("ollama.enabled")
    assert origin is not None
    assert origin.layer == "default"


def test_googleai_api_key_wins_over_google_api_key(project: Path, env: dict[str, str]) -> None:
    env["GOOGLE_API_KEY"] = "generic-google-key"
    env["GOOGLEAI_API_KEY"] = "specific-googleai-key"
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("googleai.apiKey") == "specific-googleai-key"
    env["GOOGLEAI_API_KEY"] = ""
    assert load_config(project, env, schema=CONFIG_SCHEMA).get("googleai.apiKey") == "generic-google-key"


def test_the_environment_wins_over_dotenv_even_in_a_trusted_project(
    project: Path, env: dict[str, str]
) -> None:
    env["OPENAI_API_KEY"] = "from-the-environment"
    env["ANTHROPIC_MODEL"] = "env-only"
    (project / ".env").write_text("OPENAI_API_KEY=from-dotenv\nOPENAI_MODEL=dotenv-only\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA, trusted=True)
    assert loaded.get("openai.apiKey") == "from-the-environment"
    assert loaded.get("anthropic.model") == "env-only"
    assert loaded.get("openai.model") == "dotenv-only"


def test_dotenv_is_read_not_loaded_into_the_environment(project: Path, env: dict[str, str]) -> None:
    (project / ".env").write_text("OPENAI_MODEL=m\nUNRELATED=x\n")
    before = dict(env)
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert env == before
    assert loaded.dotenv == {"OPENAI_MODEL": "m", "UNRELATED": "x"}


def test_hive_home_in_dotenv_is_ignored_with_a_warning(
    project: Path, env: dict[str, str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.yaml").write_text("openai:\n  model: wrong-home\n")
    (project / ".env").write_text(f"# moved?\nHIVE_HOME={elsewhere}\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.home == Path(env["HIVE_HOME"])
    assert loaded.get("openai.model") is None
    [warning] = loaded.warnings
    assert (warning.source, warning.line, warning.key) == (str(project / ".env"), 2, "HIVE_HOME")


def test_unrelated_variables_are_ignored(project: Path, env: dict[str, str]) -> None:
    env.update({"IRONHIVE_OPENAI_API_KEY": "x", "OPENAI_ORG_ID": "y", "PATH": "/bin"})
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert [name for name, origin in loaded.origins.items() if origin.layer != "default"] == []
    assert loaded.warnings == ()
