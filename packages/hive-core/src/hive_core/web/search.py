"""Web search through DuckDuckGo (no key, with ``ddgs``), Tavily or SearchApi.

The search service is configuration the user chose, not a URL the model picked: its requests are not judged by
the web rules (the pages a result points to are, when a tool reads them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import cast

import anyio
import anyio.to_thread
import httpx2

from ._http import WebError
from .settings import WebSettings

__all__ = ["MAX_RESULTS", "SearchResult", "format_results", "search"]

MAX_RESULTS = 50
"""Results one search returns at most, whatever the model asks for."""

_NAMES = {"duckduckgo": "DuckDuckGo", "tavily": "Tavily", "searchapi": "SearchApi"}


@dataclass(frozen=True)
class SearchResult:
    """One hit."""

    title: str
    """The page's title."""
    url: str
    """Where it is."""
    snippet: str
    """The text the service shows under it."""


async def search(settings: WebSettings, query: str, max_results: int | None = None) -> list[SearchResult]:
    """Search ``query`` with the configured service; at most ``max_results`` hits (the configured default when
    ``None``). Raises :class:`~hive_core.web.WebError` on a network error, a timeout or an error answer."""
    query = query.strip()
    if not query:
        raise WebError("the search query is empty")
    count = max(1, min(max_results or settings.default_max_results, MAX_RESULTS))
    provider = settings.chosen_provider
    if provider == "duckduckgo":
        results = await _duckduckgo(settings, query, count)
    else:
        results = await _keyed(settings, provider, query, count)
    return results[:count]


def format_results(query: str, results: list[SearchResult]) -> str:
    """The hits as the model reads them: a numbered title, its URL and its snippet each."""
    if not results:
        return f"No results for {query!r}."
    lines = [f"Results for {query!r}:"]
    for number, result in enumerate(results, 1):
        lines.append(f"{number}. {result.title or result.url}\n   {result.url}")
        if result.snippet:
            lines.append(f"   {result.snippet}")
    return "\n".join(lines)


def _key(value: str | None, provider: str, key: str) -> str:
    if not value:
        raise WebError(f"webSearch.provider is {provider}, but webSearch.{key} is not set")
    return value


async def _keyed(settings: WebSettings, provider: str, query: str, count: int) -> list[SearchResult]:
    """A search through Tavily (``POST /search``, JSON) or SearchApi (``GET /api/v1/search``), the key as a bearer
    token."""
    if provider == "tavily":
        key = _key(settings.tavily_api_key, provider, "tavilyApiKey")
        url = settings.tavily_endpoint.rstrip("/") + "/search"
        request: dict[str, Any] = {"json": {"query": query, "max_results": count}}
        items, fields = "results", ("title", "url", "content")
    else:
        key = _key(settings.searchapi_key, provider, "searchApiKey")
        url = settings.searchapi_endpoint.rstrip("/") + "/api/v1/search"
        request = {"params": {"engine": settings.searchapi_engine, "q": query, "num": str(count)}}
        items, fields = "organic_results", ("title", "link", "snippet")
    document = await _call(
        settings, provider, "POST" if "json" in request else "GET", url, key=key, request=request
    )
    return [SearchResult(*(_field(item, name) for name in fields)) for item in _items(document, items)]


async def _call(
    settings: WebSettings,
    provider: str,
    method: str,
    url: str,
    *,
    key: str,
    request: dict[str, Any],
) -> object:
    name = _NAMES[provider]
    headers = {"Authorization": f"Bearer {key}"}
    try:
        async with httpx2.AsyncClient(timeout=settings.timeout) as client:
            response = await client.request(
                method, url, headers=headers, json=request.get("json"), params=request.get("params")
            )
    except httpx2.TimeoutException:
        raise WebError(f"{name} did not answer within {settings.timeout:g} s") from None
    except httpx2.HTTPError as error:
        raise WebError(f"the search through {name} failed: {error or type(error).__name__}") from None
    if response.status_code != 200:
        raise WebError(f"{name} answered HTTP {response.status_code}: {_excerpt(response.text)}")
    try:
        return response.json()
    except ValueError:
        raise WebError(
            f"{name} answered with something that is not JSON: {_excerpt(response.text)}"
        ) from None


async def _duckduckgo(settings: WebSettings, query: str, count: int) -> list[SearchResult]:
    region = settings.duckduckgo_region or "us-en"
    url = settings.duckduckgo_endpoint.rstrip("/") + "/html/"
    timeout = settings.timeout
    found = await anyio.to_thread.run_sync(
        lambda: _ddgs_search(url, query, region, timeout), abandon_on_cancel=True
    )
    return found[:count]


def _ddgs_search(url: str, query: str, region: str, timeout: float) -> list[SearchResult]:
    """DuckDuckGo's HTML search through ``ddgs``'s engine (its parser and browser-like client), at ``url``."""
    from ddgs.engines.duckduckgo import Duckduckgo
    from ddgs.exceptions import DDGSException
    from ddgs.exceptions import TimeoutException

    class _Engine(Duckduckgo):
        # ddgs turns an error status into "no results"; the model should read the error instead.
        def request(self, *args: Any, **kwargs: Any) -> Any:
            response = self.http_client.request(*args, **kwargs)
            if response.status_code != 200:
                raise WebError(f"DuckDuckGo answered HTTP {response.status_code}: {_excerpt(response.text)}")
            return response.text

    engine = _Engine(timeout=max(1, math.ceil(timeout)))
    engine.search_url = url
    try:
        hits = engine.search(query, region=region) or []
    except TimeoutException:
        raise WebError(f"DuckDuckGo did not answer within {timeout:g} s") from None
    except DDGSException as error:
        raise WebError(f"the search through DuckDuckGo failed: {error}") from None
    return [SearchResult(hit.title, hit.href, hit.body) for hit in hits if hit.href]


def _items(document: object, key: str) -> list[Mapping[str, object]]:
    items = cast("Mapping[str, object]", document).get(key) if isinstance(document, Mapping) else None
    if not isinstance(items, list):
        return []
    return [
        cast("Mapping[str, object]", item)
        for item in cast("list[object]", items)
        if isinstance(item, Mapping)
    ]


def _field(item: Mapping[str, object], key: str) -> str:
    value = item.get(key)
    return " ".join(value.split()) if isinstance(value, str) else ""


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text[:300] + ("…" if len(text) > 300 else "")
