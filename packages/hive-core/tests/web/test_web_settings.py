"""The ``webSearch`` and ``deepResearch`` sections as the web tools read them, and which tools they turn on."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from hive_core.config import load_config
from hive_core.web import ResearchSettings
from hive_core.web import WebError
from hive_core.web import WebSettings
from hive_core.web import web_tools
from hive_core.web.search import search


def loaded(tmp_path: Path, text: str) -> tuple[WebSettings, ResearchSettings]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    (project / ".hive").mkdir(parents=True)
    home.mkdir()
    (project / ".hive" / "config.yaml").write_text(text, encoding="utf-8")
    config = load_config(project, {"HIVE_HOME": str(home)}, trusted=True)
    return WebSettings.from_config(config), ResearchSettings.from_config(config)


def test_the_defaults_search_duckduckgo_with_no_key_and_research_is_off(tmp_path: Path) -> None:
    web, research = loaded(tmp_path, "")
    assert web.enabled
    assert web.chosen_provider == "duckduckgo"
    assert (web.timeout, web.default_max_results, web.max_sitemap_entries) == (15.0, 10, 50)
    assert not research.enabled
    assert research.max_iterations == 5
    assert [tool.name for tool in web_tools(web, research)] == ["web_search", "fetch_page", "explore_site"]


@pytest.mark.parametrize(
    ("text", "provider"),
    [
        ("webSearch:\n  searchApiKey: s\n", "searchapi"),
        ("webSearch:\n  searchApiKey: s\n  tavilyApiKey: t\n", "tavily"),
        ("webSearch:\n  tavilyApiKey: t\n  provider: duckduckgo\n", "duckduckgo"),
    ],
)
def test_the_provider_is_the_one_named_else_the_first_with_a_key(
    tmp_path: Path, text: str, provider: str
) -> None:
    web, _ = loaded(tmp_path, text)
    assert web.chosen_provider == provider


def test_the_sections_turn_the_tools_off_and_on(tmp_path: Path) -> None:
    web, research = loaded(
        tmp_path,
        "webSearch:\n  enabled: false\n  timeoutSeconds: 2.5\ndeepResearch:\n  enabled: true\n  maxIterations: 2\n",
    )
    assert web.timeout == 2.5
    assert research.max_iterations == 2
    assert web_tools(web, research) == ()  # no research model to run it on
    tools = web_tools(web, research, research_client=lambda: pytest.fail("made before the first research"))
    assert [tool.name for tool in tools] == ["deep_research"]
    assert all(tool.read_only for tool in tools)


def test_a_named_provider_without_its_key_is_a_clear_error() -> None:
    async def run() -> None:
        await search(WebSettings(provider="tavily"), "bees")

    with pytest.raises(WebError, match=r"webSearch\.tavilyApiKey is not set"):
        anyio.run(run)


def test_an_empty_query_is_refused_before_any_request() -> None:
    async def run() -> None:
        await search(WebSettings(tavily_api_key="t", tavily_endpoint="http://127.0.0.1:9"), "  ")

    with pytest.raises(WebError, match="empty"):
        anyio.run(run)
