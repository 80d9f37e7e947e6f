"""The known keys and their defaults, as the seed describes them: hive-core's own, and with the providers'
sections as hive loads them; how a schema is put together."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import SCHEMA
from hive_core.config import ConfigError
from hive_core.config import ConfigSchema
from hive_core.config import EnvVar
from hive_core.config import FieldSpec
from hive_core.config import SectionSpec
from hive_core.config import load_config
from hive_providers import CONFIG_SCHEMA
from hive_providers import PROVIDERS

PROVIDER_SECTIONS = [spec.section.name for spec in PROVIDERS]

SEED_TOP_LEVEL_KEYS = {
    "gpuStack",
    "openai",
    "anthropic",
    "googleai",
    "azureopenai",
    "xai",
    "ollama",
    "lmstudio",
    "lmsupply",
    "permissions",
    "compaction",
    "webSearch",
    "deepResearch",
    "chatBehavior",
    "advisor",
    "approval",
    "budget",
    "agentsMd",
    "toolRetrieval",
    "delegation",
    "skills",
}

# Defaults from the reference notes (B.3, C.3), written out independently of the schema.
DEFAULTS = {
    "openai.endpoint": "https://api.openai.com/v1",
    "xai.endpoint": "https://api.x.ai/v1",
    "ollama.enabled": False,
    "ollama.endpoint": "http://localhost:11434",
    "lmstudio.enabled": False,
    "lmstudio.endpoint": "http://localhost:1234/v1",
    "lmstudio.carryToolImages": False,
    "gpuStack.carryToolImages": False,
    "lmsupply.enabled": True,
    "chatBehavior.maximumIterationsPerRequest": 10,
    "chatBehavior.maximumConsecutiveErrorsPerRequest": 3,
    "chatBehavior.maxOutputTokens": 4096,
    "compaction.protectRecentTokens": 40000,
    "compaction.minimumPruneTokens": 20000,
    "compaction.targetRatio": 0.70,
    "compaction.useTokenBasedCompaction": True,
    "compaction.thresholdPercentage": 0.92,
    "compaction.enableObservationMasking": True,
    "compaction.observationMaskingProtectedTurns": 3,
    "compaction.observationMaskingMinResultLength": 200,
    "compaction.enableToolResultCompaction": True,
    "compaction.maxToolResultChars": 30000,
    "compaction.toolResultKeepHeadLines": 50,
    "compaction.toolResultKeepTailLines": 20,
    "compaction.useAnchoredCompaction": False,
    "compaction.maxAnchorStateChars": 2000,
    "compaction.compactOnOverflow": True,
    "advisor.maxCalls": 5,
    "approval.timeoutSeconds": 300,
    "sandbox.mode": "auto",
    "sandbox.networkAccess": False,
    "sandbox.passVariables": list[str](),
    "sandbox.writablePaths": list[str](),
    "budget.warnAtPercent": 80,
    "budget.stopOnLimit": True,
    "agentsMd.enabled": True,
    "agentsMd.maxCharacters": 32000,
    "toolRetrieval.enabled": False,
    "toolRetrieval.maxTools": 10,
    "toolRetrieval.minRelevanceScore": 0.3,
    "toolRetrieval.minScoredSlots": 0,
    "toolRetrieval.stickyToolLimit": 0,
    "toolRetrieval.stickyChangeScore": 0.7,
    "delegation.enabled": False,
    "delegation.agentsDirectory": "agents",
    "delegation.maxDepth": 2,
    "delegation.maxConcurrent": 3,
    "skills.maxMetadataCharacters": 12000,
    "skills.acceptUnknownFields": False,
    "webSearch.enabled": True,
    "webSearch.defaultMaxResults": 10,
    "webSearch.maxSitemapEntries": 50,
    "webSearch.searchApiEngine": "google",
    "deepResearch.enabled": False,
    "deepResearch.maxIterations": 5,
}

UNSET = [
    "openai.apiKey",
    "openai.model",
    "anthropic.apiKey",
    "gpuStack.endpoint",
    "lmsupply.generatorModel",  # unset: the packaged model (the seed writes gguf:auto, hive its pick)
    "lmsupply.maxContextLength",
    "chatBehavior.reasoningEffort",
    "chatBehavior.toolCallTimeoutSeconds",
    "advisor.model",
    "budget.maxSessionTokens",
    "budget.maxSessionCost",
    "skills.roots",
    "openai.streamIdleTimeoutSeconds",
    "defaultProvider",
]


def test_every_seed_section_is_known() -> None:
    assert set(CONFIG_SCHEMA) >= SEED_TOP_LEVEL_KEYS
    # hive's own additions: defaultProvider, the command sandbox, where sessions are kept, `hive serve`, and the
    # fallback providers.
    assert set(CONFIG_SCHEMA) - SEED_TOP_LEVEL_KEYS == {
        "defaultProvider",
        "sandbox",
        "sessions",
        "serve",
        "fallback",
    }
    assert CONFIG_SCHEMA.aliases == {"local": "lmsupply"}
    assert set(PROVIDER_SECTIONS) <= set(CONFIG_SCHEMA)


def test_a_fallback_entry_names_a_provider_of_the_table() -> None:
    fallback = CONFIG_SCHEMA["fallback"]
    assert isinstance(fallback, FieldSpec)
    [provider] = [item for item in fallback.items if item.name == "provider"]
    assert provider.required
    assert {"openai", "anthropic", "local", "lmsupply", "claude", "grok"} <= set(provider.choices)
    # hive-core alone knows no provider: its own schema leaves the names unchecked.
    core = SCHEMA["fallback"]
    assert isinstance(core, FieldSpec)
    assert all(not item.choices for item in core.items)


def test_hive_cores_own_schema_has_no_provider_section() -> None:
    assert set(SCHEMA) == set(CONFIG_SCHEMA) - set(PROVIDER_SECTIONS)
    assert list(CONFIG_SCHEMA) == [*PROVIDER_SECTIONS, *SCHEMA]
    assert SCHEMA.aliases == {}
    assert SCHEMA.environment == (EnvVar("HIVE_SESSION_STORE", "sessions.store"),)


def test_whole_replacement_sections() -> None:
    whole = {
        name for name, spec in CONFIG_SCHEMA.items() if isinstance(spec, SectionSpec) and spec.replace_whole
    }
    assert whole == {"permissions", "budget", "skills"}


@pytest.mark.parametrize(("key", "default"), sorted(DEFAULTS.items()))
def test_defaults(project: Path, env: dict[str, str], key: str, default: object) -> None:
    loaded = load_config(project, env, schema=CONFIG_SCHEMA)
    assert loaded.get(key) == default
    assert type(loaded.get(key)) is type(default)


@pytest.mark.parametrize("key", UNSET)
def test_fields_without_a_default_are_unset(project: Path, env: dict[str, str], key: str) -> None:
    assert load_config(project, env, schema=CONFIG_SCHEMA).get(key) is None


def test_the_default_of_protected_tool_outputs_uses_hives_tool_names(
    project: Path, env: dict[str, str]
) -> None:
    # Upstream's default named tools that did not exist (read_file vs ReadFile); hive's tools are snake_case.
    assert load_config(project, env).get("compaction.protectedToolOutputs") == [
        "read_file",
        "grep_files",
        "glob_files",
    ]


def test_remote_provider_sections_take_a_stream_idle_timeout() -> None:
    for name in PROVIDER_SECTIONS:
        spec = CONFIG_SCHEMA[name]
        assert isinstance(spec, SectionSpec)
        assert (spec.field("streamIdleTimeoutSeconds") is not None) is (name != "lmsupply"), name


def test_every_field_is_documented() -> None:
    for spec in CONFIG_SCHEMA.values():
        assert spec.doc
        if isinstance(spec, SectionSpec):
            for field in spec.fields:
                assert isinstance(field, FieldSpec)
                assert field.doc, f"{spec.name}.{field.name}"


DEMO = SectionSpec(
    name="demo",
    doc="A section of a host's.",
    aliases=("sample",),
    fields=(
        FieldSpec(name="model", kind="str", doc="A text.", env=("DEMO_MODEL", "GENERIC_MODEL")),
        FieldSpec(name="enabled", kind="bool", doc="A switch.", default=False, env=("DEMO_ENABLED",)),
        FieldSpec(name="limit", kind="int", doc="A count.", env=("DEMO_LIMIT",)),
    ),
)
HOST = ConfigSchema((DEMO, *SCHEMA.values()))


def test_a_host_schema_adds_its_sections_with_their_aliases_and_variables() -> None:
    assert list(HOST)[:2] == ["demo", "permissions"]
    assert HOST.aliases == {"sample": "demo"}
    assert HOST.canonical_section("SAMPLE") == "demo"
    assert HOST.lookup(("demo", "limit")) == DEMO.fields[2]
    assert HOST.normalize_key("sample.LIMIT") == ("demo", "limit")
    assert HOST.environment == (
        EnvVar("DEMO_MODEL", "demo.model"),
        EnvVar("GENERIC_MODEL", "demo.model"),
        EnvVar("DEMO_ENABLED", "demo.enabled"),
        EnvVar("DEMO_LIMIT", "demo.limit"),
        EnvVar("HIVE_SESSION_STORE", "sessions.store"),
    )
    with pytest.raises(ValueError, match="'sample' is declared twice"):
        ConfigSchema((DEMO, SectionSpec(name="sample", doc="Taken.")))
    with pytest.raises(ConfigError, match="invalid key"):
        HOST.normalize_key("demo..model")


def test_the_environment_sets_the_keys_of_the_schema_it_is_loaded_with(
    project: Path, env: dict[str, str]
) -> None:
    env.update(DEMO_MODEL="", GENERIC_MODEL="generic", DEMO_ENABLED="TRUE", DEMO_LIMIT="lots")
    loaded = load_config(project, env, schema=HOST)
    # The first variable that is set wins; an empty one sets nothing.
    assert loaded.section("sample") == {"model": "generic", "enabled": True}
    origin = loaded.origin("demo.model")
    assert origin is not None
    assert origin.variable == "GENERIC_MODEL"
    [warning] = loaded.warnings
    assert (warning.key, warning.source) == ("demo.limit", "environment")
    assert "DEMO_LIMIT" in str(warning)
    # hive-core's own schema reads no variable at all.
    assert [
        key for key, origin in load_config(project, env).origins.items() if origin.layer != "default"
    ] == []
