"""Layering: global < project < .env < environment, the merge rules, origins and defaults."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hive_core.config import LoadedConfig
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA
from hive_providers.registry import configured_providers
from hive_providers.registry import provider_settings

Write = Callable[[Path, str], Path]

LAYERS = ("global", "project", "dotenv", "env")


Load = Callable[..., LoadedConfig]


@pytest.fixture
def load(home: Path, project: Path, env: dict[str, str], write: Write) -> Load:
    """Write the layers given (``global_yaml``, ``project_yaml``, ``dotenv``) and load the configuration with
    ``env`` as it is when called."""

    def loader(
        *, global_yaml: str | None = None, project_yaml: str | None = None, dotenv: str | None = None
    ) -> LoadedConfig:
        if global_yaml is not None:
            write(home / "config.yaml", global_yaml)
        if project_yaml is not None:
            write(project / ".hive" / "config.yaml", project_yaml)
        if dotenv is not None:
            write(project / ".env", dotenv)
        return load_config(project, env, schema=CONFIG_SCHEMA, trusted=True)

    return loader


@pytest.mark.parametrize("top", range(len(LAYERS)))
def test_text_each_layer_beats_the_ones_below(
    load: Load, project: Path, env: dict[str, str], top: int
) -> None:
    present = LAYERS[: top + 1]
    if "env" in present:
        env["OPENAI_MODEL"] = "from-env"
    loaded = load(
        global_yaml="openai:\n  model: from-global\n",
        project_yaml="openai:\n  model: from-project\n" if "project" in present else None,
        dotenv="OPENAI_MODEL=from-dotenv\n" if "dotenv" in present else None,
    )
    assert loaded.get("openai.model") == f"from-{LAYERS[top]}"
    origin = loaded.origin("openai.model")
    assert origin is not None
    assert origin.layer == LAYERS[top]


@pytest.mark.parametrize("top_value", [True, False])
@pytest.mark.parametrize("top", range(len(LAYERS)))
def test_booleans_each_layer_beats_the_ones_below(
    load: Load, project: Path, env: dict[str, str], top: int, top_value: bool
) -> None:
    # Alternate the value down the layers so that every layer changes it.
    values = [top_value if (top - index) % 2 == 0 else not top_value for index in range(len(LAYERS))]
    present = LAYERS[: top + 1]
    if "env" in present:
        env["OLLAMA_ENABLED"] = str(values[3]).lower()
    loaded = load(
        global_yaml=f"ollama:\n  enabled: {str(values[0]).lower()}\n",
        project_yaml=f"ollama:\n  enabled: {str(values[1]).lower()}\n" if "project" in present else None,
        dotenv=f"OLLAMA_ENABLED={str(values[2]).upper()}\n" if "dotenv" in present else None,
    )
    assert loaded.get("ollama.enabled") is top_value
    assert ("ollama" in [s.provider for s in configured_providers(loaded)]) is top_value
    origin = loaded.origin("ollama.enabled")
    assert origin is not None
    assert origin.layer == LAYERS[top]


def test_false_overwrites_true(load: Load, env: dict[str, str]) -> None:
    env["LMSUPPLY_ENABLED"] = "False"
    loaded = load(global_yaml="lmsupply:\n  enabled: true\n")
    assert loaded.get("lmsupply.enabled") is False


def test_numbers_project_beats_global(load: Load) -> None:
    loaded = load(
        global_yaml=(
            "chatBehavior:\n  maxOutputTokens: 1000\n  maximumIterationsPerRequest: 4\n"
            "approval:\n  timeoutSeconds: 60\n"
        ),
        project_yaml="chatBehavior:\n  maxOutputTokens: 2000\napproval:\n  timeoutSeconds: 12.5\n",
    )
    assert loaded.get("chatBehavior.maxOutputTokens") == 2000
    assert loaded.get("chatBehavior.maximumIterationsPerRequest") == 4  # merged field by field
    assert loaded.approval_timeout_seconds == 12.5
    assert loaded.chat_behavior.max_output_tokens == 2000
    assert loaded.chat_behavior.maximum_iterations_per_request == 4


@pytest.mark.parametrize(
    ("global_yaml", "project_yaml", "expected"),
    [
        pytest.param(
            "toolRetrieval:\n  stickyToolLimit: 4\n",
            "toolRetrieval:\n  stickyToolLimit: 0\n",
            {"toolRetrieval.stickyToolLimit": 0},
            id="zero is a value, not an absence",
        ),
        # Upstream reset an omitted boolean to its default; here only what a layer writes changes anything.
        pytest.param(
            "ollama:\n  enabled: true\n  model: llama3\n",
            "ollama:\n  model: qwen3\n",
            {"ollama.enabled": True, "ollama.model": "qwen3"},
            id="a layer that omits a boolean leaves it alone",
        ),
        pytest.param(
            "budget:\n  maxSessionCost: 5\n",
            "budget: {}\nskills:\n",
            {"budget.maxSessionCost": 5},
            id="an empty whole section replaces nothing",
        ),
    ],
)
def test_the_project_file_over_the_global_one(
    load: Load, global_yaml: str, project_yaml: str, expected: dict[str, object]
) -> None:
    loaded = load(global_yaml=global_yaml, project_yaml=project_yaml)
    got = {key: loaded.get(key) for key in expected}
    assert [(key, type(value), value) for key, value in got.items()] == [
        (key, type(value), value) for key, value in expected.items()
    ]


def test_empty_text_never_overwrites(load: Load, env: dict[str, str]) -> None:
    env["OPENAI_API_KEY"] = ""
    loaded = load(
        global_yaml="openai:\n  apiKey: sk-global-key-000000\n  model: gpt-a\n",
        project_yaml="openai:\n  apiKey: ''\n  model:\n",
        dotenv="OPENAI_API_KEY=\nOPENAI_MODEL=''\n",
    )
    assert loaded.get("openai.apiKey") == "sk-global-key-000000"
    assert loaded.get("openai.model") == "gpt-a"
    origin = loaded.origin("openai.apiKey")
    assert origin is not None
    assert origin.layer == "global"


def test_empty_text_alone_is_kept_but_means_unset(load: Load) -> None:
    loaded = load(global_yaml="ollama:\n  model: ''\n")
    assert provider_settings(loaded, "ollama").model is None


@pytest.mark.parametrize(
    ("section", "lower", "upper", "expected"),
    [
        (
            "budget",
            "budget:\n  maxSessionCost: 5\n  stopOnLimit: false\n",
            "budget:\n  maxSessionTokens: 1000\n",
            {"maxSessionTokens": 1000, "warnAtPercent": 80, "stopOnLimit": True},
        ),
        (
            "skills",
            "skills:\n  roots: [a, b]\n  exclude: [x]\n",
            "skills:\n  roots: [c]\n",
            {"roots": ["c"], "maxMetadataCharacters": 12000, "acceptUnknownFields": False},
        ),
        (
            "permissions",
            "permissions:\n  defaultAction: deny\n  askBeforeDelete: false\n",
            "permissions:\n  read:\n    - pattern: '**/*'\n      action: allow\n",
            {"read": [{"pattern": "**/*", "action": "allow"}]},
        ),
    ],
)
def test_whole_sections_are_replaced_not_merged(
    load: Load, section: str, lower: str, upper: str, expected: dict[str, object]
) -> None:
    loaded = load(global_yaml=lower, project_yaml=upper)
    assert loaded.section(section) == expected
    # Nothing of the lower layer survives, in the values or in their origins.
    assert all(
        origin.layer != "global" for key, origin in loaded.origins.items() if key.startswith(f"{section}.")
    )


def test_other_sections_merge_field_by_field(load: Load) -> None:
    loaded = load(
        global_yaml="advisor:\n  provider: anthropic\n  maxCalls: 2\n",
        project_yaml="advisor:\n  model: claude-x\n",
    )
    assert loaded.section("advisor") == {"provider": "anthropic", "model": "claude-x", "maxCalls": 2}


def test_lists_are_replaced_whenever_set(load: Load) -> None:
    loaded = load(
        global_yaml="compaction:\n  protectedToolOutputs: [read_file]\n",
        project_yaml="compaction:\n  protectedToolOutputs: []\n",
    )
    assert loaded.get("compaction.protectedToolOutputs") == []


def test_defaults_fill_what_no_layer_sets(project: Path, env: dict[str, str]) -> None:
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.files == ()
    assert loaded.chat_behavior.maximum_iterations_per_request == 10
    assert loaded.chat_behavior.max_output_tokens == 4096
    assert loaded.chat_behavior.reasoning_effort is None
    assert loaded.approval_timeout_seconds == 300
    assert loaded.get("lmsupply.enabled") is True
    assert loaded.permissions is None
    assert loaded.default_provider is None
    origin = loaded.origin("chatBehavior.maxOutputTokens")
    assert origin is not None
    assert origin.layer == "default"
    assert str(origin) == "default"


def test_origins_name_file_and_line(home: Path, project: Path, env: dict[str, str], write: Write) -> None:
    env["XAI_MODEL"] = "grok-x"
    global_file = write(home / "config.yaml", "# keys\n\nopenai:\n  model: a\n  apiKey: sk-000000000000\n")
    env_file = write(project / ".env", "# c\n\nANTHROPIC_MODEL=claude\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    api_key = loaded.origin("openai.apiKey")
    assert api_key is not None
    assert (api_key.layer, api_key.source, api_key.line) == ("global", str(global_file), 5)
    assert str(api_key) == f"{global_file}:5"
    anthropic = loaded.origin("anthropic.model")
    assert anthropic is not None
    assert (anthropic.layer, anthropic.source, anthropic.line, anthropic.variable) == (
        "dotenv",
        str(env_file),
        3,
        "ANTHROPIC_MODEL",
    )
    xai = loaded.origin("xai.model")
    assert xai is not None
    assert (xai.layer, xai.variable, str(xai)) == ("env", "XAI_MODEL", "environment XAI_MODEL")
    assert loaded.files == (global_file, env_file)


def test_local_is_an_alias_of_lmsupply(home: Path, project: Path, env: dict[str, str], write: Write) -> None:
    write(home / "config.yaml", "local:\n  enabled: false\n  generatorModel: /models/tiny.gguf\n")
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get("lmsupply.enabled") is False
    assert loaded.get("local.generatorModel") == "/models/tiny.gguf"
    provider = provider_settings(loaded, "local")
    assert (provider.provider, provider.model) == ("local", "/models/tiny.gguf")
    assert "local" not in [s.provider for s in configured_providers(loaded)]


def test_the_project_file_is_not_read_twice_when_it_is_the_global_file(project: Path, write: Write) -> None:
    write(project / ".hive" / "config.yaml", "openai:\n  model: m\n")
    loaded = load_config(project, {"HIVE_HOME": str(project / ".hive")}, schema=CONFIG_SCHEMA)
    assert loaded.files == (project / ".hive" / "config.yaml",)
    origin = loaded.origin("openai.model")
    assert origin is not None
    assert origin.layer == "global"
