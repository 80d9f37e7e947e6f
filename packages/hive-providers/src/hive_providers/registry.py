"""Choosing a provider and building its client, from the merged configuration and the provider table.

The configuration is a :class:`~hive_core.config.LoadedConfig` loaded with :data:`~hive_providers.CONFIG_SCHEMA`:
files, environment and ``.env`` are already merged there (the loader is the one place variables are read), so
the registry reads each provider's section and nothing else.

The default provider is the first configured one in the table's order (gpustack, openai, anthropic, google,
azure, xai, ollama, lmstudio), then local in-process inference unless ``LMSUPPLY_ENABLED`` (or
``lmsupply.enabled``) turns it off. A client is built by the provider's factory, imported only then, so choosing a
provider imports no provider SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Final, Literal, cast

import msgspec

from hive_core import AsyncClosable, Capabilities, ChatClient, ModelLister
from hive_core.chat import probed_capabilities
from hive_core.config import LoadedConfig
from hive_core.errors import UserError

from .settings import ProviderSettings
from .table import PROVIDERS, ProviderSpec

__all__ = [
    "MissingSettingError",
    "ProviderSelectionError",
    "UnknownProviderError",
    "configured_providers",
    "create_client",
    "list_models",
    "model_capabilities",
    "provider_settings",
    "provider_spec",
    "required_setting",
    "select_provider",
]


class ProviderSelectionError(UserError, ValueError):
    """No usable provider: the one asked for is not configured, or nothing is and local inference is off."""


class UnknownProviderError(ProviderSelectionError):
    """A provider name that is neither a canonical name nor an alias."""


class MissingSettingError(ProviderSelectionError):
    """A client cannot be built: a setting its provider needs is not set."""


_BY_NAME: Final[dict[str, ProviderSpec]] = {
    key: spec for spec in PROVIDERS for key in (spec.name, *spec.aliases)
}


def provider_spec(name: str) -> ProviderSpec:
    """The provider called ``name`` (canonical or alias, any case); else :class:`UnknownProviderError`."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        known = ", ".join(
            f"{spec.name} ({', '.join(spec.aliases)})" if spec.aliases else spec.name for spec in PROVIDERS
        )
        raise UnknownProviderError(f"unknown provider {name!r}; known providers: {known}")
    return found


def _section(config: LoadedConfig, spec: ProviderSpec) -> dict[str, object]:
    if spec.section.name not in config.schema:
        raise ValueError(
            f"the configuration has no {spec.section.name} section: load it with "
            "schema=hive_providers.CONFIG_SCHEMA"
        )
    return config.section(spec.section.name)


def provider_settings(config: LoadedConfig, name: str) -> ProviderSettings:
    """The settings of the provider called ``name`` (canonical or alias), configured or not."""
    spec = provider_spec(name)
    return spec.settings_from(_section(config, spec))


def configured_providers(config: LoadedConfig) -> list[ProviderSettings]:
    """The configured providers' settings in priority order; local inference last, when enabled."""
    configured: list[ProviderSettings] = []
    for spec in PROVIDERS:
        values = _section(config, spec)
        if spec.is_configured(values):
            configured.append(spec.settings_from(values))
    return configured


def _nothing_configured() -> str:
    lines = [
        "No model provider is configured and local inference is turned off (LMSUPPLY_ENABLED=false or "
        "local.enabled: false). Set one of:"
    ]
    lines += [f"  {spec.title}: {spec.requirement()}" for spec in PROVIDERS if spec.name != "local"]
    lines.append("  local inference: LMSUPPLY_ENABLED=true (or unset it)")
    lines.append("or put the matching keys in ~/.hive/config.yaml.")
    return "\n".join(lines)


def select_provider(config: LoadedConfig, name: str | None = None) -> ProviderSettings:
    """The provider to use: ``name`` (canonical or alias) when given, else the default by priority.

    A named provider must be configured, except local inference, which is always available by name (its
    ``enabled`` flag only decides whether it is the fallback). Raises :class:`ProviderSelectionError` with
    what to set, or :class:`UnknownProviderError` listing the known names.
    """
    if name is not None:
        spec = provider_spec(name)
        values = _section(config, spec)
        if spec.name == "local" or spec.is_configured(values):
            return spec.settings_from(values)
        raise ProviderSelectionError(
            f"provider {spec.name!r} is not configured: set {spec.requirement()} "
            f"(or the {spec.section.name} section of config.yaml)"
        )
    configured = configured_providers(config)
    if not configured:
        raise ProviderSelectionError(_nothing_configured())
    return configured[0]


def required_setting(settings: ProviderSettings, name: Literal["model", "api_key", "endpoint"]) -> str:
    """A setting a factory cannot build its client without; :class:`MissingSettingError` naming the variable
    and the key that set it when it is unset or blank."""
    value = getattr(settings, name)
    if isinstance(value, str) and value.strip():
        return value
    raise MissingSettingError(provider_spec(settings.provider).missing(name))


def create_client(settings: ProviderSettings) -> ChatClient:
    """A chat client for ``settings``, importing the provider's adapter (and its SDK) only now."""
    spec = provider_spec(settings.provider)
    module_name, _, attribute = spec.factory.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = " (install hive-providers[local])" if spec.name == "local" else ""
        raise ProviderSelectionError(
            f"the {spec.title} adapter cannot be loaded: module {exc.name!r} is missing{hint}"
        ) from exc
    factory = cast(Callable[[ProviderSettings], ChatClient], getattr(module, attribute))
    return factory(settings)


async def list_models(settings: ProviderSettings) -> list[str]:
    """The models a provider offers (for the ``models`` command); the configured model when it cannot list."""
    client = create_client(settings)
    try:
        if isinstance(client, ModelLister):
            return list(await client.list_models())
        return [settings.model] if settings.model else []
    finally:
        if isinstance(client, AsyncClosable):
            await client.aclose()


async def model_capabilities(settings: ProviderSettings, model: str | None = None) -> Capabilities:
    """What a provider's client can do with ``model`` (default: the configured one), its server asked for the
    window where it can say (for the ``doctor`` and ``models`` commands)."""
    if model is not None:
        settings = msgspec.structs.replace(settings, model=model)
    client = create_client(settings)
    try:
        return await probed_capabilities(client)
    finally:
        if isinstance(client, AsyncClosable):
            await client.aclose()
