"""The OpenAI-compatible family: Azure OpenAI, xAI, Ollama, LM Studio and GPUStack, over Chat Completions.

Each factory takes the provider's merged :class:`~hive_providers.ProviderSettings` and returns a configured
:class:`~hive_providers.openai_chat.OpenAIChatClient`, or raises ``ValueError`` naming the setting it lacks.
:data:`CONFIGS` records, per provider, the ``config.yaml`` section and keys, the environment variables, the
default endpoint and when the provider counts as configured (seed 000's rules); :func:`configured` applies them.
The first-party ``openai`` provider speaks the Responses API instead:
:func:`hive_providers.openai_responses.from_settings`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final

import httpx2
import msgspec

from ._openai_base import int_option
from .openai_chat import OpenAIChatClient
from .settings import ProviderSettings

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "AZURE_API_VERSION",
    "CONFIGS",
    "DEFAULTS",
    "FACTORIES",
    "LMSTUDIO_API_KEY",
    "ProviderConfig",
    "azure",
    "configured",
    "gpustack",
    "lmstudio",
    "ollama",
    "xai",
]

AZURE_API_VERSION: Final = "2024-10-21"
"""The Azure OpenAI data-plane API version used when the ``api_version`` option is not set."""

LMSTUDIO_API_KEY: Final = "lm-studio"
"""The key sent to LM Studio, which ignores it, when none is configured."""

# Ollama ignores the key; sending one keeps the SDK from falling back to OPENAI_API_KEY and leaking it.
_OLLAMA_API_KEY: Final = "ollama"

# Local servers know low/medium/high; "none" is Ollama's switch for thinking off.
_LOCAL_EFFORTS: Final[Mapping[str, str | None]] = {
    "none": None,
    "low": "low",
    "medium": "medium",
    "high": "high",
    "extra_high": "high",
}
_OLLAMA_EFFORTS: Final[Mapping[str, str | None]] = {**_LOCAL_EFFORTS, "none": "none"}
# xAI's reasoning models take "low" or "high".
_XAI_EFFORTS: Final[Mapping[str, str | None]] = {
    "none": None,
    "low": "low",
    "medium": "high",
    "high": "high",
    "extra_high": "high",
}


class ProviderConfig(msgspec.Struct, frozen=True, kw_only=True):
    """How one provider is configured."""

    name: str
    """The canonical provider name (:attr:`ProviderSettings.provider`)."""
    section: str
    """Its section in ``config.yaml``."""
    keys: dict[str, str]
    """Settings field → key inside the section (``options.enabled`` for the enabled flag)."""
    variables: dict[str, str]
    """Settings field → environment variable."""
    default_endpoint: str | None
    """The endpoint used when none is configured (``None``: the endpoint is required, or the SDK's)."""
    required: tuple[str, ...]
    """Settings the client cannot be built without."""
    enabled_flag: bool = False
    """Configured when ``options["enabled"]`` is true, rather than when the required settings are present."""


CONFIGS: Final[dict[str, ProviderConfig]] = {
    "openai": ProviderConfig(
        name="openai",
        section="openai",
        keys={"api_key": "apiKey", "model": "model", "endpoint": "endpoint"},
        variables={"api_key": "OPENAI_API_KEY", "model": "OPENAI_MODEL", "endpoint": "OPENAI_ENDPOINT"},
        default_endpoint="https://api.openai.com/v1",
        required=("api_key", "model"),
    ),
    "azure": ProviderConfig(
        name="azure",
        section="azureopenai",
        keys={"endpoint": "endpoint", "api_key": "apiKey", "model": "deploymentName"},
        variables={
            "endpoint": "AZURE_OPENAI_ENDPOINT",
            "api_key": "AZURE_OPENAI_API_KEY",
            "model": "AZURE_OPENAI_DEPLOYMENT",
        },
        default_endpoint=None,
        required=("endpoint", "api_key", "model"),
    ),
    "xai": ProviderConfig(
        name="xai",
        section="xai",
        keys={"api_key": "apiKey", "model": "model", "endpoint": "endpoint"},
        variables={"api_key": "XAI_API_KEY", "model": "XAI_MODEL", "endpoint": "XAI_ENDPOINT"},
        default_endpoint="https://api.x.ai/v1",
        required=("api_key", "model"),
    ),
    "ollama": ProviderConfig(
        name="ollama",
        section="ollama",
        keys={"options.enabled": "enabled", "endpoint": "endpoint", "model": "model"},
        variables={
            "options.enabled": "OLLAMA_ENABLED",
            "endpoint": "OLLAMA_ENDPOINT",
            "model": "OLLAMA_MODEL",
        },
        default_endpoint="http://localhost:11434/v1",
        required=("model",),
        enabled_flag=True,
    ),
    "lmstudio": ProviderConfig(
        name="lmstudio",
        section="lmstudio",
        keys={"options.enabled": "enabled", "endpoint": "endpoint", "model": "model"},
        variables={
            "options.enabled": "LMSTUDIO_ENABLED",
            "endpoint": "LMSTUDIO_ENDPOINT",
            "model": "LMSTUDIO_MODEL",
        },
        default_endpoint="http://localhost:1234/v1",
        required=("model",),
        enabled_flag=True,
    ),
    "gpustack": ProviderConfig(
        name="gpustack",
        section="gpuStack",
        keys={"endpoint": "endpoint", "api_key": "apiKey", "model": "model"},
        variables={"endpoint": "GPUSTACK_ENDPOINT", "api_key": "GPUSTACK_API_KEY", "model": "GPUSTACK_MODEL"},
        default_endpoint=None,
        required=("endpoint", "api_key", "model"),
    ),
}
"""Every OpenAI-API provider's configuration, by canonical name."""

DEFAULTS: Final[dict[str, str | None]] = {name: spec.default_endpoint for name, spec in CONFIGS.items()}
"""Each provider's default endpoint; ``None`` where the endpoint must be configured (Azure, GPUStack). The
``openai`` client leaves an unset endpoint to the SDK, whose default is the one listed."""


def _enabled(settings: ProviderSettings) -> bool:
    # As .NET's bool.TryParse: "true" in any case, surrounding blanks allowed; anything else is false.
    return settings.options.get("enabled", "").strip().lower() == "true"


def _value(settings: ProviderSettings, field: str) -> str | None:
    value: object = getattr(settings, field)
    return value if isinstance(value, str) and value.strip() else None


def configured(settings: ProviderSettings) -> bool:
    """Whether a provider of the family (or ``openai``) counts as configured: Ollama and LM Studio when
    enabled, the others when every required setting is present. ``False`` for providers not listed."""
    spec = CONFIGS.get(settings.provider)
    if spec is None:
        return False
    if spec.enabled_flag:
        return _enabled(settings)
    return all(_value(settings, field) for field in spec.required)


def _require(settings: ProviderSettings, name: str) -> dict[str, str]:
    """The required settings of provider ``name``, or ``ValueError`` naming the first one missing."""
    spec = CONFIGS[name]
    values: dict[str, str] = {}
    for field in spec.required:
        value = _value(settings, field)
        if value is None:
            raise ValueError(
                f"{name}: missing required setting {field!r} ({spec.variables[field]}, "
                f"or {spec.section}.{spec.keys[field]} in config)"
            )
        values[field] = value
    return values


def _endpoint(settings: ProviderSettings, default: str) -> str:
    return (_value(settings, "endpoint") or default).strip().rstrip("/")


def azure(settings: ProviderSettings) -> OpenAIChatClient:
    """Azure OpenAI through the SDK's Azure client: ``endpoint`` is the resource URL, ``model`` the deployment
    name, option ``api_version`` the data-plane version (default :data:`AZURE_API_VERSION`)."""
    values = _require(settings, "azure")
    endpoint = values["endpoint"].rstrip("/").removesuffix("/openai")
    api_key = values["api_key"]
    api_version = settings.options.get("api_version", "").strip() or AZURE_API_VERSION

    def build(timeout: httpx2.Timeout, max_retries: int) -> AsyncOpenAI:
        from openai import AsyncAzureOpenAI

        return AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            api_key=api_key,
            api_version=api_version,
            timeout=timeout,
            max_retries=max_retries,
        )

    return OpenAIChatClient(
        model=values["model"],
        context_window=int_option(settings, "context_length"),
        idle_timeout=settings.idle_timeout,
        provider="azure",
        thinking=False,
        sdk_factory=build,
    )


def xai(settings: ProviderSettings) -> OpenAIChatClient:
    """xAI (Grok) at ``endpoint`` (default ``https://api.x.ai/v1``); needs ``api_key`` and ``model``."""
    values = _require(settings, "xai")
    return OpenAIChatClient(
        model=values["model"],
        api_key=values["api_key"],
        base_url=_endpoint(settings, "https://api.x.ai/v1"),
        context_window=int_option(settings, "context_length"),
        idle_timeout=settings.idle_timeout,
        provider="xai",
        efforts=_XAI_EFFORTS,
    )


def ollama(settings: ProviderSettings) -> OpenAIChatClient:
    """Ollama's OpenAI-compatible API at ``endpoint`` (default ``http://localhost:11434/v1``; ``/v1`` is added
    to an endpoint given without it, as in ``OLLAMA_ENDPOINT=http://localhost:11434``); no key."""
    values = _require(settings, "ollama")
    endpoint = _endpoint(settings, "http://localhost:11434/v1")
    if not endpoint.endswith("/v1"):
        endpoint += "/v1"
    return OpenAIChatClient(
        model=values["model"],
        api_key=_OLLAMA_API_KEY,
        base_url=endpoint,
        context_window=int_option(settings, "context_length"),
        idle_timeout=settings.idle_timeout,
        provider="ollama",
        efforts=_OLLAMA_EFFORTS,
        max_tokens_field="max_tokens",
    )


def lmstudio(settings: ProviderSettings) -> OpenAIChatClient:
    """LM Studio's server at ``endpoint`` (default ``http://localhost:1234/v1``) with the fixed key
    ``lm-studio`` (a configured key is sent instead, for servers that check one)."""
    values = _require(settings, "lmstudio")
    return OpenAIChatClient(
        model=values["model"],
        api_key=_value(settings, "api_key") or LMSTUDIO_API_KEY,
        base_url=_endpoint(settings, "http://localhost:1234/v1"),
        context_window=int_option(settings, "context_length"),
        idle_timeout=settings.idle_timeout,
        provider="lmstudio",
        efforts=_LOCAL_EFFORTS,
        max_tokens_field="max_tokens",
    )


def gpustack(settings: ProviderSettings) -> OpenAIChatClient:
    """GPUStack at ``<host>/v1-openai``: a trailing ``/v1`` or ``/v1-openai`` of the configured endpoint is
    stripped first. Needs ``endpoint``, ``api_key`` and ``model``."""
    values = _require(settings, "gpustack")
    host = values["endpoint"].strip().rstrip("/")
    for suffix in ("/v1-openai", "/v1"):
        if host.endswith(suffix):
            host = host.removesuffix(suffix)
            break
    return OpenAIChatClient(
        model=values["model"],
        api_key=values["api_key"],
        base_url=host + "/v1-openai",
        context_window=int_option(settings, "context_length"),
        idle_timeout=settings.idle_timeout,
        provider="gpustack",
        efforts=_LOCAL_EFFORTS,
        max_tokens_field="max_tokens",
    )


FACTORIES: Final[dict[str, Callable[[ProviderSettings], OpenAIChatClient]]] = {
    "azure": azure,
    "xai": xai,
    "ollama": ollama,
    "lmstudio": lmstudio,
    "gpustack": gpustack,
}
"""The family's factories by canonical provider name."""
