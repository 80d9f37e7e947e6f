"""The environment variables read into the configuration, each mapped to its key."""

from __future__ import annotations

from typing import Final

import msgspec

__all__ = ["ENV_VARS", "EnvVar"]


class EnvVar(msgspec.Struct, frozen=True):
    """One variable and the dotted key it sets."""

    name: str
    """The variable's name."""
    key: str
    """The canonical dotted key it sets."""


ENV_VARS: Final = (
    EnvVar("GPUSTACK_ENDPOINT", "gpuStack.endpoint"),
    EnvVar("GPUSTACK_API_KEY", "gpuStack.apiKey"),
    EnvVar("GPUSTACK_MODEL", "gpuStack.model"),
    EnvVar("GPUSTACK_EMBEDDING_MODEL", "gpuStack.embeddingModel"),
    EnvVar("GPUSTACK_RERANK_MODEL", "gpuStack.rerankModel"),
    EnvVar("OPENAI_API_KEY", "openai.apiKey"),
    EnvVar("OPENAI_MODEL", "openai.model"),
    EnvVar("OPENAI_ENDPOINT", "openai.endpoint"),
    EnvVar("ANTHROPIC_API_KEY", "anthropic.apiKey"),
    EnvVar("ANTHROPIC_MODEL", "anthropic.model"),
    # Read before GOOGLEAI_API_KEY so that, in one layer, GOOGLEAI_API_KEY wins when both are set.
    EnvVar("GOOGLE_API_KEY", "googleai.apiKey"),
    EnvVar("GOOGLEAI_API_KEY", "googleai.apiKey"),
    EnvVar("GOOGLEAI_MODEL", "googleai.model"),
    EnvVar("XAI_API_KEY", "xai.apiKey"),
    EnvVar("XAI_MODEL", "xai.model"),
    EnvVar("XAI_ENDPOINT", "xai.endpoint"),
    EnvVar("AZURE_OPENAI_ENDPOINT", "azureopenai.endpoint"),
    EnvVar("AZURE_OPENAI_API_KEY", "azureopenai.apiKey"),
    EnvVar("AZURE_OPENAI_DEPLOYMENT", "azureopenai.deploymentName"),
    EnvVar("OLLAMA_ENDPOINT", "ollama.endpoint"),
    EnvVar("OLLAMA_MODEL", "ollama.model"),
    EnvVar("OLLAMA_ENABLED", "ollama.enabled"),
    EnvVar("LMSTUDIO_ENDPOINT", "lmstudio.endpoint"),
    EnvVar("LMSTUDIO_MODEL", "lmstudio.model"),
    EnvVar("LMSTUDIO_ENABLED", "lmstudio.enabled"),
    EnvVar("LMSUPPLY_ENABLED", "lmsupply.enabled"),
)
"""Every variable read from the environment and from ``.env``, in the order applied within one layer.

``GOOGLE_API_KEY`` is the fallback for ``GOOGLEAI_API_KEY``. ``HIVE_HOME`` is not a key: it moves the hive
home (:func:`~hive_core.config.hive_home`). Values of ``*_ENABLED`` are ``true`` or ``false`` in any case."""
