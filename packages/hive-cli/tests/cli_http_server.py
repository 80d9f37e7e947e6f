"""A threaded HTTP server on 127.0.0.1 for the tests' local stand-ins (a package index, web sites, search
services): started on a free port, stopped and joined at the end."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer


@contextmanager
def running_server(
    handler: type[BaseHTTPRequestHandler], *, daemon_threads: bool = False
) -> Iterator[ThreadingHTTPServer]:
    """``handler`` served on a free port of 127.0.0.1 (``server_address`` says which) until the block ends;
    ``daemon_threads`` for a server whose requests may still be streaming when it stops (closing it then does
    not wait for them)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = daemon_threads
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
