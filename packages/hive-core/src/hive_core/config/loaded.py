"""The merged configuration, where each value came from, and typed views of hive-core's own sections."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import msgspec

from hive_protocol import ReasoningEffort

from .errors import ConfigWarning
from .origin import Origin
from .schema import ConfigSchema
from .schema import SectionSpec
from .trust import IgnoredSetting

__all__ = ["ChatBehavior", "FallbackEntry", "LoadedConfig"]


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


class FallbackEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One item of the ``fallback`` list: a provider tried when those before it fail."""

    provider: str
    """The provider's name (canonical or alias)."""
    model: str | None = None
    """The model; ``None`` for the provider's configured one."""


def _child(node: object, name: str) -> object | None:
    return cast("dict[object, object]", node).get(name) if isinstance(node, dict) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


class LoadedConfig(msgspec.Struct, frozen=True, kw_only=True):
    """The configuration after merging every layer (see :func:`~hive_core.config.load_config`)."""

    schema: ConfigSchema
    """The keys it was loaded with; they decide how keys are spelled and which sections there are."""
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
    trusted: bool = True
    """Whether the project's settings that lower protection were used (the user trusts the project)."""
    ignored: tuple[IgnoredSetting, ...] = ()
    """The project's settings that lower protection, left out because the project is not trusted."""
    notices: tuple[str, ...] = ()
    """Lines the user should see: where an endpoint set in the project's ``.env`` sends requests, or that the
    user's own variable won over it."""
    project_permissions: dict[str, object] | None = None
    """The ``permissions`` section of the project's ``config.yaml`` as written (merged into :attr:`permissions`
    only when :attr:`trusted`)."""
    project_permissions_source: str | None = None
    """The file :attr:`project_permissions` came from."""

    def get(self, key: str) -> object | None:
        """The merged value at a dotted key (any spelling :func:`normalize_key` accepts), or ``None``."""
        node: object = self.data
        for segment in self.schema.normalize_key(key):
            node = _child(node, segment)
        return node

    def section(self, name: str) -> dict[str, object]:
        """A top-level section's merged fields (empty when nothing sets it); ``KeyError`` if not a section."""
        canonical = self.schema.canonical_section(name)
        if canonical is None or not isinstance(self.schema[canonical], SectionSpec):
            raise KeyError(f"{name!r} is not a configuration section")
        value = self.data.get(canonical)
        return cast("dict[str, object]", value) if isinstance(value, dict) else {}

    def origin(self, key: str) -> Origin | None:
        """Where the value at a dotted leaf key came from, or ``None`` when it has no value."""
        return self.origins.get(".".join(self.schema.normalize_key(key)))

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
    def fallback(self) -> tuple[FallbackEntry, ...]:
        """The ``fallback`` list, in the order its providers are tried (empty when unset)."""
        items = self.data.get("fallback")
        if not isinstance(items, list):
            return ()
        return tuple(
            FallbackEntry(provider=str(item["provider"]), model=_text(item.get("model")))
            for item in cast("list[dict[str, object]]", items)
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
