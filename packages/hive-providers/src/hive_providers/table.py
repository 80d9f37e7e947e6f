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
from typing import Final
from typing import cast

import msgspec

from hive_core.config import SCHEMA
from hive_core.config import ConfigSchema
from hive_core.config import FieldSpec
from hive_core.config import SectionSpec

from .catalog import DEFAULT_MODELS
from .settings import ProviderSettings
from .settings import SettingName

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
    """Section key → the settings field it fills; keys not listed (``enabled``...) are
    configuration only."""
    required: tuple[str, ...]
    """Section keys that must all be set for the provider to count as configured; empty: it counts as
    configured when its ``enabled`` key is true."""
    factory: str
    """``"module:function"``: takes :class:`ProviderSettings`, returns a :class:`~hive_core.ChatClient`."""
    default_models: frozenset[str] = frozenset()
    """Model names that mean "the provider's default model" (the setting is then ``None``), compared in lower
    case."""
    current_model: str | None = None
    """The model used when the key is set but no model (the catalog's :data:`~hive_providers.catalog.
    DEFAULT_MODELS`); the model key is then not required. ``None``: a model must be set."""
    prices_as: str | None = None
    """The provider's id in the genai-prices table (its models' prices); ``None``: its costs are unknown."""
    keyless_elsewhere: bool = False
    """At an endpoint other than the default (a local OpenAI-compatible server) no key is required, but a
    model is (hive does not know that server's models)."""

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
        """What to set to configure the provider, for messages (``ANTHROPIC_API_KEY (+ ANTHROPIC_MODEL,
        default claude-sonnet-4-5)``)."""
        if not self.required:
            enabled = self.section.field("enabled")
            flag = enabled.env[0] if enabled is not None and enabled.env else f"{self.section.name}.enabled"
            return f"{flag}=true"
        model = self.key_of("model")
        if self.current_model is None or model is None:
            return " + ".join(_where(self._field(name), self.section) for name in self.required)
        needed = " + ".join(
            _where(self._field(name), self.section) for name in self.required if name != model.name
        )
        return f"{needed} (+ {_where(model, self.section)}, default {self.current_model})"

    def place(self, key: FieldSpec) -> str:
        """Where a key is set, for messages: its variables, then its key in the config file."""
        where = f"{self.section.name}.{key.name} in config.yaml"
        return f"{' or '.join(key.env)} (or {where})" if key.env else where

    def elsewhere(self, values: Mapping[str, object]) -> bool:
        """Whether the merged ``values`` point the provider at an endpoint other than its default."""
        endpoint = _text(values.get("endpoint"))
        return endpoint is not None and endpoint.rstrip("/") != (self.default_endpoint or "").rstrip("/")

    def model_default(self, values: Mapping[str, object]) -> str | None:
        """The model used when ``values`` set none: :attr:`current_model`, except at another server's endpoint
        (whose models hive does not know)."""
        if self.keyless_elsewhere and self.elsewhere(values):
            return None
        return self.current_model

    def touched(self, values: Mapping[str, object]) -> bool:
        """Whether the user set any key that configures a provider reached with a key (its required keys, or an
        endpoint other than the default): such a provider with a key missing is half-configured."""
        if not self.required:
            return False
        return self.elsewhere(values) or any(_text(values.get(name)) is not None for name in self.required)

    def missing_keys(
        self, values: Mapping[str, object], *, model_given: bool = False
    ) -> tuple[FieldSpec, ...]:
        """The required keys ``values`` leave unset, the model key not counted when ``model_given`` (``-m``)
        or when the provider has a default model, the key not counted at another server's endpoint when
        :attr:`keyless_elsewhere`."""
        model = self.key_of("model")
        api_key = self.key_of("api_key")
        missing: list[FieldSpec] = []
        for name in self.required:
            if _text(values.get(name)) is not None:
                continue
            if model is not None and name == model.name and (model_given or self.model_default(values)):
                continue
            if (
                api_key is not None
                and name == api_key.name
                and self.keyless_elsewhere
                and self.elsewhere(values)
            ):
                continue
            missing.append(self._field(name))
        return tuple(missing)

    def missing(self, setting: SettingName) -> str:
        """The message for a settings field a client cannot be built without: what sets it, variable and key."""
        key = self.key_of(setting)
        if key is None:
            return f"{self.name}: missing required setting {setting!r}"
        place = f"{self.section.name}.{key.name} in config"
        where = f"{' or '.join(key.env)}, or {place}" if key.env else place
        return f"{self.name}: missing required setting {setting!r} ({where})"

    def is_configured(self, values: Mapping[str, object]) -> bool:
        """Whether the section's merged ``values`` configure the provider: ``enabled`` true, or set up with
        no required key missing (:meth:`missing_keys`)."""
        if not self.required:
            return values.get("enabled") is True
        return self.touched(values) and not self.missing_keys(values)

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
        if "model" not in fields and (current := self.model_default(values)) is not None:
            fields["model"] = current
        return msgspec.convert(fields, ProviderSettings)

    def _field(self, name: str) -> FieldSpec:
        key = self.section.field(name)
        assert key is not None, f"{self.name}: {name} is not a key of {self.section.name}"
        return key


def _where(key: FieldSpec, section: SectionSpec) -> str:
    return " or ".join(key.env) if key.env else f"{section.name}.{key.name}"


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _key(name: str, doc: str, *env: str, default: str | None = None) -> FieldSpec:
    return FieldSpec(name=name, kind="str", doc=doc, default=default, env=env)


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
    doc="Send images that tools return (an MCP tool's screenshot) to the model as images, after the tool "
    "results; only for a model that takes images (a text-only one refuses the request). Off: the model reads "
    "a line naming each image. Hosted providers always carry them.",
    default=False,
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
    more: tuple[FieldSpec, ...] = (),
    settings: Mapping[str, SettingName] | None = None,
    keyless_elsewhere: bool = False,
    prices_as: str | None = None,
) -> ProviderSpec:
    """A provider reached with a key: configured when ``apiKey`` is set, the model defaulting to the catalog's
    current one."""
    current = DEFAULT_MODELS[name]
    return ProviderSpec(
        name=name,
        title=title,
        aliases=aliases,
        section=SectionSpec(
            name=section,
            doc=f"{described or title}; configured when apiKey is set (model unset: {current}).",
            fields=(
                _key("apiKey", "The provider's API key.", *key_env),
                _key("model", f"The model to use (unset: {current}).", model_env),
                endpoint,
                *more,
                _IDLE,
            ),
        ),
        settings={
            "apiKey": "api_key",
            "model": "model",
            "endpoint": "endpoint",
            "streamIdleTimeoutSeconds": "idle_timeout",
            **(settings or {}),
        },
        required=("apiKey", "model"),
        factory=factory,
        current_model=current,
        keyless_elsewhere=keyless_elsewhere,
        prices_as=prices_as,
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
        settings={
            "endpoint": "endpoint",
            "model": "model",
            "streamIdleTimeoutSeconds": "idle_timeout",
            "carryToolImages": "carry_tool_images",
        },
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
    prices_as: str | None = None,
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
        prices_as=prices_as,
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
            _IDLE,
            _IMAGES,
        ),
        settings={"carryToolImages": "carry_tool_images"},
    ),
    _cloud(
        "openai",
        "OpenAI",
        "openai",
        prices_as="openai",
        described="OpenAI, or any OpenAI-compatible server at another endpoint (then a model is needed, a key is not)",
        key_env=("OPENAI_API_KEY",),
        model_env="OPENAI_MODEL",
        endpoint=_key(
            "endpoint",
            "The base URL of the API (the openai SDK's OPENAI_BASE_URL is read too).",
            "OPENAI_ENDPOINT",
            "OPENAI_BASE_URL",
            default="https://api.openai.com/v1",
        ),
        more=(
            FieldSpec(
                name="api",
                kind="str",
                doc="The API spoken: responses or chat (Chat Completions); unset: responses for the OpenAI "
                "service, chat for any other endpoint.",
                choices=("responses", "chat"),
                env=("OPENAI_API",),
            ),
        ),
        settings={"api": "api"},
        keyless_elsewhere=True,
        factory="hive_providers.openai_api:from_settings",
    ),
    _cloud(
        "anthropic",
        "Anthropic",
        "anthropic",
        prices_as="anthropic",
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
        prices_as="google",
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
        prices_as="azure",
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
        prices_as="x-ai",
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
                    "The chat model (unset: SmolLM2-135M, packaged with hive, never downloaded): a GGUF path; a "
                    "Hugging Face repository org/name[:FILE_PATTERN] (no pattern: its Q4_K_M file, else the first "
                    "of Q4_K_S, Q4_0, Q5_K_M, Q5_0, Q6_K, Q8_0, else the smallest); an alias (qwen2.5-1.5b, "
                    "llama3.2-3b, gemma3-4b...: `hive models pull --help`); or gguf:auto, the largest Qwen 2.5 "
                    "this machine's memory and cores run well (`hive doctor` says which). A hub model is "
                    "downloaded on its first run, or by `hive models pull NAME`, into the Hugging Face cache.",
                ),
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
        # Names of the packaged model; the seed's gguf:auto is the machine's pick (hive_providers.local.model_source).
        default_models=frozenset({"default", "gguf:default"}),
    ),
)
"""Every provider, in the order the default provider is chosen among the configured ones."""

_PROVIDER_NAMES: Final = tuple(name for spec in PROVIDERS for name in (spec.name, *spec.aliases))
"""Every name a provider is known by: the canonical ones, then their aliases."""


def _naming_providers(key: SectionSpec | FieldSpec) -> SectionSpec | FieldSpec:
    """``key`` with the ``provider`` of each of its items restricted to :data:`_PROVIDER_NAMES` (``fallback``): an
    unknown name is refused at load with its file and line."""
    if not isinstance(key, FieldSpec) or not key.items:
        return key
    items = tuple(
        msgspec.structs.replace(item, choices=_PROVIDER_NAMES) if item.name == "provider" else item
        for item in key.items
    )
    return msgspec.structs.replace(key, items=items)


CONFIG_SCHEMA: Final = ConfigSchema(
    (*(spec.section for spec in PROVIDERS), *(_naming_providers(key) for key in SCHEMA.values()))
)
"""The configuration hive reads: every provider's section, then hive-core's own keys."""
