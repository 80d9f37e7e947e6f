"""The provider table: names and aliases, where each provider's settings come from, when it counts as
configured, which one is used by default, and how its client is built.

Settings come from the merged YAML configuration (the seed's section and key names: ``gpuStack``,
``openai``, ``anthropic``, ``googleai``, ``azureopenai``, ``xai``, ``ollama``, ``lmstudio``, ``lmsupply``;
hive's canonical names ``gpustack``, ``google``, ``azure``, ``local`` are accepted as well) with the
environment applied last.
Section and key names match case-insensitively and ignore underscores, so ``apiKey`` and ``api_key`` are the
same key. A later non-empty value overrides an earlier one; an empty string is the same as no value.

The default provider is the first configured one in the seed's priority order (gpustack, openai, anthropic,
google, azure, xai, ollama, lmstudio), then local in-process inference unless ``LMSUPPLY_ENABLED`` (or
``local.enabled``) turns it off. Factories are named as ``"module:function"`` strings and imported when a
client is created, so importing this module imports no provider SDK.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast, runtime_checkable

import msgspec

from hive_core import ChatClient

from .settings import ProviderSettings

__all__ = [
    "PROVIDERS",
    "ConfigField",
    "ProviderSelectionError",
    "ProviderSpec",
    "UnknownProviderError",
    "configured_providers",
    "create_client",
    "is_configured",
    "list_models",
    "parse_bool",
    "provider_spec",
    "resolve_settings",
    "select_provider",
]


class ProviderSelectionError(ValueError):
    """No usable provider: the one asked for is not configured, or nothing is and local inference is off."""


class UnknownProviderError(ProviderSelectionError):
    """A provider name that is neither a canonical name nor an alias."""


@dataclass(frozen=True, slots=True)
class ConfigField:
    """One setting of a provider: where it is read from and where it goes in :class:`ProviderSettings`."""

    target: str
    """``model``, ``api_key``, ``endpoint``, ``idle_timeout``, or the name of an entry of ``options``."""
    keys: tuple[str, ...]
    """Config keys inside the provider's section, most specific first (the first one set wins)."""
    env: tuple[str, ...] = ()
    """Environment variables, first non-empty one wins; they override the config file."""


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider of the table."""

    name: str
    """Canonical name (``ProviderSettings.provider``)."""
    title: str
    """Human-readable name."""
    aliases: tuple[str, ...]
    """Other names accepted wherever a provider is named."""
    sections: tuple[str, ...]
    """Config sections read, in order (a later section overrides an earlier one key by key)."""
    fields: tuple[ConfigField, ...]
    """What the sections and the environment provide."""
    required: tuple[str, ...]
    """Targets that must all be set for the provider to count as configured; empty means "when enabled"."""
    enabled_by_default: bool
    """For providers configured by an ``enabled`` flag: its value when nothing sets it."""
    factory: str
    """``"module:function"``: takes :class:`ProviderSettings`, returns a :class:`~hive_core.ChatClient`."""
    default_endpoint: str | None = None
    """The endpoint the adapter uses when none is configured (for display)."""

    def env_vars(self) -> list[str]:
        """Every environment variable this provider reads."""
        return [name for f in self.fields for name in f.env]

    def requirement_text(self) -> str:
        """What to set to configure it, for error messages."""
        if not self.required:
            flag = next((f.env[0] for f in self.fields if f.target == "enabled" and f.env), None)
            return f"{flag}=true" if flag else f"{self.sections[0]}.enabled: true"
        names: list[str] = []
        for target in self.required:
            found = next(f for f in self.fields if f.target == target)
            names.append(" or ".join(found.env) if found.env else f"{self.sections[0]}.{found.keys[0]}")
        return " + ".join(names)


_IDLE = ConfigField("idle_timeout", ("streamIdleTimeoutSeconds", "idleTimeout"))
_IMAGES = ConfigField("carry_tool_images", ("carryToolImages",))


def _keyed(prefix: str, *, endpoint_env: bool = True) -> tuple[ConfigField, ...]:
    return (
        ConfigField("api_key", ("apiKey",), (f"{prefix}_API_KEY",)),
        ConfigField("model", ("model",), (f"{prefix}_MODEL",)),
        ConfigField("endpoint", ("endpoint",), (f"{prefix}_ENDPOINT",) if endpoint_env else ()),
        _IDLE,
    )


PROVIDERS: Final[tuple[ProviderSpec, ...]] = (
    ProviderSpec(
        name="gpustack",
        title="GPUStack",
        aliases=(),
        sections=("gpuStack",),
        fields=(
            *_keyed("GPUSTACK"),
            ConfigField("embedding_model", ("embeddingModel",), ("GPUSTACK_EMBEDDING_MODEL",)),
            ConfigField("rerank_model", ("rerankModel",), ("GPUSTACK_RERANK_MODEL",)),
            _IMAGES,
        ),
        required=("endpoint", "api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.compatible:gpustack",
    ),
    ProviderSpec(
        name="openai",
        title="OpenAI",
        aliases=(),
        sections=("openai",),
        fields=_keyed("OPENAI"),
        required=("api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.openai_responses:from_settings",
        default_endpoint="https://api.openai.com/v1",
    ),
    ProviderSpec(
        name="anthropic",
        title="Anthropic",
        aliases=("claude",),
        sections=("anthropic", "claude"),
        fields=_keyed("ANTHROPIC", endpoint_env=False),
        required=("api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.anthropic:from_settings",
    ),
    ProviderSpec(
        name="google",
        title="Google AI",
        aliases=("gemini", "googleai"),
        sections=("googleai", "google", "gemini"),
        fields=(
            ConfigField("api_key", ("apiKey",), ("GOOGLEAI_API_KEY", "GOOGLE_API_KEY")),
            ConfigField("model", ("model",), ("GOOGLEAI_MODEL",)),
            ConfigField("endpoint", ("endpoint",)),
            _IDLE,
        ),
        required=("api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.gemini:from_settings",
        default_endpoint="https://generativelanguage.googleapis.com/v1beta/",
    ),
    ProviderSpec(
        name="azure",
        title="Azure OpenAI",
        aliases=("azureopenai",),
        sections=("azureopenai", "azure"),
        fields=(
            ConfigField("endpoint", ("endpoint",), ("AZURE_OPENAI_ENDPOINT",)),
            ConfigField("api_key", ("apiKey",), ("AZURE_OPENAI_API_KEY",)),
            ConfigField("model", ("deploymentName", "deployment", "model"), ("AZURE_OPENAI_DEPLOYMENT",)),
            ConfigField("api_version", ("apiVersion",)),
            _IDLE,
        ),
        required=("endpoint", "api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.compatible:azure",
    ),
    ProviderSpec(
        name="xai",
        title="xAI",
        aliases=("grok",),
        sections=("xai", "grok"),
        fields=_keyed("XAI"),
        required=("api_key", "model"),
        enabled_by_default=False,
        factory="hive_providers.compatible:xai",
        default_endpoint="https://api.x.ai/v1",
    ),
    ProviderSpec(
        name="ollama",
        title="Ollama",
        aliases=(),
        sections=("ollama",),
        fields=(
            ConfigField("enabled", ("enabled",), ("OLLAMA_ENABLED",)),
            ConfigField("endpoint", ("endpoint",), ("OLLAMA_ENDPOINT",)),
            ConfigField("model", ("model",), ("OLLAMA_MODEL",)),
            _IDLE,
            _IMAGES,
        ),
        required=(),
        enabled_by_default=False,
        factory="hive_providers.compatible:ollama",
        default_endpoint="http://localhost:11434",
    ),
    ProviderSpec(
        name="lmstudio",
        title="LM Studio",
        aliases=(),
        sections=("lmstudio",),
        fields=(
            ConfigField("enabled", ("enabled",), ("LMSTUDIO_ENABLED",)),
            ConfigField("endpoint", ("endpoint",), ("LMSTUDIO_ENDPOINT",)),
            ConfigField("model", ("model",), ("LMSTUDIO_MODEL",)),
            _IDLE,
            _IMAGES,
        ),
        required=(),
        enabled_by_default=False,
        factory="hive_providers.compatible:lmstudio",
        default_endpoint="http://localhost:1234/v1",
    ),
    ProviderSpec(
        name="local",
        title="local llama.cpp",
        aliases=("lmsupply",),
        sections=("lmsupply", "local"),
        fields=(
            ConfigField("enabled", ("enabled",), ("LMSUPPLY_ENABLED",)),
            ConfigField("model", ("model", "modelPath", "generatorModel")),
            ConfigField("context_length", ("contextLength", "maxContextLength")),
            ConfigField("threads", ("threads",)),
        ),
        required=(),
        enabled_by_default=True,
        factory="hive_providers.local:from_settings",
    ),
)
"""Every provider, in the default priority order."""

_BY_NAME: Final[dict[str, ProviderSpec]] = {
    key: spec for spec in PROVIDERS for key in (spec.name, *spec.aliases)
}
# The seed's local model ids that mean "whatever the default model is".
_AUTO_MODELS: Final = frozenset({"auto", "default", "gguf:auto", "gguf:default"})
_TRUE: Final = frozenset({"true", "1", "yes", "on"})


def provider_spec(name: str) -> ProviderSpec:
    """The provider called ``name`` (canonical or alias, any case); else :class:`UnknownProviderError`."""
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        known = ", ".join(
            f"{spec.name} ({', '.join(spec.aliases)})" if spec.aliases else spec.name for spec in PROVIDERS
        )
        raise UnknownProviderError(f"unknown provider {name!r}; known providers: {known}")
    return found


def parse_bool(value: object) -> bool:
    """A boolean setting: YAML booleans as they are; text ``true``/``1``/``yes``/``on`` (any case) is true and
    anything else false, as the seed's parser does (it knows only ``true``/``false``)."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in _TRUE


def _normalise(key: str) -> str:
    return key.replace("_", "").replace("-", "").lower()


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).strip()
    return text or None


def _section_values(spec: ProviderSpec, config: Mapping[str, object]) -> dict[str, object]:
    wanted = [_normalise(name) for name in spec.sections]
    merged: dict[str, object] = {}
    by_name: dict[str, list[Mapping[str, object]]] = {}
    for key, value in config.items():
        if isinstance(value, Mapping):
            by_name.setdefault(_normalise(key), []).append(cast(Mapping[str, object], value))
    for name in wanted:
        for section in by_name.get(name, []):
            for key, value in section.items():
                if _text(value) is not None:
                    merged[_normalise(key)] = value
    return merged


def _settings_for(
    spec: ProviderSpec, config: Mapping[str, object], env: Mapping[str, str]
) -> ProviderSettings:
    section = _section_values(spec, config)
    values: dict[str, str] = {}
    for f in spec.fields:
        value: str | None = None
        for key in f.keys:
            if (value := _text(section.get(_normalise(key)))) is not None:
                break
        for name in f.env:
            if (from_env := _text(env.get(name))) is not None:
                value = from_env
                break
        if value is not None:
            values[f.target] = value
    if not spec.required:
        values["enabled"] = "true" if parse_bool(values.get("enabled", spec.enabled_by_default)) else "false"
    if spec.name == "local" and values.get("model", "").lower() in _AUTO_MODELS:
        del values["model"]
    idle = values.pop("idle_timeout", None)
    settings = ProviderSettings(
        provider=spec.name,
        model=values.pop("model", None),
        api_key=values.pop("api_key", None),
        endpoint=values.pop("endpoint", None),
        options=values,
    )
    return settings if idle is None else msgspec.structs.replace(settings, idle_timeout=_seconds(spec, idle))


def _seconds(spec: ProviderSpec, text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        raise ProviderSelectionError(
            f"{spec.sections[0]}.streamIdleTimeoutSeconds must be a number of seconds, not {text!r}"
        ) from None
    # The seed's "unset = no limit" is hive's 120 s default; an explicit 0 or less means no limit.
    return seconds if seconds > 0 else float("inf")


def resolve_settings(
    config: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None
) -> dict[str, ProviderSettings]:
    """Every provider's settings (configured or not) by canonical name, in priority order.

    ``config`` is the merged YAML configuration; ``env`` defaults to the process environment.
    """
    config = config or {}
    env = os.environ if env is None else env
    return {spec.name: _settings_for(spec, config, env) for spec in PROVIDERS}


def is_configured(settings: ProviderSettings) -> bool:
    """Whether a provider has what it needs: its required settings, or its ``enabled`` flag."""
    spec = provider_spec(settings.provider)
    if not spec.required:
        return parse_bool(settings.options.get("enabled", spec.enabled_by_default))
    present = {
        "model": settings.model,
        "api_key": settings.api_key,
        "endpoint": settings.endpoint,
    }
    return all(present.get(target) or settings.options.get(target) for target in spec.required)


def configured_providers(
    config: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None
) -> list[ProviderSettings]:
    """The configured providers in priority order; local inference last, when enabled."""
    return [s for s in resolve_settings(config, env).values() if is_configured(s)]


def _nothing_configured() -> str:
    lines = [
        "No model provider is configured and local inference is turned off (LMSUPPLY_ENABLED=false or "
        "local.enabled: false). Set one of:"
    ]
    lines += [f"  {spec.title}: {spec.requirement_text()}" for spec in PROVIDERS if spec.name != "local"]
    lines.append("  local inference: LMSUPPLY_ENABLED=true (or unset it)")
    lines.append("or put the matching keys in ~/.hive/config.yaml.")
    return "\n".join(lines)


def select_provider(
    name: str | None = None,
    *,
    config: Mapping[str, object] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProviderSettings:
    """The provider to use: ``name`` (canonical or alias) when given, else the default by priority.

    A named provider must be configured, except local inference, which is always available by name (its
    ``enabled`` flag only decides whether it is the fallback). Raises :class:`ProviderSelectionError` with
    what to set, or :class:`UnknownProviderError` listing the known names.
    """
    resolved = resolve_settings(config, env)
    if name is not None:
        spec = provider_spec(name)
        settings = resolved[spec.name]
        if spec.name == "local" or is_configured(settings):
            return settings
        raise ProviderSelectionError(
            f"provider {spec.name!r} is not configured: set {spec.requirement_text()} "
            f"(or the {spec.sections[0]} section of config.yaml)"
        )
    for settings in resolved.values():
        if is_configured(settings):
            return settings
    raise ProviderSelectionError(_nothing_configured())


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


@runtime_checkable
class _ModelLister(Protocol):
    async def list_models(self) -> Sequence[str]: ...


@runtime_checkable
class _Closable(Protocol):
    async def aclose(self) -> None: ...


async def list_models(settings: ProviderSettings) -> list[str]:
    """The models a provider offers (for the ``models`` command); the configured model when it cannot list."""
    client = create_client(settings)
    try:
        if isinstance(client, _ModelLister):
            return list(await client.list_models())
        return [settings.model] if settings.model else []
    finally:
        if isinstance(client, _Closable):
            await client.aclose()
