"""What a provider is configured with, whatever the source (config files, environment, ``.env``)."""

from __future__ import annotations

import msgspec

__all__ = ["Capabilities", "ProviderSettings"]


class ProviderSettings(msgspec.Struct, frozen=True, kw_only=True):
    """One provider's settings, already merged from every configuration layer."""

    provider: str
    """The provider's canonical name (``openai``, ``anthropic``, ``google``, ``azure``, ``xai``, ``ollama``,
    ``lmstudio``, ``gpustack``, ``local``)."""
    model: str | None = None
    """The model (or Azure deployment) to use."""
    api_key: str | None = None
    """The key, when the provider needs one."""
    endpoint: str | None = None
    """The base URL, when not the provider's default."""
    options: dict[str, str] = msgspec.field(default_factory=dict[str, str])
    """Provider-specific settings by name (``api_version``, ``context_length``, ``model_path``, ``enabled``...)."""
    idle_timeout: float = 120.0
    """Seconds a stream may go without a byte before the request fails with ``timeout``."""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a model adapter can do."""

    tools: bool
    """It accepts tool definitions and returns tool calls."""
    streamed_tool_calls: bool
    """Tool-call arguments arrive in pieces while streaming."""
    thinking: bool
    """It can return reasoning separately from the reply."""
    context_window: int | None = None
    """The model's context window in tokens, when known."""
