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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from typing import Literal
from typing import cast

import msgspec

from hive_core import AsyncClosable
from hive_core import Capabilities
from hive_core import ChatClient
from hive_core import ModelLister
from hive_core.chat import probed_capabilities
from hive_core.config import LoadedConfig
from hive_core.errors import UserError

from .catalog import resolve_model
from .settings import ProviderSettings
from .table import PROVIDERS
from .table import ProviderSpec

__all__ = [
    "MissingSettingError",
    "ProviderChoice",
    "ProviderSelectionError",
    "UnknownProviderError",
    "choose_provider",
    "configured_providers",
    "create_client",
    "fallback_providers",
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


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """The provider chosen, and what the user should be told about the choice."""

    settings: ProviderSettings
    """The chosen provider's settings, the model resolved."""
    notices: tuple[str, ...] = ()
    """Sentences for stderr: the default model picked, a half-configured provider passed over."""


def _missing_text(spec: ProviderSpec, values: Mapping[str, object], *, model_given: bool) -> str:
    return " and ".join(spec.place(key) for key in spec.missing_keys(values, model_given=model_given))


def _named(
    spec: ProviderSpec, values: Mapping[str, object], model: str | None, *, inferred_from: str | None
) -> ProviderSettings:
    """The settings of the provider the user named (or whose model they named), or the error naming what it
    lacks."""
    if spec.name == "local":
        return spec.settings_from(values)
    complete = spec.touched(values) and not spec.missing_keys(values, model_given=model is not None)
    if complete or spec.is_configured(values):
        return spec.settings_from(values)
    if inferred_from is not None:
        raise ProviderSelectionError(
            f"model {inferred_from!r} is served by {spec.title}, which is not set up: set "
            f"{_missing_text(spec, values, model_given=True)}; or pass --provider to send it elsewhere"
        )
    if spec.touched(values):
        raise ProviderSelectionError(
            f"provider {spec.name!r} is half-configured: set {_missing_text(spec, values, model_given=False)}"
        )
    raise ProviderSelectionError(
        f"provider {spec.name!r} is not configured: set {spec.requirement()} "
        f"(or the {spec.section.name} section of config.yaml)"
    )


def choose_provider(
    config: LoadedConfig, provider: str | None = None, model: str | None = None
) -> ProviderChoice:
    """The provider and model to use, from ``--provider`` (``provider``), ``-m`` (``model``) and the
    configuration.

    ``model`` is resolved first (:func:`~hive_providers.catalog.resolve_model`: ``sonnet`` becomes its current
    id). The provider is ``provider`` when given; else the one a known model family names (``gpt-*``,
    ``claude-*``...), unless that provider is not set up at all and ``defaultProvider`` names another; else
    ``defaultProvider``; else the first configured one by priority, local inference last. A provider
    half-configured (a key without the endpoint it needs, an endpoint without its key...) is an error naming
    what is missing when it would otherwise fall back to local inference, a notice when another provider is
    used. Raises :class:`ProviderSelectionError` or :class:`UnknownProviderError`.
    """
    family, resolved = resolve_model(model) if model is not None and model.strip() else (None, None)
    name, inferred_from = provider, None
    if name is None and family is not None:
        spec = provider_spec(family)
        if spec.touched(_section(config, spec)) or config.default_provider is None:
            name, inferred_from = family, model
    if name is None:
        name = config.default_provider
    notices: list[str] = []
    if name is not None:
        spec = provider_spec(name)
        values = _section(config, spec)
        settings = _named(spec, values, resolved, inferred_from=inferred_from)
    else:
        settings = None
        for spec in PROVIDERS:
            values = _section(config, spec)
            if spec.name == "local":
                if spec.is_configured(values):
                    settings = spec.settings_from(values)
                break
            if spec.touched(values) and spec.missing_keys(values, model_given=resolved is not None):
                notices.append(
                    f"{spec.title} is half-configured (missing {_missing_text(spec, values, model_given=False)})"
                )
                continue
            if spec.is_configured(values) or (resolved is not None and spec.touched(values)):
                settings = spec.settings_from(values)
                break
        if notices and (settings is None or settings.provider == "local"):
            # Never a silent fall back to the local model: what is half set up is an error.
            raise ProviderSelectionError(
                "; ".join(notices) + ": set what is missing, or unset its keys to use local inference"
            )
        if settings is None:
            raise ProviderSelectionError(_nothing_configured())
        notices = [f"{notice}; using {settings.provider}" for notice in notices]
    if resolved is not None:
        settings = msgspec.structs.replace(settings, model=resolved)
    elif settings.provider != "local":
        spec = provider_spec(settings.provider)
        values = _section(config, spec)
        model_key = spec.key_of("model")
        set_model = values.get(model_key.name) if model_key is not None else None
        if (
            model_key is not None
            and not (isinstance(set_model, str) and set_model.strip())
            and settings.model
        ):
            notices.append(
                f"{spec.title}: no model set ({spec.place(model_key)}); using {settings.model}, its current default"
            )
    return ProviderChoice(settings, tuple(notices))


def select_provider(config: LoadedConfig, name: str | None = None) -> ProviderSettings:
    """The provider to use: ``name`` (canonical or alias) when given, else the default by priority
    (:func:`choose_provider` without a model, its notices dropped).

    A named provider must be configured, except local inference, which is always available by name (its
    ``enabled`` flag only decides whether it is the fallback). Raises :class:`ProviderSelectionError` with
    what to set, or :class:`UnknownProviderError` listing the known names.
    """
    if name is None:
        return choose_provider(config).settings
    spec = provider_spec(name)
    return _named(spec, _section(config, spec), None, inferred_from=None)


def fallback_providers(config: LoadedConfig) -> tuple[ProviderSettings, ...]:
    """The settings of each provider the ``fallback`` list names, in its order, checked as a named provider is
    (:func:`choose_provider`); a :class:`ProviderSelectionError` names the list's file and line."""
    chain: list[ProviderSettings] = []
    for number, entry in enumerate(config.fallback, 1):
        try:
            chain.append(choose_provider(config, entry.provider, entry.model).settings)
        except ProviderSelectionError as exc:
            origin = config.origin("fallback")
            where = f" ({origin.source}:{origin.line})" if origin and origin.source and origin.line else ""
            raise ProviderSelectionError(f"fallback entry {number}{where}: {exc}") from exc
    return tuple(chain)


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
        hint = ""
        if spec.name == "local":
            from .installation import local_runtime_advice

            hint = f" ({local_runtime_advice()})"
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
