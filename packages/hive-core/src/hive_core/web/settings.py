"""The web tools' settings: the ``webSearch`` and ``deepResearch`` configuration sections."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final
from typing import Literal

from hive_core.config import LoadedConfig

__all__ = ["SEARCH_PROVIDERS", "Depth", "ResearchSettings", "SearchProvider", "WebSettings"]

Depth = Literal["quick", "standard", "comprehensive"]
"""How far ``deep_research`` goes: rounds of searching and pages read per round (declared here, beside the
settings, so that offering the tools imports no HTTP stack)."""

SearchProvider = Literal["duckduckgo", "tavily", "searchapi"]
"""The search services ``web_search`` speaks to."""

SEARCH_PROVIDERS: Final[tuple[SearchProvider, ...]] = ("duckduckgo", "tavily", "searchapi")
"""Every :data:`SearchProvider`, as ``webSearch.provider`` accepts them."""


@dataclass(frozen=True)
class WebSettings:
    """The ``webSearch`` section: which search service, where, and the limits of the web tools."""

    enabled: bool = True
    """Whether the web tools are offered."""
    provider: SearchProvider | None = None
    """The search service; ``None``: the first with a key (Tavily, then SearchApi), else DuckDuckGo."""
    default_max_results: int = 10
    """Results a search returns when the model does not ask for a number."""
    max_sitemap_entries: int = 50
    """Sitemap entries ``explore_site`` lists at most."""
    timeout: float = 15.0
    """Seconds one search or page request may take."""
    duckduckgo_endpoint: str = "https://html.duckduckgo.com"
    """DuckDuckGo's base URL; its HTML search is ``/html/`` under it."""
    duckduckgo_region: str | None = None
    """The DuckDuckGo region code (``None``: ``us-en``)."""
    tavily_api_key: str | None = None
    """The Tavily key."""
    tavily_endpoint: str = "https://api.tavily.com"
    """Tavily's base URL."""
    searchapi_key: str | None = None
    """The SearchApi key."""
    searchapi_engine: str = "google"
    """The SearchApi engine."""
    searchapi_endpoint: str = "https://www.searchapi.io"
    """SearchApi's base URL."""

    @property
    def chosen_provider(self) -> SearchProvider:
        """The service searches go to: :attr:`provider`, else the first with a key, else DuckDuckGo."""
        if self.provider is not None:
            return self.provider
        if self.tavily_api_key:
            return "tavily"
        if self.searchapi_key:
            return "searchapi"
        return "duckduckgo"

    @classmethod
    def from_config(cls, loaded: LoadedConfig) -> WebSettings:
        """The ``webSearch`` section of ``loaded`` (the defaults where it sets nothing)."""
        section = loaded.section("webSearch") if "webSearch" in loaded.schema else {}
        default = cls()
        provider = _text(section.get("provider"))
        return cls(
            enabled=bool(section.get("enabled", default.enabled)),
            provider=provider if provider in SEARCH_PROVIDERS else None,
            default_max_results=_int(section.get("defaultMaxResults"), default.default_max_results),
            max_sitemap_entries=_int(section.get("maxSitemapEntries"), default.max_sitemap_entries),
            timeout=_number(section.get("timeoutSeconds"), default.timeout),
            duckduckgo_endpoint=_text(section.get("duckDuckGoEndpoint")) or default.duckduckgo_endpoint,
            duckduckgo_region=_text(section.get("duckDuckGoRegion")),
            tavily_api_key=_text(section.get("tavilyApiKey")),
            tavily_endpoint=_text(section.get("tavilyEndpoint")) or default.tavily_endpoint,
            searchapi_key=_text(section.get("searchApiKey")),
            searchapi_engine=_text(section.get("searchApiEngine")) or default.searchapi_engine,
            searchapi_endpoint=_text(section.get("searchApiEndpoint")) or default.searchapi_endpoint,
        )


@dataclass(frozen=True)
class ResearchSettings:
    """The ``deepResearch`` section."""

    enabled: bool = False
    """Whether ``deep_research`` is offered."""
    max_iterations: int = 5
    """Search-and-read rounds at most."""
    provider: str | None = None
    """The research model's provider; ``None``: the session's."""
    model: str | None = None
    """The research model; ``None``: the session's (or the provider's configured one)."""

    @classmethod
    def from_config(cls, loaded: LoadedConfig) -> ResearchSettings:
        """The ``deepResearch`` section of ``loaded`` (the defaults where it sets nothing)."""
        section = loaded.section("deepResearch") if "deepResearch" in loaded.schema else {}
        default = cls()
        return cls(
            enabled=bool(section.get("enabled", default.enabled)),
            max_iterations=_int(section.get("maxIterations"), default.max_iterations),
            provider=_text(section.get("provider")),
            model=_text(section.get("model")),
        )


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def _number(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return default
