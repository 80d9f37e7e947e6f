"""The OpenAI-compatible family: Azure OpenAI, xAI, Ollama, LM Studio and GPUStack, over Chat Completions.

:func:`from_settings` builds the provider's :class:`~hive_providers.openai_chat.OpenAIChatClient`: how each
server is addressed, which key it is sent and how it spells reasoning efforts is its profile here; what
configures it (keys, variables, default endpoint) is its entry of the provider table. The first-party
``openai`` provider speaks the Responses API instead: :func:`hive_providers.openai_responses.from_settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Final

import httpx2

from ._client import sdk_http_client
from .openai_chat import OpenAIChatClient
from .registry import provider_spec
from .registry import required_setting
from .server_windows import WindowProbe
from .server_windows import gpustack_window
from .server_windows import lmstudio_window
from .server_windows import ollama_window
from .settings import ProviderSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["AZURE_API_VERSION", "COMPATIBLE_EFFORTS", "LMSTUDIO_API_KEY", "from_settings"]

AZURE_API_VERSION: Final = "2024-10-21"
"""The Azure OpenAI data-plane API version used when ``api_version`` is not set."""

LMSTUDIO_API_KEY: Final = "lm-studio"
"""The key sent to LM Studio, which ignores it, when none is configured."""

# Ollama ignores the key; sending one keeps the SDK from falling back to OPENAI_API_KEY and leaking it.
_OLLAMA_API_KEY: Final = "ollama"

# Local servers know low/medium/high; "none" is Ollama's switch for thinking off.
COMPATIBLE_EFFORTS: Final[Mapping[str, str | None]] = {
    "none": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "extra_high": "high",
}
_OLLAMA_EFFORTS: Final[Mapping[str, str | None]] = {**COMPATIBLE_EFFORTS, "none": "none"}
# xAI's reasoning models take "low" or "high".
_XAI_EFFORTS: Final[Mapping[str, str | None]] = {**COMPATIBLE_EFFORTS, "medium": "high"}


def _as_given(endpoint: str) -> str:
    return endpoint


def _with_v1(endpoint: str) -> str:
    # Ollama's OpenAI-compatible API is under /v1, which OLLAMA_ENDPOINT usually leaves out.
    return endpoint if endpoint.endswith("/v1") else endpoint + "/v1"


def _v1_openai(endpoint: str) -> str:
    # GPUStack serves the OpenAI API at <host>/v1-openai; a trailing /v1 or /v1-openai is dropped first.
    for suffix in ("/v1-openai", "/v1"):
        if endpoint.endswith(suffix):
            return endpoint.removesuffix(suffix) + "/v1-openai"
    return endpoint + "/v1-openai"


def _configured_key(settings: ProviderSettings) -> str:
    return required_setting(settings, "api_key")


@dataclass(frozen=True, slots=True)
class _Profile:
    """How one server of the family is addressed and spoken to."""

    base_url: Callable[[str], str]
    """The API's root for the configured endpoint (trailing slashes already removed)."""
    api_key: Callable[[ProviderSettings], str]
    """The key sent."""
    efforts: Mapping[str, str | None]
    """hive's reasoning efforts as the server spells them."""
    max_tokens_field: str = "max_tokens"
    """The output cap's name (``max_tokens`` for servers that do not know ``max_completion_tokens``)."""
    window_probe: WindowProbe | None = None
    """How the server says the model's window (``None``: it does not; the catalog knows a cloud model's)."""


_PROFILES: Final[Mapping[str, _Profile]] = {
    "xai": _Profile(_as_given, _configured_key, _XAI_EFFORTS, "max_completion_tokens"),
    "ollama": _Profile(_with_v1, lambda _: _OLLAMA_API_KEY, _OLLAMA_EFFORTS, window_probe=ollama_window),
    "lmstudio": _Profile(
        _as_given,
        lambda settings: settings.api_key or LMSTUDIO_API_KEY,
        COMPATIBLE_EFFORTS,
        window_probe=lmstudio_window,
    ),
    "gpustack": _Profile(_v1_openai, _configured_key, COMPATIBLE_EFFORTS, window_probe=gpustack_window),
}


def from_settings(settings: ProviderSettings) -> OpenAIChatClient:
    """The client of an OpenAI-compatible provider (``azure``, ``xai``, ``ollama``, ``lmstudio``,
    ``gpustack``) at ``settings.endpoint``, else the provider's default endpoint.

    Raises :class:`~hive_providers.registry.MissingSettingError` naming what the provider lacks.
    """
    if settings.provider == "azure":
        return _azure(settings)
    profile = _PROFILES.get(settings.provider)
    if profile is None:
        raise ValueError(f"{settings.provider!r} is not an OpenAI-compatible provider of hive's")
    model = required_setting(settings, "model")
    api_key = profile.api_key(settings)
    endpoint = settings.endpoint or provider_spec(settings.provider).default_endpoint
    if endpoint is None:
        endpoint = required_setting(settings, "endpoint")
    return OpenAIChatClient(
        model=model,
        api_key=api_key,
        base_url=profile.base_url(endpoint.strip().rstrip("/")),
        context_window=settings.context_length,
        idle_timeout=settings.idle_timeout,
        provider=settings.provider,
        efforts=profile.efforts,
        max_tokens_field=profile.max_tokens_field,
        window_probe=profile.window_probe,
        carry_images=settings.carry_tool_images,
    )


def _azure(settings: ProviderSettings) -> OpenAIChatClient:
    """Azure OpenAI through the SDK's Azure client: ``endpoint`` is the resource URL, ``model`` the deployment,
    ``api_version`` the data-plane version (default :data:`AZURE_API_VERSION`)."""
    endpoint = required_setting(settings, "endpoint").strip().rstrip("/").removesuffix("/openai")
    api_key = required_setting(settings, "api_key")
    model = required_setting(settings, "model")
    api_version = (settings.api_version or "").strip() or AZURE_API_VERSION

    def build(timeout: httpx2.Timeout, max_retries: int) -> AsyncOpenAI:
        from openai import AsyncAzureOpenAI
        from openai import DefaultAsyncHttpxClient

        return AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            api_key=api_key,
            api_version=api_version,
            timeout=timeout,
            max_retries=max_retries,
            http_client=sdk_http_client(DefaultAsyncHttpxClient),
        )

    return OpenAIChatClient(
        model=model,
        context_window=settings.context_length,
        idle_timeout=settings.idle_timeout,
        provider="azure",
        thinking=False,
        sdk_factory=build,
    )
