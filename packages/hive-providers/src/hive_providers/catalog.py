"""The context windows of the cloud models hive knows, by model-name prefix: the one table of them.

A model name matches the longest prefix of the catalog that it starts with at a word boundary (the name ends
there, or goes on with ``-``, ``.``, ``:``, ``@`` or ``_``), so dated snapshots (``gpt-4o-2024-08-06``,
``claude-sonnet-4-5-20250929``), ``-latest`` aliases and tags (``gpt-oss:20b``) take their family's window,
while ``gpt-4o`` is not read as ``gpt-4``. Case is ignored, and so is a path before the name (``models/`` of
the Gemini API, ``openai/`` of a router). The figure is the input window (what a request may hold), not the
output limit.

Update it when a provider publishes a new family: each provider's table names the documentation page its
figures come from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = ["CATALOG", "DEFAULT_MODELS", "MODEL_ALIASES", "catalog_window", "resolve_model"]

# OpenAI: the model pages of the OpenAI platform documentation ("Models", each model's "Context window").
_OPENAI: Final[Mapping[str, int]] = {
    "gpt-5": 400_000,
    "gpt-5-chat": 128_000,
    "gpt-5.1": 400_000,
    "gpt-5.1-chat": 128_000,
    "gpt-5.2": 400_000,
    "gpt-5.2-chat": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.5": 128_000,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4": 8_192,
    "gpt-4-32k": 32_768,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4-vision": 128_000,
    "gpt-3.5-turbo": 16_385,
    "gpt-3.5-turbo-instruct": 4_096,
    "gpt-oss": 131_072,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
}

# Anthropic: "Models overview" of the Claude documentation (every current model: 200K; the 1M window of some
# Sonnet models is a beta a request must opt in to, so it is not assumed).
_ANTHROPIC: Final[Mapping[str, int]] = {
    "claude": 200_000,
    "claude-opus-4": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3-7-sonnet": 200_000,
    "claude-3-5-sonnet": 200_000,
    "claude-3-5-haiku": 200_000,
    "claude-3-opus": 200_000,
    "claude-3-sonnet": 200_000,
    "claude-3-haiku": 200_000,
    "claude-2.1": 200_000,
    "claude-2.0": 100_000,
    "claude-instant": 100_000,
}

# Google: "Gemini models" of the Gemini API documentation (each model's "Input token limit").
_GEMINI: Final[Mapping[str, int]] = {
    "gemini-3": 1_048_576,
    "gemini-2.5": 1_048_576,
    "gemini-2.5-flash-image": 32_768,
    "gemini-2.0": 1_048_576,
    "gemini-2.0-pro": 2_097_152,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-1.0-pro": 30_720,
    "gemini-pro": 30_720,
    "gemini-flash-latest": 1_048_576,
    "gemini-flash-lite-latest": 1_048_576,
    "gemini-pro-latest": 1_048_576,
}

# xAI: "Models and pricing" of the xAI API documentation.
_XAI: Final[Mapping[str, int]] = {
    "grok-4": 256_000,
    "grok-4-fast": 2_000_000,
    "grok-4-1-fast": 2_000_000,
    "grok-4.1-fast": 2_000_000,
    "grok-code-fast": 256_000,
    "grok-3": 131_072,
    "grok-2": 131_072,
    "grok-2-vision": 32_768,
    "grok-beta": 131_072,
    "grok-vision-beta": 8_192,
}

CATALOG: Final[Mapping[str, int]] = {**_OPENAI, **_ANTHROPIC, **_GEMINI, **_XAI}
"""Model-name prefix (lower case) → context window in tokens, for the OpenAI, Anthropic, Gemini and xAI
families."""

_BOUNDARIES: Final = frozenset("-.:@_")
_LONGEST_FIRST: Final = sorted(CATALOG.items(), key=lambda item: -len(item[0]))


def catalog_window(model: str) -> int | None:
    """The context window of ``model`` by the catalog's longest matching prefix; ``None`` when no family
    matches."""
    name = model.strip().lower().rpartition("/")[2]
    for prefix, window in _LONGEST_FIRST:
        if name.startswith(prefix) and (len(name) == len(prefix) or name[len(prefix)] in _BOUNDARIES):
            return window
    return None


DEFAULT_MODELS: Final[Mapping[str, str]] = {
    "openai": "gpt-5.1",
    "anthropic": "claude-sonnet-4-5",
    "google": "gemini-2.5-flash",
    "xai": "grok-4",
}
"""Provider → the model used when a key is set but no model: each provider's current general-purpose model."""

MODEL_ALIASES: Final[Mapping[str, tuple[str, str]]] = {
    "sonnet": ("anthropic", "claude-sonnet-4-5"),
    "opus": ("anthropic", "claude-opus-4-5"),
    "haiku": ("anthropic", "claude-haiku-4-5"),
    "gpt": ("openai", DEFAULT_MODELS["openai"]),
    "gemini": ("google", DEFAULT_MODELS["google"]),
    "flash": ("google", "gemini-2.5-flash"),
    "pro": ("google", "gemini-2.5-pro"),
    "grok": ("xai", DEFAULT_MODELS["xai"]),
}
"""Short model name (lower case) → (provider, current model id): what ``-m sonnet`` means."""

# Model-name prefix → the provider whose API serves that family. gpt-oss is left out: it is an open-weight
# model run by local servers, not the OpenAI service.
_FAMILIES: Final[Mapping[str, str]] = {
    "gpt": "openai",
    "chatgpt": "openai",
    "o1": "openai",
    "o3": "openai",
    "o4": "openai",
    "codex": "openai",
    "claude": "anthropic",
    "gemini": "google",
    "grok": "xai",
}
_NOT_INFERRED: Final = ("gpt-oss",)


def resolve_model(model: str) -> tuple[str | None, str]:
    """``(provider, model id)`` for a model named on the command line: an alias of :data:`MODEL_ALIASES`
    becomes its current id; a name of a known family (``gpt-*``, ``o3*``, ``claude-*``, ``gemini-*``,
    ``grok-*``...) names its provider; anything else (a local model, a router's ``vendor/model``) has no
    provider (``None``) and stays as given."""
    name = model.strip()
    alias = MODEL_ALIASES.get(name.lower())
    if alias is not None:
        return alias
    lowered = name.lower()
    if "/" in lowered or lowered.startswith(_NOT_INFERRED):
        return None, name
    for prefix, provider in _FAMILIES.items():
        if lowered.startswith(prefix) and (
            len(lowered) == len(prefix) or lowered[len(prefix)] in _BOUNDARIES
        ):
            return provider, name
    return None, name
