"""The web tools of a host built from configuration: ``webSearch`` and ``deepResearch``, with the research model
chosen from the providers the CLI knows."""

from __future__ import annotations

from hive_core import ChatClient
from hive_core import Tool
from hive_core.config import LoadedConfig
from hive_providers import ProviderSettings

__all__ = ["web_tools_for"]


def web_tools_for(loaded: LoadedConfig, settings: ProviderSettings, client: ChatClient) -> tuple[Tool, ...]:
    """The web tools ``loaded`` turns on, for a session whose model is ``client`` (chosen as ``settings``).

    ``deep_research`` runs on ``deepResearch.provider``/``deepResearch.model`` when either is set (the session's
    provider when only the model is), else on ``client``; that model's client is made at the first research.
    """
    from hive_core.web import ResearchSettings
    from hive_core.web import WebSettings
    from hive_core.web import web_tools

    research = ResearchSettings.from_config(loaded)

    def research_client() -> ChatClient:
        if research.provider is None and research.model is None:
            return client
        from hive_providers.registry import choose_provider
        from hive_providers.registry import create_client

        from .telemetry import traced_client

        choice = choose_provider(loaded, research.provider or settings.provider, research.model)
        return traced_client(create_client(choice.settings), choice.settings)

    return web_tools(WebSettings.from_config(loaded), research, research_client=research_client)
