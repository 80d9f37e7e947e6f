"""The catalog of cloud models' context windows: each family by its longest prefix, dated snapshots and
``-latest`` aliases with their family, word boundaries respected, unknown names unknown; and every adapter
reporting the catalog's figure with its source."""

from __future__ import annotations

import pytest

from hive_providers.anthropic import AnthropicChatClient
from hive_providers.catalog import CATALOG
from hive_providers.catalog import catalog_window
from hive_providers.google import GoogleChatClient
from hive_providers.openai_chat import OpenAIChatClient
from hive_providers.openai_responses import OpenAIResponsesChatClient


@pytest.mark.parametrize(
    ("model", "window"),
    [
        # OpenAI
        ("gpt-5", 400_000),
        ("gpt-5-mini-2025-08-07", 400_000),
        ("gpt-5-codex", 400_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-5.1", 400_000),
        ("gpt-5.1-chat-latest", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4.1-nano-2025-04-14", 1_047_576),
        ("gpt-4o", 128_000),
        ("gpt-4o-mini-2024-07-18", 128_000),
        ("chatgpt-4o-latest", 128_000),
        ("gpt-4-turbo-2024-04-09", 128_000),
        ("gpt-4-1106-preview", 128_000),
        ("gpt-4-0613", 8_192),
        ("gpt-4", 8_192),
        ("gpt-4-32k-0613", 32_768),
        ("gpt-3.5-turbo-0125", 16_385),
        ("gpt-3.5-turbo-instruct", 4_096),
        ("o1", 200_000),
        ("o1-mini-2024-09-12", 128_000),
        ("o1-pro", 200_000),
        ("o3-mini", 200_000),
        ("o3-pro-2025-06-10", 200_000),
        ("o4-mini-deep-research", 200_000),
        ("gpt-oss:20b", 131_072),
        ("openai/gpt-oss-120b", 131_072),
        # Anthropic
        ("claude-opus-4-1-20250805", 200_000),
        ("claude-opus-4-5", 200_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-haiku-4-5", 200_000),
        ("claude-3-7-sonnet-latest", 200_000),
        ("claude-3-5-sonnet-20241022", 200_000),
        ("claude-3-5-haiku-latest", 200_000),
        ("claude-3-opus-20240229", 200_000),
        ("claude-2.0", 100_000),
        ("claude-instant-1.2", 100_000),
        ("claude-opus-5", 200_000),
        # Gemini
        ("gemini-3-pro-preview", 1_048_576),
        ("gemini-2.5-pro", 1_048_576),
        ("models/gemini-2.5-flash-lite", 1_048_576),
        ("gemini-2.5-flash-image-preview", 32_768),
        ("gemini-2.0-flash-001", 1_048_576),
        ("gemini-1.5-pro-002", 2_097_152),
        ("gemini-1.5-flash-8b", 1_048_576),
        ("gemini-1.0-pro", 30_720),
        ("gemini-flash-latest", 1_048_576),
        # xAI
        ("grok-4", 256_000),
        ("grok-4-0709", 256_000),
        ("grok-4-fast-reasoning", 2_000_000),
        ("grok-4-1-fast-non-reasoning", 2_000_000),
        ("grok-code-fast-1", 256_000),
        ("grok-3-mini", 131_072),
        ("grok-2-vision-1212", 32_768),
        # Case is ignored.
        ("GPT-4O", 128_000),
        ("Claude-Sonnet-4", 200_000),
    ],
)
def test_each_family_matches_by_its_longest_prefix(model: str, window: int) -> None:
    assert catalog_window(model) == window


@pytest.mark.parametrize(
    "model",
    [
        "llama3.2",
        "qwen3:8b",
        "mistral-large-latest",
        "gemma-3-27b-it",
        "o1x",
        "gpt-4oo",
        "gemini",
        "scripted",
        "",
    ],
)
def test_names_of_no_known_family_are_unknown(model: str) -> None:
    # "o1x" and "gpt-4oo" start with a prefix but not at a word boundary: they are other models.
    assert catalog_window(model) is None


def test_the_catalog_is_lower_case_and_positive() -> None:
    assert CATALOG
    for prefix, window in CATALOG.items():
        assert prefix == prefix.lower().strip()
        assert window > 0


def test_every_adapter_reports_the_catalog_window_with_its_source() -> None:
    clients = [
        OpenAIResponsesChatClient(model="gpt-4.1-mini", api_key="k"),
        OpenAIChatClient(model="grok-4-0709", api_key="k", provider="xai"),
        AnthropicChatClient(model="claude-sonnet-4-5", api_key="k"),
        GoogleChatClient(model="models/gemini-2.5-pro", api_key="k"),
    ]
    assert [(c.capabilities.context_window, c.capabilities.context_window_source) for c in clients] == [
        (1_047_576, "catalog"),
        (256_000, "catalog"),
        (200_000, "catalog"),
        (1_048_576, "catalog"),
    ]
    unknown = OpenAIChatClient(model="my-finetune", api_key="k")
    assert (unknown.capabilities.context_window, unknown.capabilities.context_window_source) == (None, None)


def test_a_window_the_client_is_built_with_wins_over_the_catalog() -> None:
    client = AnthropicChatClient(model="claude-sonnet-4-5", api_key="k", context_window=50_000)
    assert (client.capabilities.context_window, client.capabilities.context_window_source) == (
        50_000,
        "configured",
    )
