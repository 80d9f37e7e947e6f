"""The web tools end to end through ``hive run --server``: each search service's wire, reading pages and sites on a
local server, the web rules asking before anything inward is requested, redirects judged hop by hop, a search
endpoint that never answers, and a deep research citing the local pages."""

from __future__ import annotations

from typing import Any

import pytest
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import input_items
from cli_harness import message_texts
from cli_harness import model_requests
from cli_harness import text
from cli_web_fakes import FakeServer
from cli_web_fakes import Resource
from cli_web_fakes import search_service
from cli_web_fakes import silent_endpoint
from cli_web_fakes import static_site

from hive_conformance.model_server import ScriptedModelServer

ALLOW_LOOPBACK = 'permissions:\n  web:\n    - pattern: "http://127.0.0.1:*"\n      action: allow\n'

INDEX = b"""<!doctype html>
<html><head><title>Bees</title></head><body>
<nav>Home | Shop | Login</nav>
<article><h1>Honey bees</h1>
<p>Honey bees live in hives of up to sixty thousand workers, and they dance to tell each other where flowers are.</p>
<p>The waggle dance gives the direction and the distance of the flowers from the hive.</p></article>
<a href="/about.html">About the apiary</a> <a href="/private/keys.html">Keys</a>
<a href="http://other.invalid/">Elsewhere</a>
</body></html>"""

ABOUT = b"""<!doctype html>
<html><head><title>About</title></head><body><article><h1>The apiary</h1>
<p>The apiary was founded in 1901 and keeps forty hives on the hill above the river.</p></article></body></html>"""


def site_pages(origin: str = "") -> dict[str, Resource]:
    """The local site: robots.txt disallowing /private/ and naming the sitemap, two pages, a private page."""
    robots = f"User-agent: *\nDisallow: /private/\nSitemap: {origin}/sitemap.xml\n"
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>{origin}/index.html</loc></url><url><loc>{origin}/about.html</loc></url>"
        f"<url><loc>{origin}/private/keys.html</loc></url><url><loc>{origin}/news.html</loc></url></urlset>"
    )
    return {
        "/robots.txt": Resource(robots.encode(), "text/plain"),
        "/sitemap.xml": Resource(sitemap.encode(), "application/xml"),
        "/index.html": Resource(INDEX),
        "/about.html": Resource(ABOUT),
        "/private/keys.html": Resource(b"<p>the keys</p>"),
    }


def configure(ws: Workspace, config: str, permissions: str | None = None) -> None:
    (ws.project / ".hive" / "config.yaml").write_text(config, encoding="utf-8")
    if permissions is not None:
        ws.permissions(permissions)


def one_turn(ws: Workspace, prompt: str = "go") -> list[dict[str, Any]]:
    with ws.serve() as proc:
        proc.send({"type": "user_message", "content": prompt})
        events = proc.events_until("turn_end")
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
    return events


def tool_ends(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {event["call_id"]: event for event in events if event["type"] == "tool_end"}


def tool_output(server: ScriptedModelServer, request: int, call_id: str) -> str:
    """What the model was sent as the result of ``call_id`` in its ``request``-th request."""
    outputs = input_items(model_requests(server)[request], "function_call_output")
    [found] = [item["output"] for item in outputs if item["call_id"] == call_id]
    return str(found)


RESULTS = [
    ("Honey bee communication", "https://bees.example/dance", "Bees dance to point at flowers."),
    ("The waggle dance", "https://bees.example/waggle", "Direction and distance, told by dancing."),
]

PROVIDERS: dict[str, str] = {
    "duckduckgo": "webSearch:\n  duckDuckGoEndpoint: {url}\n",
    "tavily": "webSearch:\n  tavilyApiKey: tvly-test-key\n  tavilyEndpoint: {url}\n",
    "searchapi": "webSearch:\n  searchApiKey: sapi-test-key\n  searchApiEndpoint: {url}\n  searchApiEngine: bing\n",
}


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_web_search_speaks_each_services_wire(
    ws: Workspace, server: ScriptedModelServer, provider: str
) -> None:
    with search_service(RESULTS) as service:
        configure(ws, PROVIDERS[provider].format(url=service.url))
        server.add(
            calls(("s1", "web_search", {"query": "honey bee dance", "max_results": 2})), text("Found.")
        )
        events = one_turn(ws.use(server))
    end = tool_ends(events)["s1"]
    assert end["success"], end
    [request] = service.seen
    if provider == "duckduckgo":
        assert (request.method, request.path) == ("POST", "/html/")
        assert request.form()["q"] == ["honey bee dance"]
    elif provider == "tavily":
        assert (request.method, request.path) == ("POST", "/search")
        assert request.headers["Authorization"] == "Bearer tvly-test-key"
        assert request.json() == {"query": "honey bee dance", "max_results": 2}
    else:
        assert (request.method, request.path) == ("GET", "/api/v1/search")
        assert request.headers["Authorization"] == "Bearer sapi-test-key"
        assert request.query == {"engine": ["bing"], "q": ["honey bee dance"], "num": ["2"]}
    # The model reads every result as title, URL and snippet, in order.
    sent = tool_output(server, 1, "s1")
    for title, url, snippet in RESULTS:
        assert title in sent
        assert url in sent
        assert snippet in sent
    assert sent.index("bees.example/dance") < sent.index("bees.example/waggle")


def test_fetch_page_and_explore_site_read_the_local_site_and_never_a_disallowed_path(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _site() as site:
        configure(ws, "webSearch:\n  maxSitemapEntries: 2\n", ALLOW_LOOPBACK)
        server.add(
            calls(
                ("f1", "fetch_page", {"url": f"{site.url}/index.html"}),
                ("e1", "explore_site", {"base_url": f"{site.url}/index.html"}),
                (
                    "e2",
                    "explore_site",
                    {"base_url": f"{site.url}/private/keys.html", "include_sitemap": False},
                ),
            ),
            text("Read."),
        )
        events = one_turn(ws.use(server))
        paths = list(site.paths)
    ends = tool_ends(events)
    assert all(ends[call]["success"] for call in ("f1", "e1", "e2")), ends
    assert "private/keys.html is disallowed by robots.txt, so it was not requested" in tool_output(
        server, 1, "e2"
    )
    page = tool_output(server, 1, "f1")
    assert "waggle dance gives the direction" in page
    assert "<p>" not in page
    assert "Shop | Login" not in page
    site_map = tool_output(server, 1, "e1")
    assert f"- {site.url}/about.html (About the apiary)" in site_map
    assert f"{site.url}/private/keys.html" in site_map.split("disallowed by robots.txt, not requested")[1]
    # maxSitemapEntries: 2 of the sitemap's allowed entries, the disallowed one never among them.
    listed = site_map.split("Sitemap URLs that robots.txt allows")[1]
    assert f"- {site.url}/index.html" in listed
    assert f"- {site.url}/about.html" in listed
    assert f"{site.url}/news.html" not in listed
    assert "private" not in listed
    assert "/robots.txt" in paths
    assert "/sitemap.xml" in paths
    assert not [path for path in paths if path.startswith("/private/")], paths


class _site:
    """The local site at its own origin (robots.txt and the sitemap name it)."""

    def __enter__(self) -> FakeServer:
        pages: dict[str, Resource] = {}
        self._context = static_site(pages)
        fake = self._context.__enter__()
        pages.update(site_pages(fake.url))
        return fake

    def __exit__(self, *exc: object) -> None:
        self._context.__exit__(None, None, None)


def test_a_fetch_of_the_loopback_address_is_asked_about_and_not_run_until_approved(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _site() as site:
        url = f"{site.url}/index.html"
        server.add(
            calls(("f1", "fetch_page", {"url": url})),
            text("Not read."),
            calls(("f2", "fetch_page", {"url": url})),
            text("Read."),
        )
        with ws.use(server).serve() as proc:
            proc.send({"type": "user_message", "content": "read it"})
            asked = proc.events_until("hitl_request")[-1]
            assert asked["target"] == url
            assert asked["tool_name"] == "fetch_page"
            assert site.seen == []  # judged before anything was requested
            proc.send({"type": "hitl_response", "id": asked["id"], "approved": False, "reason": "no"})
            first = proc.events_until("turn_end")
            assert site.seen == []
            proc.send({"type": "user_message", "content": "read it, I approve"})
            asked = proc.events_until("hitl_request")[-1]
            proc.send({"type": "hitl_response", "id": asked["id"], "approved": True})
            second = proc.events_until("turn_end")
            proc.send({"type": "shutdown"})
            assert proc.wait() == 0, proc.stderr
    assert tool_ends(first)["f1"]["refusal"] == "rejected"
    assert tool_ends(second)["f2"]["success"]
    assert site.paths == ["/index.html"]


def test_always_on_an_asked_fetch_allows_that_url_again_and_no_other(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _site() as site:
        url = f"{site.url}/index.html"
        server.add(
            calls(("f1", "fetch_page", {"url": url})),
            calls(("f2", "fetch_page", {"url": url})),
            calls(("f3", "fetch_page", {"url": f"{site.url}/about.html"})),
            text("Done."),
        )
        with ws.use(server).serve() as proc:
            proc.send({"type": "user_message", "content": "read them"})
            asked = proc.events_until("hitl_request")[-1]
            assert asked["target"] == url
            proc.send({"type": "hitl_response", "id": asked["id"], "approved": True, "always_approve": True})
            # The same URL runs unasked (the tool's own check of it included); another page of the site asks.
            between = proc.events_until("hitl_request")
            asked = between[-1]
            assert asked["target"] == f"{site.url}/about.html"
            assert [e["call_id"] for e in between if e["type"] == "hitl_request"] == ["f3"]
            proc.send({"type": "hitl_response", "id": asked["id"], "approved": False, "reason": "enough"})
            events = between + proc.events_until("turn_end")
            proc.send({"type": "shutdown"})
            assert proc.wait() == 0, proc.stderr
    ends = tool_ends(events)
    assert ends["f2"]["success"], ends["f2"]
    assert ends["f3"]["refusal"] == "rejected"
    assert site.paths == ["/index.html", "/index.html"]


def test_a_redirect_inward_is_judged_again_and_not_followed(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with static_site({"/secret": Resource(b"inner secret")}) as inner:
        redirect = Resource(status=302, location=f"{inner.url}/secret")
        with static_site({"/go": redirect}) as outer:
            # Only the outer site is allowed; the hop to the inner one falls to the default, which asks.
            configure(ws, "", f'permissions:\n  web:\n    - pattern: "{outer.url}/*"\n      action: allow\n')
            server.add(calls(("f1", "fetch_page", {"url": f"{outer.url}/go"})), text("Stopped."))
            events = one_turn(ws.use(server))
            assert outer.paths == ["/go"]
            assert inner.seen == []
    end = tool_ends(events)["f1"]
    assert not end["success"]
    sent = tool_output(server, 1, "f1")
    assert f"{inner.url}/secret was not requested" in sent
    assert "inner secret" not in sent


@pytest.mark.parametrize("provider", ["duckduckgo", "tavily"])
def test_a_search_endpoint_that_never_answers_is_a_tool_error(
    ws: Workspace, server: ScriptedModelServer, provider: str
) -> None:
    with silent_endpoint() as url:
        config = PROVIDERS[provider].format(url=url) + "  timeoutSeconds: 1\n"
        configure(ws, config)
        server.add(calls(("s1", "web_search", {"query": "bees"})), text("The search failed."))
        events = one_turn(ws.use(server))
    end = tool_ends(events)["s1"]
    assert not end["success"]
    assert "did not answer within 1 s" in tool_output(server, 1, "s1")
    assert events[-1]["stop_reason"] == "completed"


def test_deep_research_reads_the_local_pages_and_cites_them(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    with _site() as site:
        results = [
            ("Honey bees", f"{site.url}/index.html", "How bees tell where flowers are."),
            ("About", f"{site.url}/about.html", "The apiary."),
        ]
        with search_service(results) as service:
            configure(
                ws,
                f"webSearch:\n  tavilyApiKey: tvly-key\n  tavilyEndpoint: {service.url}\n"
                "deepResearch:\n  enabled: true\n  maxIterations: 3\n",
                ALLOW_LOOPBACK,
            )
            server.add(
                calls(
                    ("r1", "deep_research", {"query": "How do honey bees find flowers?", "depth": "quick"})
                ),
                text("- bees dance to show where flowers are", usage=(30, 7)),
                text("- the apiary dates from 1901", usage=(20, 5)),
                text(
                    "Honey bees show each other flowers by dancing [1]; this apiary dates from 1901 [2].",
                    usage=(40, 9),
                ),
                text("Here is what I found."),
            )
            events = one_turn(ws.use(server))
            searched = service.seen[0].json()
        paths = site.paths
    end = tool_ends(events)["r1"]
    assert end["success"], end
    assert end["stats"] == {"sources": 2, "research_model_calls": 3}
    # The research model's tokens count in the turn: its three requests beside the loop's two rounds.
    turn_end = events[-1]
    assert (turn_end["input_tokens"], turn_end["output_tokens"]) == (20 + 90 + 10, 5 + 21 + 2)
    assert searched["query"] == "How do honey bees find flowers?"
    assert paths == ["/index.html", "/about.html"]
    report = tool_output(server, 4, "r1")
    assert "flowers by dancing [1]" in report
    assert report.endswith(f"Sources:\n[1] {site.url}/index.html\n[2] {site.url}/about.html")
    # The research model read each page (its text, numbered) and was offered no tools.
    requests = model_requests(server)
    notes_prompt = "\n".join(message_texts(requests[1], "user"))
    assert "Source [1]" in notes_prompt
    assert "waggle dance gives the direction" in notes_prompt
    assert "founded in 1901" in "\n".join(message_texts(requests[2], "user"))
    assert "bees dance to show where flowers are" in "\n".join(message_texts(requests[3], "user"))
    for request in requests[1:4]:
        assert not request.body.get("tools"), request.body.get("tools")
