"""A fake package index for the ``hive update`` tests: the simple API (PEP 691 JSON or PEP 503 HTML) on
127.0.0.1, serving the file names a test gives it and recording what was asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler

from cli_http_server import running_server


@dataclass
class FakeIndex:
    """A simple-API index: project name → file names (``!`` in front marks a yanked file)."""

    files: dict[str, list[str]] = field(default_factory=dict[str, list[str]])
    html: bool = False
    requests: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(path, Accept header) of every request."""
    url: str = ""

    def page(self, project: str) -> tuple[str, bytes] | None:
        names = self.files.get(project)
        if names is None:
            return None
        if self.html:
            links = "".join(
                f'<a href="../../files/{n.lstrip("!")}#sha256=00"{" data-yanked" if n.startswith("!") else ""}>'
                f"{n.lstrip('!')}</a>\n"
                for n in names
            )
            return "text/html", f"<!DOCTYPE html><html><body>{links}</body></html>".encode()
        document = {
            "meta": {"api-version": "1.1"},
            "name": project,
            "files": [
                {
                    "filename": n.lstrip("!"),
                    "url": f"../../files/{n}",
                    "hashes": {},
                    "yanked": n.startswith("!"),
                }
                for n in names
            ],
        }
        return "application/vnd.pypi.simple.v1+json", json.dumps(document).encode()


@contextmanager
def fake_index() -> Iterator[FakeIndex]:
    """A running fake index (``url`` set), stopped at the end."""
    fake = FakeIndex()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fake.requests.append((self.path, self.headers.get("Accept", "")))
            parts = self.path.strip("/").split("/")
            found = fake.page(parts[1]) if len(parts) == 2 and parts[0] == "simple" else None
            if found is None:
                self.send_error(404)
                return
            kind, body = found
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    with running_server(Handler) as server:
        fake.url = f"http://127.0.0.1:{server.server_address[1]}/simple"
        yield fake
