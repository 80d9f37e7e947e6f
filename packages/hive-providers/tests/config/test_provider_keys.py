"""Key spelling in the configuration hive reads: camelCase, case and separators folded, section aliases."""

from __future__ import annotations

import pytest

from hive_providers import CONFIG_SCHEMA


@pytest.mark.parametrize(
    ("key", "segments"),
    [
        ("openai.apiKey", ("openai", "apiKey")),
        ("openai.api_key", ("openai", "apiKey")),
        ("OpenAI.APIKEY", ("openai", "apiKey")),
        ("chatBehavior.max-output-tokens", ("chatBehavior", "maxOutputTokens")),
        ("gpustack.endpoint", ("gpuStack", "endpoint")),
        ("local", ("lmsupply",)),
        (" deep_research . tavily_api_key ", ("deepResearch", "tavilyApiKey")),
        ("some_tool.nested_thing.x", ("someTool", "nestedThing", "x")),
        ("permissions.read_only_tools", ("permissions", "readOnlyTools")),
    ],
)
def test_normalize_key(key: str, segments: tuple[str, ...]) -> None:
    assert CONFIG_SCHEMA.normalize_key(key) == segments
