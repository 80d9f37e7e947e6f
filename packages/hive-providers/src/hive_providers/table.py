"""The provider table: every model provider hive knows, each declared once.

A provider declares its canonical name, title and aliases; its configuration section (typed keys with their
defaults, what they set, and the environment variables that set them); what makes it count as configured;
which field of :class:`~hive_providers.ProviderSettings` each key fills; and its client factory, named as
``"module:function"`` so that reading the table imports no adapter and no provider SDK.

Section and key names are the seed's (``gpuStack``, ``googleai``, ``azureopenai``, ``lmsupply``...); the
providers' canonical names are hive's (``gpustack``, ``google``, ``azure``, ``local``), accepted with the
aliases wherever a provider is named. :data:`PROVIDERS` is in the seed's priority order: the default provider is
the first configured one, local inference last. :data:`CONFIG_SCHEMA` is the configuration hive reads: every
provider's section, then hive-core's own keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, cast

import msgspec

from hive_core.config import SCHEMA, ConfigSchema, FieldSpec, SectionSpec

from .settings import ProviderSettings, SettingName

__all__ = ["CONFIG_SCHEMA", "PROVIDERS", "ProviderSpec"]


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider of the table."""

    name: str
    """The canonical name (:attr:`ProviderSettings.provider`)."""
    title: str
    """The human-readable name."""
    aliases: tuple[str, ...]
    """Other names accepted wherever a provider is named (``--provider``, ``defaultProvider``)."""
    section: SectionSpec
    """Its configuration section."""
    settings: Mapping[str, SettingName]
    """Section key → the settings field it fills; keys not listed (``enabled``, ``carryToolImages``...) are
    configuration only."""
    required: tuple[str, ...]
    """Section keys that must all be set for the provider to count as configured; empty: it counts as
    configured when its ``enabled`` key is true."""
    factory: str
    """``"module:function"``: takes :class:`ProviderSettings`, returns a :class:`~hive_core.ChatClient`."""
    default_models: frozenset[str] = frozenset()
    """Model names that mean "the provider's default model" (the setting is then ``None``), compared in lower
    case."""

    @property
    def default_endpoint(self) -> str | None:
        """The endpoint used when none is configured (its key's default); ``None``: the adapter's or SDK's."""
        key = self.section.field("endpoint")
        return cast("str | None", key.default) if key is not None else None

    def key_of(self, setting: SettingName) -> FieldSpec | None:
        """The key that fills a settings field, or ``None`` when no key does."""
        for name, target in self.settings.items():
            if target == setting:
                return self.section.field(name)
        return None

    def requirement(self) -> str:
        """What to set to configure the provider, for messages (``OPENAI_API_KEY + OPENAI_MODEL``)."""
        if not self.required:
            enabled = self.section.field("enabled")
            flag = enabled.env[0] if enabled is not None and enabled.env else f"{self.section.name}.enabled"
            return f"{flag}=true"
        return " + ".join(_where(self._field(name), self.section) for name in self.required)

    def missing(self, setting: SettingName) -> str:
        """The message for a settings field a client cannot be built without: what sets it, variable and key."""
        key = self.key_of(setting)
        if key is None:
            return f"{self.name}: missing required setting {setting!r}"
        place = f"{self.section.name}.{key.name} in config"
        where = f"{' or '.join(key.env)}, or {place}" if key.env else place
        return f"{self.name}: missing required setting {setting!r} ({where})"

    def is_configured(self, values: Mapping[str, object]) -> bool:
        """Whether the section's merged ``values`` configure the provider: every required key set (not
        empty), or ``enabled`` true."""
        if not self.required:
            return values.get("enabled") is True
        return all(_text(values.get(name)) is not None for name in self.required)

    def settings_from(self, values: Mapping[str, object]) -> ProviderSettings:
        """The settings of the section's merged ``values`` (typed as the schema reads them)."""
        fields: dict[str, object] = {"provider": self.name}
        for name, target in self.settings.items():
            value = values.get(name)
            if isinstance(value, str):
                value = _text(value)
                if value is not None and value.lower() in self.default_models:
                    value = None
            if value is not None:
                fields[target] = value
        return msgspec.convert(fields, ProviderSettings)

    def _field(self, name: str) -> FieldSpec:
        key = self.section.field(name)
        assert key is not None, f"{self.name}: {name} is not a key of {self.section.name}"
        return key


def _where(key: FieldSpec, section: SectionSpec) -> str:
    return " or ".join(key.env) if key.env else f"{section.name}.{key.name}"


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _key(name: str, doc: str, *env: str, default: str | None = None, used: bool = True) -> FieldSpec:
    return FieldSpec(name=name, kind="str", doc=doc, default=default, env=env, used=used)


def _enabled(doc: str, variable: str, *, default: bool) -> FieldSpec:
    return FieldSpec(name="enabled", kind="bool", doc=doc, default=default, env=(variable,))


_IDLE: Final = FieldSpec(
    name="streamIdleTimeoutSeconds",
    kind="number",
    doc="Seconds a response stream may stay silent before it fails (unset: 120).",
    positive=True,
)
_IMAGES: Final = FieldSpec(
    name="carryToolImages",
    kind="bool",
    doc="Pass images returned by tools on to the model.",
    default=False,
    used=False,
)
_COMPATIBLE: Final = "hive_providers.compatible:from_settings"


def _cloud(
    name: str,
    title: str,
    section: str,
    *,
    key_env: tuple[str, ...],
    model_env: str,
    endpoint: FieldSpec,
    factory: str,
    aliases: tuple[str, ...] = (),
    described: str | None = None,
) -> ProviderSpec:
    """A provider reached with a key: configured when ``apiKey`` and ``model`` are set."""
    return ProviderSpec(
        name=name,
        title=title,
        aliases=aliases,
        section=SectionSpec(
            name=section,
            doc=f"{described or title}; configured when apiKey and model are set.",
            fields=(
                _key("apiKey", "The provider's API key.", *key_env),
                _key("model", "The model to use.", model_env),
                endpoint,
                _IDLE,
            ),
        ),
        settings={
            "apiKey": "api_key",
            "model": "model",
            "endpoint": "endpoint",
            "streamIdleTimeoutSeconds": "idle_timeout",
        },
        required=("apiKey", "model"),
        factory=factory,
    )


def _server(name: str, title: str, *, prefix: str, endpoint: FieldSpec) -> ProviderSpec:
    """A model server on the user's machine: configured when enabled."""
    return ProviderSpec(
        name=name,
        title=title,
        aliases=(),
        section=SectionSpec(
            name=name,
            doc=f"A local {title} server; configured when enabled.",
            fields=(
                _enabled(f"Use {title}.", f"{prefix}_ENABLED", default=False),
                endpoint,
                _key("model", "The model to use.", f"{prefix}_MODEL"),
                _IDLE,
                _IMAGES,
            ),
        ),
        settings={"endpoint": "endpoint", "model": "model", "streamIdleTimeoutSeconds": "idle_timeout"},
        required=(),
        factory=_COMPATIBLE,
    )


def _hosted(
    name: str,
    title: str,
    section: str,
    *,
    doc: str,
    prefix: str,
    model: FieldSpec,
    more: tuple[FieldSpec, ...],
    aliases: tuple[str, ...] = (),
    settings: Mapping[str, SettingName] | None = None,
) -> ProviderSpec:
    """A server of the user's choosing: configured when ``endpoint``, ``apiKey`` and the ``model`` key are
    set."""
    keys = (
        _key("endpoint", "The base URL of the provider's API.", f"{prefix}_ENDPOINT"),
        _key("apiKey", "The provider's API key.", f"{prefix}_API_KEY"),
        model,
        *more,
    )
    return ProviderSpec(
        name=name,
        title=title,
        aliases=aliases,
        section=SectionSpec(name=section, doc=doc, fields=keys),
        settings={
            "endpoint": "endpoint",
            "apiKey": "api_key",
            model.name: "model",
            "streamIdleTimeoutSeconds": "idle_timeout",
            **(settings or {}),
        },
        required=("endpoint", "apiKey", model.name),
        factory=_COMPATIBLE,
    )


PROVIDERS: Final[tuple[ProviderSpec, ...]] = (
    _hosted(
        "gpustack",
        "GPUStack",
        "gpuStack",
        doc="A GPUStack server (OpenAI-compatible); configured when endpoint, apiKey and model are all set.",
        prefix="GPUSTACK",
        model=_key("model", "The model to use.", "GPUSTACK_MODEL"),
        more=(
            _key("embeddingModel", "The embedding model.", "GPUSTACK_EMBEDDING_MODEL", used=False),
            _key("rerankModel", "The reranking model.", "GPUSTACK_RERANK_MODEL", used=False),
            _IDLE,
            _IMAGES,
        ),
    ),
    _cloud(
        "openai",
        "OpenAI",
        "openai",
        key_env=("OPENAI_API_KEY",),
        model_env="OPENAI_MODEL",
        endpoint=_key(
            "endpoint", "The base URL of the API.", "OPENAI_ENDPOINT", default="https://api.openai.com/v1"
        ),
        factory="hive_providers.openai_responses:from_settings",
    ),
    _cloud(
        "anthropic",
        "Anthropic",
        "anthropic",
        aliases=("claude",),
        key_env=("ANTHROPIC_API_KEY",),
        model_env="ANTHROPIC_MODEL",
        endpoint=_key("endpoint", "The base URL of the API (unset: the SDK's default)."),
        factory="hive_providers.anthropic:from_settings",
    ),
    _cloud(
        "google",
        "Google AI",
        "googleai",
        described="Google AI (Gemini)",
        aliases=("gemini", "googleai"),
        key_env=("GOOGLEAI_API_KEY", "GOOGLE_API_KEY"),
        model_env="GOOGLEAI_MODEL",
        endpoint=_key("endpoint", "The base URL of the API (unset: the Gemini API's)."),
        factory="hive_providers.google:from_settings",
    ),
    _hosted(
        "azure",
        "Azure OpenAI",
        "azureopenai",
        aliases=("azureopenai",),
        doc="Azure OpenAI; configured when endpoint, apiKey and deploymentName are set.",
        prefix="AZURE_OPENAI",
        model=_key(
            "deploymentName", "The deployment to call (it names the model).", "AZURE_OPENAI_DEPLOYMENT"
        ),
        more=(_key("apiVersion", "The API version to request (unset: the client's default)."), _IDLE),
        settings={"apiVersion": "api_version"},
    ),
    _cloud(
        "xai",
        "xAI",
        "xai",
        described="xAI (Grok)",
        aliases=("grok",),
        key_env=("XAI_API_KEY",),
        model_env="XAI_MODEL",
        endpoint=_key("endpoint", "The base URL of the API.", "XAI_ENDPOINT", default="https://api.x.ai/v1"),
        factory=_COMPATIBLE,
    ),
    _server(
        "ollama",
        "Ollama",
        prefix="OLLAMA",
        endpoint=_key("endpoint", "The server's URL.", "OLLAMA_ENDPOINT", default="http://localhost:11434"),
    ),
    _server(
        "lmstudio",
        "LM Studio",
        prefix="LMSTUDIO",
        endpoint=_key(
            "endpoint",
            "The server's OpenAI-compatible URL.",
            "LMSTUDIO_ENDPOINT",
            default="http://localhost:1234/v1",
        ),
    ),
    ProviderSpec(
        name="local",
        title="local llama.cpp",
        aliases=("lmsupply",),
        section=SectionSpec(
            name="lmsupply",
            doc="In-process local inference (llama.cpp); the fallback when no other provider is configured.",
            aliases=("local",),
            fields=(
                _enabled("Allow local inference.", "LMSUPPLY_ENABLED", default=True),
                _key(
                    "generatorModel",
                    "The chat model: an alias, a Hugging Face id or a GGUF path.",
                    default="gguf:auto",
                ),
                _key("embedderModel", "The embedding model.", default="auto", used=False),
                _key("rerankerModel", "The reranking model.", default="auto", used=False),
                FieldSpec(
                    name="maxContextLength",
                    kind="int",
                    doc="The context window in tokens (unset: sized from the available memory).",
                    positive=True,
                ),
            ),
        ),
        settings={"generatorModel": "model", "maxContextLength": "context_length"},
        required=(),
        factory="hive_providers.local:from_settings",
        # The seed's names for "whatever the default model is".
        default_models=frozenset({"auto", "default", "gguf:auto", "gguf:default"}),
    ),
)
"""Every provider, in the order the default provider is chosen among the configured ones."""

CONFIG_SCHEMA: Final = ConfigSchema((*(spec.section for spec in PROVIDERS), *SCHEMA.values()))
"""The configuration hive reads: every provider's section, then hive-core's own keys."""
