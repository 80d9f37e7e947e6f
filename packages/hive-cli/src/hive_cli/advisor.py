"""The ``advisor`` section made into the advisor tool: off until ``advisor.model`` is set; the model of
``advisor.provider`` (unset: the session's provider), reached through the provider registry as the session's own
model is."""

from __future__ import annotations

from typing import cast

from hive_core import ChatClient
from hive_core import Tool
from hive_core.config import LoadedConfig
from hive_providers import ProviderSettings

__all__ = ["advisor_tools"]


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def advisor_tools(
    loaded: LoadedConfig, working: ProviderSettings, *, max_output_tokens: int | None
) -> tuple[Tool, ...]:
    """The advisor tool when ``advisor.model`` is set (empty otherwise), consulting that model on
    ``advisor.provider`` or, unset, on ``working``'s provider, at most ``advisor.maxCalls`` times a session.

    The provider is checked now, so a setting that cannot work stops the start with a message naming what to set
    (``ProviderSelectionError``); the model's client is created for each consultation.
    """
    section = loaded.section("advisor")
    model = _text(section.get("model"))
    if model is None:
        return ()
    from hive_core.builtin_tools.advisor import advisor_tool
    from hive_providers.registry import choose_provider
    from hive_providers.registry import create_client

    provider = _text(section.get("provider")) or working.provider
    settings = choose_provider(loaded, provider, model).settings

    def connect() -> ChatClient:
        return create_client(settings)

    return (
        advisor_tool(
            connect,
            max_calls=cast("int", section["maxCalls"]),
            max_output_tokens=max_output_tokens,
        ),
    )
