"""The web tools: ``web_search`` (DuckDuckGo, Tavily or SearchApi), ``fetch_page``, ``explore_site`` and
``deep_research``.

The search service is the user's configuration; every URL the model makes a tool reach (a page, a redirect, a
sitemap, a page a research reads) is judged by the ``web`` rules (:mod:`hive_core.permissions.web`) and requested
over a connection pinned to the address that was judged. The libraries they use (``ddgs``, ``trafilatura``,
``protego``: the ``web`` extra) are imported when a tool first needs them.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from .settings import Depth
from .settings import ResearchSettings
from .settings import SearchProvider
from .settings import WebSettings
from .tools import web_tools

if _typing.TYPE_CHECKING:
    from ._http import PinnedFetcher
    from ._http import WebError
    from ._http import WebRefused
    from .research import Research
    from .search import SearchResult

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

_LAZY = {
    "PinnedFetcher": "._http",
    "WebError": "._http",
    "WebRefused": "._http",
    "Research": ".research",
    "SearchResult": ".search",
}
"""Names whose modules import the HTTP stack: loaded when first asked for, so importing the package (to offer the
tools) stays light."""


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_importlib.import_module(module, __name__), name)
