"""Reading pages (``fetch_page``) and sites (``explore_site``): readable text with ``trafilatura``, robots.txt with
``protego``, sitemaps with the standard library's XML parser."""

from __future__ import annotations

import urllib.parse
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final

import anyio.to_thread

from hive_core.permissions.web import split_url

from ._http import Fetched
from ._http import PinnedFetcher
from ._http import WebError
from ._http import WebRefused

__all__ = [
    "MAX_PAGE_BYTES",
    "MAX_PAGE_CHARACTERS",
    "ROBOTS_AGENT",
    "explore_site",
    "read_page",
]

MAX_PAGE_BYTES: Final = 2_000_000
"""Bytes of a page (or robots.txt, or sitemap) read at most; the rest is not downloaded."""

MAX_PAGE_CHARACTERS: Final = 20_000
"""Characters of a page's readable text the model is given at most."""

ROBOTS_AGENT: Final = "hive"
"""The user-agent token robots.txt rules are read for."""

_MAX_LINKS: Final = 100
_MAX_SITEMAPS: Final = 5
_PAGE_ACCEPT: Final = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5"
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES: Final = frozenset(
    {"text/plain", "text/markdown", "application/json", "text/csv", "application/xml"}
)


@dataclass(frozen=True)
class Page:
    """A page's readable text."""

    url: str
    """Where it was read, after redirects."""
    text: str
    """The readable text, cut at :data:`MAX_PAGE_CHARACTERS`."""


async def read_page(fetcher: PinnedFetcher, url: str, *, limit: int = MAX_PAGE_CHARACTERS) -> Page:
    """The readable text of the page at ``url`` (main content of HTML, plain text as is), at most ``limit``
    characters. Raises :class:`~hive_core.web.WebError` for an HTTP error or a body that is not text."""
    fetched = await fetcher.get(url, max_bytes=MAX_PAGE_BYTES, accept=_PAGE_ACCEPT)
    _check_status(fetched)
    text = await anyio.to_thread.run_sync(lambda: _readable(fetched))
    if len(text) > limit:
        text = text[:limit] + f"\n[{len(text) - limit} more characters cut]"
    elif fetched.truncated:
        text += f"\n[the page is longer than {MAX_PAGE_BYTES} bytes; the rest was not read]"
    return Page(fetched.url, text)


def _check_status(fetched: Fetched) -> None:
    if fetched.status >= 400:
        raise WebError(f"{fetched.url} answered HTTP {fetched.status}")


def _readable(fetched: Fetched) -> str:
    text = fetched.text()
    html = fetched.content_type in _HTML_TYPES or (
        not fetched.content_type and text.lstrip()[:200].lower().startswith(("<!doctype html", "<html"))
    )
    if not html:
        if (
            fetched.content_type
            and not fetched.content_type.startswith("text/")
            and (fetched.content_type not in _TEXT_TYPES)
        ):
            raise WebError(f"{fetched.url} is {fetched.content_type}, not a page of text")
        return text.strip()
    import trafilatura

    extracted = trafilatura.extract(text, url=fetched.url, favor_recall=True)
    return (extracted or trafilatura.html2txt(text) or "").strip()


# -- explore_site ------------------------------------------------------------------------------------------------


class _Links(HTMLParser):
    """The ``<a href>`` targets of a page, resolved against its URL, with their link text."""

    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.found: dict[str, str] = {}
        self._open: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "base":
            href = dict(attrs).get("href")
            if href:
                self.base = urllib.parse.urljoin(self.base, href)
        if tag != "a":
            return
        href = dict(attrs).get("href")
        if not href:
            return
        url = urllib.parse.urldefrag(urllib.parse.urljoin(self.base, href.strip()))[0]
        if len(self.found) < _MAX_LINKS and url not in self.found:
            self.found[url] = ""
        self._open = url

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None

    def handle_data(self, data: str) -> None:
        if self._open is not None and self._open in self.found:
            self.found[self._open] = " ".join((self.found[self._open] + " " + data).split())


async def explore_site(
    fetcher: PinnedFetcher, base_url: str, *, include_sitemap: bool = True, max_sitemap_entries: int = 50
) -> str:
    """What a site offers, as the model reads it: the pages linked from ``base_url`` that robots.txt allows, and
    (with ``include_sitemap``) up to ``max_sitemap_entries`` URLs of its sitemap that robots.txt allows.

    robots.txt is read first; a path it disallows is never requested (the base page and sitemaps included), and
    when it cannot be read because the site fails (HTTP 5xx), nothing else is requested.
    """
    from protego import Protego

    if split_url(base_url) is None:
        raise WebError(f"{base_url!r} is not an http or https URL")
    origin = _origin_of(base_url)
    assert origin is not None
    robots_url = origin + "/robots.txt"
    robots_fetched = await fetcher.get(robots_url, max_bytes=MAX_PAGE_BYTES, accept="text/plain")
    if robots_fetched.status >= 500:
        raise WebError(
            f"{robots_url} answered HTTP {robots_fetched.status}, so what the site allows is unknown; "
            "nothing else was requested"
        )
    robots_text = robots_fetched.text() if robots_fetched.status < 400 else ""
    robots = Protego.parse(robots_text)

    def allowed(url: str) -> bool:
        return bool(robots.can_fetch(url, ROBOTS_AGENT))

    lines = [f"Site: {origin}"]
    lines.append(
        f"robots.txt: {'read' if robots_text.strip() else 'none (everything is allowed)'}"
        f" (rules for the user agent {ROBOTS_AGENT!r})"
    )
    start = base_url.strip()
    if not allowed(start):
        lines.append(f"{start} is disallowed by robots.txt, so it was not requested.")
    else:
        lines += await _linked(fetcher, start, origin, allowed)
    if include_sitemap:
        sitemaps = list(robots.sitemaps) or [origin + "/sitemap.xml"]
        lines += await _sitemap_lines(fetcher, sitemaps, allowed, max_sitemap_entries)
    return "\n".join(lines)


async def _linked(
    fetcher: PinnedFetcher, start: str, origin: str, allowed: Callable[[str], bool]
) -> list[str]:
    try:
        fetched = await fetcher.get(start, max_bytes=MAX_PAGE_BYTES, accept=_PAGE_ACCEPT)
        _check_status(fetched)
    except WebRefused:
        raise
    except WebError as error:
        return [f"{start} could not be read: {error}"]
    parser = _Links(fetched.url)
    parser.feed(fetched.text())
    parser.close()
    same_site = {url: title for url, title in parser.found.items() if _origin_of(url) == origin}
    kept = [(url, title) for url, title in same_site.items() if allowed(url)]
    refused = [url for url in same_site if not allowed(url)]
    lines = [f"Pages linked from {fetched.url} that robots.txt allows ({len(kept)}):"]
    lines += [f"- {url}" + (f" ({title})" if title else "") for url, title in kept]
    if refused:
        lines.append(f"Linked but disallowed by robots.txt, not requested ({len(refused)}):")
        lines += [f"- {url}" for url in refused]
    return lines


async def _sitemap_lines(
    fetcher: PinnedFetcher, sitemaps: list[str], allowed: Callable[[str], bool], limit: int
) -> list[str]:
    entries: list[str] = []
    notes: list[str] = []
    queue = list(dict.fromkeys(sitemaps))
    read = 0
    while queue and read < _MAX_SITEMAPS and len(entries) < limit:
        sitemap = queue.pop(0)
        if not allowed(sitemap):
            notes.append(f"{sitemap} is disallowed by robots.txt, so it was not requested.")
            continue
        read += 1
        try:
            fetched = await fetcher.get(sitemap, max_bytes=MAX_PAGE_BYTES, accept="application/xml,text/xml")
            _check_status(fetched)
        except WebRefused as error:
            notes.append(str(error))
            continue
        except WebError as error:
            notes.append(f"{sitemap} could not be read: {error}")
            continue
        nested, urls = _sitemap_entries(fetched.body)
        queue += [url for url in nested if url not in queue]
        for url in urls:
            if len(entries) >= limit:
                break
            if allowed(url) and url not in entries:
                entries.append(url)
    lines = [f"Sitemap URLs that robots.txt allows ({len(entries)}, at most {limit}):"]
    lines += [f"- {url}" for url in entries]
    return lines + notes


def _sitemap_entries(body: bytes) -> tuple[list[str], list[str]]:
    """The nested sitemaps and the page URLs of a sitemap document; none when it is not one."""
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError:
        return [], []
    nested: list[str] = []
    urls: list[str] = []
    index = root.tag.rsplit("}", 1)[-1] == "sitemapindex"
    for element in root.iter():
        if element.tag.rsplit("}", 1)[-1] == "loc" and element.text and element.text.strip():
            (nested if index else urls).append(element.text.strip())
    return nested, urls


def _origin_of(url: str) -> str | None:
    split = split_url(url)
    if split is None:
        return None
    scheme, host, port = split
    default_port = 443 if scheme == "https" else 80
    netloc = (f"[{host}]" if ":" in host else host) + ("" if port == default_port else f":{port}")
    return f"{scheme}://{netloc}"
