"""The web tools: ``web_search`` (DuckDuckGo, Tavily or SearchApi), ``fetch_page``, ``explore_site`` and
``deep_research``.

The search service is the user's configuration; every URL the model makes a tool reach (a page, a redirect, a
sitemap, a page a research reads) is judged by the ``web`` rules (:mod:`hive_core.permissions.web`) and requested
over a connection pinned to the address that was judged. The libraries they use (``ddgs``, ``trafilatura``,
``protego``: the ``web`` extra) are imported when a tool first needs them.
"""

from __future__ import annotations

from ._http import PinnedFetcher
from ._http import WebError
from ._http import WebRefused
from .research import Depth
from .research import Research
from .search import SearchResult
from .settings import ResearchSettings
from .settings import SearchProvider
from .settings import WebSettings
from .tools import web_tools

__all__ = [
    "Depth",
    "PinnedFetcher",
    "Research",
    "ResearchSettings",
    "SearchProvider",
    "SearchResult",
    "WebError",
    "WebRefused",
    "WebSettings",
    "web_tools",
]
