"""The merged configuration, where each value came from, and typed views for the CLI and the providers."""

from __future__ import annotations

from pathlib import Path
from typing import Final, cast

import msgspec

from hive_protocol import ReasoningEffort

from .errors import ConfigWarning
from .keys import display_value, flatten, normalize_key
from .origin import DEFAULT_ORIGIN, Origin
from .schema import PROVIDER_SECTIONS, SCHEMA, SectionSpec, canonical_section

__all__ = ["ChatBehavior", "ConfigEntry", "LoadedConfig", "ProviderConfig"]

# What makes each provider section "configured" (as upstream): these fields set, or ``enabled`` true.
_REQUIRED: Final[dict[str, tuple[str, ...]]] = {
    "gpuStack": ("endpoint", "apiKey", "model"),
    "openai": ("apiKey", "model"),
    "anthropic": ("apiKey", "model"),
    "googleai": ("apiKey", "model"),
    "azureopenai": ("endpoint", "apiKey", "deploymentName"),
    "xai": ("apiKey", "model"),
}


class ChatBehavior(msgspec.Struct, frozen=True, kw_only=True):
    """The ``chatBehavior`` section: limits of the agent loop the CLI and the servers build."""

    maximum_iterations_per_request: int = 10
    """Tool rounds per request at most."""
    maximum_consecutive_errors_per_request: int = 3
    """Back-to-back tool errors before the request stops."""
    max_output_tokens: int = 4096
    """Output tokens per model response at most."""
    reasoning_effort: ReasoningEffort | None = None
    """How hard a reasoning model thinks; ``None`` leaves it to the model."""
    tool_call_timeout_seconds: float | None = None
    """Seconds a tool call may run; ``None`` for no limit."""


class ProviderConfig(msgspec.Struct, frozen=True, kw_only=True):
    """One provider section, merged from every layer, with defaults filled in."""

    name: str
    """The section's canonical name (``openai``, ``gpuStack``, ``lmsupply``...)."""
    configured: bool
    """Whether the section is complete enough to use: key and model (plus endpoint for GPUStack, endpoint and
    deployment for Azure OpenAI), or ``enabled`` for Ollama, LM Studio and local inference."""
    api_key: str | None = None
    """The API key."""
    model: str | None = None
    """The model: ``deploymentName`` for Azure OpenAI, ``generatorModel`` for local inference."""
    endpoint: str | None = None
    """The base URL (with the section's default when it has one)."""
    enabled: bool | None = None
    """The ``enabled`` switch of Ollama, LM Studio and local inference; ``None`` for the others."""
    stream_idle_timeout_seconds: float | None = None
    """Seconds a response stream may stay silent; ``None`` for no limit."""
    fields: dict[str, object] = msgspec.field(default_factory=dict[str, object])
    """The whole section as merged (camelCase keys), for provider-specific fields."""


class ConfigEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``config show``: a dotted key, its value as shown, and where it came from."""

    key: str
    """The dotted key."""
    value: str
    """The value as shown (secrets masked unless raw)."""
    origin: Origin
    """Where the value came from."""


def _child(node: object, name: str) -> object | None:
    return cast("dict[object, object]", node).get(name) if isinstance(node, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The configuration after merging every layer (see :func:`~hive_core.config.load_config`)."""

    data: dict[str, object]
    """The merged values, camelCase keys, in schema order, defaults filled in; unknown keys are not here."""
    origins: dict[str, Origin]
    """Dotted leaf key → the layer (and file and line, or variable) its value came from."""
    warnings: tuple[ConfigWarning, ...]
    """What was ignored while loading (unknown keys with file and line, unreadable variables)."""
    home: Path
    """The hive home the global file was read from."""
    project_root: Path
    """The project the project file and ``.env`` were read from."""
    files: tuple[Path, ...]
    """The files that existed and were read, lowest layer first."""
    dotenv: dict[str, str]
    """Every variable of the project's ``.env`` (it is not loaded into the process environment)."""

    def get(self, key: str) -> object | None:
        """The merged value at a dotted key (any spelling :func:`normalize_key` accepts), or ``None``."""
        node: object = self.data
        for segment in normalize_key(key):
            node = _child(node, segment)
        return node

    def section(self, name: str) -> dict[str, object]:
        """A top-level section's merged fields (empty when nothing sets it); ``KeyError`` if not a section."""
        canonical = canonical_section(name)
        if canonical is None or not isinstance(SCHEMA[canonical], SectionSpec):
            raise KeyError(f"{name!r} is not a configuration section")
        value = self.data.get(canonical)
        return cast("dict[str, object]", value) if isinstance(value, dict) else {}

    def origin(self, key: str) -> Origin | None:
        """Where the value at a dotted leaf key came from, or ``None`` when it has no value."""
        return self.origins.get(".".join(normalize_key(key)))

    def entries(self, *, raw: bool = False, include_defaults: bool = True) -> list[ConfigEntry]:
        """Every leaf value for ``config show``, in schema order; secrets masked unless ``raw``."""
        result: list[ConfigEntry] = []
        for key, value in flatten(self.data).items():
            origin = self.origins.get(key, DEFAULT_ORIGIN)
            if include_defaults or origin.layer != "default":
                result.append(ConfigEntry(key=key, value=display_value(key, value, raw=raw), origin=origin))
        return result

    @property
    def chat_behavior(self) -> ChatBehavior:
        """The ``chatBehavior`` section."""
        section = self.section("chatBehavior")
        effort = _text(section.get("reasoningEffort"))
        timeout = section.get("toolCallTimeoutSeconds")
        return ChatBehavior(
            maximum_iterations_per_request=cast("int", section["maximumIterationsPerRequest"]),
            maximum_consecutive_errors_per_request=cast("int", section["maximumConsecutiveErrorsPerRequest"]),
            max_output_tokens=cast("int", section["maxOutputTokens"]),
            reasoning_effort=cast("ReasoningEffort | None", effort),
            tool_call_timeout_seconds=float(cast("float", timeout)) if timeout is not None else None,
        )

    @property
    def approval_timeout_seconds(self) -> float:
        """Seconds an approval request waits for an answer (``approval.timeoutSeconds``, default 300)."""
        return float(cast("float", self.section("approval")["timeoutSeconds"]))

    @property
    def default_provider(self) -> str | None:
        """``defaultProvider``, when set."""
        return _text(self.data.get("defaultProvider"))

    @property
    def permissions(self) -> dict[str, object] | None:
        """The ``permissions`` section (camelCase keys) when a layer set it, for
        :func:`~hive_core.permissions.load_permission_rules`; ``None`` otherwise."""
        value = self.data.get("permissions")
        return cast("dict[str, object]", value) if isinstance(value, dict) else None

    @property
    def permissions_source(self) -> str:
        """Words naming where the ``permissions`` section came from, for error messages."""
        origins = {origin.source for key, origin in self.origins.items() if key.startswith("permissions.")}
        files = sorted(source for source in origins if source)
        return f"the permissions section of {', '.join(files) or 'config.yaml'}"

    def provider(self, name: str) -> ProviderConfig:
        """A provider section by name (any case; ``local`` for ``lmsupply``); ``KeyError`` when not one."""
        canonical = canonical_section(name)
        if canonical not in PROVIDER_SECTIONS:
            raise KeyError(
                f"{name!r} is not a provider section; expected one of {', '.join(PROVIDER_SECTIONS)}"
            )
        fields = dict(self.section(canonical))
        enabled = fields.get("enabled")
        required = _REQUIRED.get(canonical)
        configured = all(_text(fields.get(key)) for key in required) if required else enabled is True
        model_key = {"azureopenai": "deploymentName", "lmsupply": "generatorModel"}.get(canonical, "model")
        idle = fields.get("streamIdleTimeoutSeconds")
        return ProviderConfig(
            name=canonical,
            configured=configured,
            api_key=_text(fields.get("apiKey")),
            model=_text(fields.get(model_key)),
            endpoint=_text(fields.get("endpoint")),
            enabled=enabled if isinstance(enabled, bool) else None,
            stream_idle_timeout_seconds=float(cast("float", idle)) if idle is not None else None,
            fields=fields,
        )

    def providers(self) -> tuple[ProviderConfig, ...]:
        """Every provider section, in the order a default provider is chosen (GPUStack, OpenAI, Anthropic,
        Google AI, Azure OpenAI, xAI, Ollama, LM Studio, then local inference)."""
        return tuple(self.provider(name) for name in PROVIDER_SECTIONS)
