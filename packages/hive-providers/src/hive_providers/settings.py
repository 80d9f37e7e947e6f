"""What a model adapter is built from: one provider's settings, typed, whatever layer they came from."""

from __future__ import annotations

from typing import Literal

import msgspec

__all__ = ["ProviderSettings", "SettingName"]

SettingName = Literal[
    "model",
    "api_key",
    "endpoint",
    "api_version",
    "api",
    "context_length",
    "idle_timeout",
    "carry_tool_images",
]
"""A field of :class:`ProviderSettings` that a configuration key sets."""


class ProviderSettings(msgspec.Struct, frozen=True, kw_only=True):
    """One provider's settings: merged from every configuration layer by the registry, or written by hand to
    build a client directly."""

    provider: str
    """The provider's canonical name (``openai``, ``anthropic``, ``google``, ``azure``, ``xai``, ``ollama``,
    ``lmstudio``, ``gpustack``, ``local``)."""
    model: str | None = None
    """The model (the deployment for Azure OpenAI, the GGUF file for local inference); ``None``: the
    provider's default, where it has one."""
    api_key: str | None = None
    """The key, when the provider needs one."""
    endpoint: str | None = None
    """The base URL; ``None``: the provider's default."""
    api_version: str | None = None
    """Azure OpenAI's data-plane API version; ``None``: the adapter's default."""
    api: str | None = None
    """The OpenAI API the ``openai`` provider speaks, ``responses`` or ``chat``; ``None``: Responses for the
    OpenAI service, Chat Completions for any other endpoint."""
    context_length: int | None = None
    """The model's context window in tokens (for local inference, the size it is loaded with); ``None``: the
    adapter's knowledge of the model (local inference: sized from the machine's memory)."""
    idle_timeout: float = 120.0
    """Seconds a stream may go without a byte before the request fails with ``timeout``."""
    carry_tool_images: bool = True
    """Send the images tools return to the model as images (after the tool results); off, the model reads
    only the line of text that names each image. The local servers' ``carryToolImages`` sets it (off by
    default there: the model a server has loaded may not take images); every other provider carries them."""
