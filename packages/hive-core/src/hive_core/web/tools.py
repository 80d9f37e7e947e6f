"""The web tools as the model is offered them: ``web_search``, ``fetch_page``, ``explore_site``, ``deep_research``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hive_core.chat import ChatClient
from hive_core.chat import UsageUpdate
from hive_core.permissions.web import UrlJudge
from hive_core.permissions.web import WebRules
from hive_core.tool_names import DEEP_RESEARCH
from hive_core.tool_names import EXPLORE_SITE
from hive_core.tool_names import FETCH_PAGE
from hive_core.tool_names import WEB_SEARCH
from hive_core.tools import Tool
from hive_core.tools import ToolContext
from hive_core.tools import ToolOutcome

from .settings import Depth
from .settings import ResearchSettings
from .settings import WebSettings

if TYPE_CHECKING:
    from ._http import PinnedFetcher

__all__ = ["web_tools"]

_DEFAULT_JUDGE = WebRules()


def web_tools(
    web: WebSettings,
    research: ResearchSettings | None = None,
    *,
    research_client: Callable[[], ChatClient] | None = None,
    url_judge: UrlJudge | None = None,
) -> tuple[Tool, ...]:
    """The web tools ``web`` and ``research`` turn on.

    ``web_search``, ``fetch_page`` and ``explore_site`` when ``web.enabled``; ``deep_research`` when
    ``research.enabled`` and a ``research_client`` factory is given (called once, at the first research, so a
    research model is only built when used). Every URL the tools reach is judged by ``url_judge``, else by the
    agent's policy when it judges URLs (:class:`~hive_core.permissions.web.UrlJudge`), else by the built-in
    judgement alone (public addresses allowed, anything else refused unless the person approved the call).
    """

    def judge_of(context: ToolContext) -> UrlJudge:
        if url_judge is not None:
            return url_judge
        policy = context.path_judge
        return policy if isinstance(policy, UrlJudge) else _DEFAULT_JUDGE

    # The HTTP stack (httpx2, httpcore2) and the page libraries are imported by the first call that needs them:
    # offering the tools must not load them into every run (a local one-shot stays light).
    def fetcher(context: ToolContext, approved: str | None = None) -> PinnedFetcher:
        from ._http import PinnedFetcher

        return PinnedFetcher(
            judge_of(context),
            timeout=web.timeout,
            approved=approved if context.approved else None,
            tool=context.tool_name if context.tool_name != DEEP_RESEARCH else FETCH_PAGE,
        )

    async def web_search(query: str, max_results: int | None = None) -> str:
        """Search the web. Returns a numbered list of results: title, URL and snippet.

        Args:
            query: What to search for.
            max_results: How many results to return (default: the configured number).
        """
        from .search import format_results
        from .search import search

        return format_results(query, await search(web, query, max_results))

    async def fetch_page(context: ToolContext, url: str) -> str:
        """Fetch a web page by its http or https URL and return its main text, without menus and markup.

        Args:
            url: The page's http or https URL.
        """
        from .pages import read_page

        page = await read_page(fetcher(context, url), url)
        return f"{page.url}\n\n{page.text}"

    async def explore_site_tool(context: ToolContext, base_url: str, include_sitemap: bool = True) -> str:
        """Explore a web site: the pages its start page links to and its sitemap's URLs, as robots.txt allows.
        Disallowed paths are never requested.

        Args:
            base_url: The site's start page (http or https).
            include_sitemap: Also list the URLs of the site's sitemap.
        """
        from .pages import explore_site

        return await explore_site(
            fetcher(context, base_url),
            base_url,
            include_sitemap=include_sitemap,
            max_sitemap_entries=web.max_sitemap_entries,
        )

    tools: list[Tool] = []
    if web.enabled:
        tools += [
            Tool(web_search, name=WEB_SEARCH, read_only=True),
            Tool(fetch_page, name=FETCH_PAGE, read_only=True),
            Tool(explore_site_tool, name=EXPLORE_SITE, read_only=True),
        ]
    if research is not None and research.enabled and research_client is not None:
        tools.append(_research_tool(web, research, research_client, fetcher))
    return tuple(tools)


def _research_tool(
    web: WebSettings,
    research: ResearchSettings,
    research_client: Callable[[], ChatClient],
    fetcher: Callable[[ToolContext], PinnedFetcher],
) -> Tool:
    clients: list[ChatClient] = []

    async def deep_research_tool(context: ToolContext, query: str, depth: Depth = "standard") -> ToolOutcome:
        """Deep research on the web: a report with [n] citations and a numbered list of source URLs, written
        from notes on the pages it finds.

        Args:
            query: The research question.
            depth: quick (one search, two pages), standard or comprehensive.
        """
        from .research import deep_research

        if not clients:
            clients.append(research_client())
        found = await deep_research(
            query,
            depth,
            settings=web,
            max_iterations=research.max_iterations,
            client=clients[0],
            fetcher=fetcher(context),
        )
        return ToolOutcome(
            content=found.report,
            stats={"sources": len(found.sources), "research_model_calls": found.model_calls},
            usage=UsageUpdate(found.input_tokens, found.output_tokens, found.cached_input_tokens),
        )

    return Tool(deep_research_tool, name=DEEP_RESEARCH, read_only=True)
