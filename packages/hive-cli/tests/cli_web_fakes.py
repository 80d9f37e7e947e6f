"""Local stand-ins for the web, for the web tools' tests: a static site, a search service speaking the wires of
DuckDuckGo's HTML search, Tavily and SearchApi, and an endpoint that accepts connections and never answers.

Every server binds 127.0.0.1 on a free port and records what it was asked.
"""

from __future__ import annotations

import html
import json
import socket
import threading
import urllib.parse
from collections.abc import Generator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from typing import Any

from cli_http_server import running_server


@dataclass(frozen=True)
class Seen:
    """One request a fake server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, list[str]]:
        """The body as an HTML form."""
        return urllib.parse.parse_qs(self.body.decode())

    def json(self) -> Any:
        """The body as JSON."""
        return json.loads(self.body)


@dataclass
class Resource:
    """What the site answers for one path."""

    body: bytes = b""
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    location: str | None = None


@dataclass
class FakeServer:
    """A running fake: its base URL and the requests it received, in order."""

    url: str
    seen: list[Seen] = field(default_factory=list[Seen])

    @property
    def paths(self) -> list[str]:
        """The paths requested (without the query)."""
        return [request.path for request in self.seen]


@contextmanager
def _serve(answer: Any) -> Generator[FakeServer]:
    lock = threading.Lock()
    fake = FakeServer("")

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            parts = urllib.parse.urlsplit(self.path)
            seen = Seen(
                self.command, parts.path, urllib.parse.parse_qs(parts.query), dict(self.headers.items()), body
            )
            with lock:
                fake.seen.append(seen)
            resource: Resource = answer(seen)
            self.send_response(resource.status)
            self.send_header("Content-Type", resource.content_type)
            self.send_header("Content-Length", str(len(resource.body)))
            if resource.location is not None:
                self.send_header("Location", resource.location)
            self.end_headers()
            self.wfile.write(resource.body)

        do_GET = _handle
        do_POST = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with running_server(Handler) as server:
        fake.url = f"http://127.0.0.1:{server.server_port}"
        yield fake


@contextmanager
def static_site(pages: Mapping[str, Resource]) -> Generator[FakeServer]:
    """A site answering ``pages`` by path, 404 for anything else."""

    def answer(seen: Seen) -> Resource:
        return pages.get(seen.path, Resource(b"not found", "text/plain", 404))

    with _serve(answer) as fake:
        yield fake


@contextmanager
def search_service(results: list[tuple[str, str, str]]) -> Generator[FakeServer]:
    """A search service answering every provider's wire with ``results`` (title, URL, snippet each):
    ``POST /html/`` as DuckDuckGo's HTML page, ``POST /search`` as Tavily, ``GET /api/v1/search`` as SearchApi."""

    def answer(seen: Seen) -> Resource:
        if seen.path == "/html/":
            items = "".join(
                '<div class="result results_links web-result"><div class="links_main result__body">'
                f'<h2 class="result__title"><a class="result__a" href="{html.escape(url)}">{html.escape(title)}'
                f'</a></h2><a class="result__snippet" href="{html.escape(url)}">{html.escape(snippet)}</a>'
                "</div></div>"
                for title, url, snippet in results
            )
            return Resource(f"<html><body>{items}</body></html>".encode())
        if seen.path == "/search":
            document = {"results": [{"title": t, "url": u, "content": s} for t, u, s in results]}
            return Resource(json.dumps(document).encode(), "application/json")
        if seen.path == "/api/v1/search":
            document = {"organic_results": [{"title": t, "link": u, "snippet": s} for t, u, s in results]}
            return Resource(json.dumps(document).encode(), "application/json")
        return Resource(b"no such route", "text/plain", 404)

    with _serve(answer) as fake:
        yield fake


@contextmanager
def silent_endpoint() -> Generator[str]:
    """The base URL of a port that accepts connections (the kernel completes them) and never answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()
