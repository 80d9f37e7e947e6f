"""The known keys and their defaults, as the seed describes them."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive_core.config import PROVIDER_SECTIONS, SCHEMA, SECTION_ALIASES, FieldSpec, SectionSpec, load_config

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
    "lmsupply.generatorModel": "gguf:auto",
    "lmsupply.embedderModel": "auto",
    "lmsupply.rerankerModel": "auto",
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
    "budget.warningThreshold": 0.8,
    "budget.stopOnLimit": True,
    "agentsMd.enabled": True,
    "agentsMd.maxCharacters": 32000,
    "toolRetrieval.enabled": False,
    "toolRetrieval.maxTools": 10,
    "toolRetrieval.minRelevanceScore": 0.3,
    "toolRetrieval.stickyToolLimit": 0,
    "toolRetrieval.stickyChangeScore": 0.7,
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
    assert set(SCHEMA) >= SEED_TOP_LEVEL_KEYS
    assert set(SCHEMA) - SEED_TOP_LEVEL_KEYS == {"defaultProvider"}
    assert SECTION_ALIASES == {"local": "lmsupply"}
    assert set(PROVIDER_SECTIONS) <= set(SCHEMA)


def test_whole_replacement_sections() -> None:
    whole = {name for name, spec in SCHEMA.items() if isinstance(spec, SectionSpec) and spec.replace_whole}
    assert whole == {"permissions", "budget", "skills"}


@pytest.mark.parametrize(("key", "default"), sorted(DEFAULTS.items()))
def test_defaults(project: Path, env: dict[str, str], key: str, default: object) -> None:
    loaded = load_config(project, env)
    assert loaded.get(key) == default
    assert type(loaded.get(key)) is type(default)


@pytest.mark.parametrize("key", UNSET)
def test_fields_without_a_default_are_unset(project: Path, env: dict[str, str], key: str) -> None:
    assert load_config(project, env).get(key) is None


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
        spec = SCHEMA[name]
        assert isinstance(spec, SectionSpec)
        assert (spec.field("streamIdleTimeoutSeconds") is not None) is (name != "lmsupply"), name


def test_every_field_is_documented() -> None:
    for spec in SCHEMA.values():
        assert spec.doc
        if isinstance(spec, SectionSpec):
            for field in spec.fields:
                assert isinstance(field, FieldSpec)
                assert field.doc, f"{spec.name}.{field.name}"
