"""A small fake model server on 127.0.0.1 for the window tests: it answers fixed JSON bodies on the paths it is
given (Ollama's ``/api/show``, LM Studio's ``/api/v0/models``, llama.cpp's ``/props``...), 404 on any other,
and records every request."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Seen:
    """One request the server answered."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]


@dataclass
class MetadataServer:
    """What the server answers (``"METHOD /path"`` → ``(status, JSON body)``) and what it was asked."""

    routes: Mapping[str, tuple[int, Any]]
    url: str = ""
    seen: list[Seen] = field(default_factory=list[Seen])

    def paths(self) -> list[str]:
        """``METHOD /path`` of every request, in order."""
        return [f"{seen.method} {seen.path}" for seen in self.seen]


@contextmanager
def metadata_server(routes: Mapping[str, tuple[int, Any]]) -> Generator[MetadataServer]:
    """Serve ``routes`` on a free port of 127.0.0.1 for the block (a body that is ``bytes`` is sent as is)."""
    server = MetadataServer(routes)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            with lock:
                server.seen.append(
                    Seen(
                        self.command,
                        self.path,
                        json.loads(raw) if raw else None,
                        {name.lower(): value for name, value in self.headers.items()},
                    )
                )
            status, body = server.routes.get(f"{self.command} {self.path}", (404, {"error": "not found"}))
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = answer

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    server.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield server
    finally:
        httpd.shutdown()
        thread.join()
        httpd.server_close()
