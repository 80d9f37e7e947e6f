"""A Hugging Face hub on 127.0.0.1 for the tests (``HF_ENDPOINT`` pointed at it): the routes ``huggingface_hub``
calls to list a model repository and download its files, with every request logged.

- ``GET /api/models/{repo}[/revision/{rev}]``: the repository's commit and files (``siblings``, with sizes);
- ``HEAD`` and ``GET /{repo}/resolve/{rev}/{file}``: the file, with the headers ``hf_hub_download`` needs
  (``X-Repo-Commit``, ``ETag``, ``Content-Length``) and byte ranges (a resumed download); with
  :attr:`FakeHub.cut_after` set, the next whole-file ``GET`` breaks off after that many bytes;
- anything else: 404 with ``X-Error-Code: RepoNotFound`` / ``EntryNotFound`` as the hub says it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Final
from urllib.parse import unquote
from urllib.parse import urlsplit

from cli_http_server import running_server

__all__ = ["COMMIT", "FakeHub", "fake_hub"]

COMMIT: Final = "0123456789abcdef0123456789abcdef01234567"
"""The commit every repository of the fake hub is at."""

_INFO: Final = re.compile(r"/api/models/(?P<repo>[^/]+/[^/]+)(?:/revision/(?P<rev>[^/]+))?")
_RESOLVE: Final = re.compile(r"/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<file>.+)")
_RANGE: Final = re.compile(r"bytes=(?P<start>\d+)-(?P<end>\d*)")


@dataclass
class FakeHub:
    """The running hub: its URL and the requests it has answered."""

    url: str
    repos: Mapping[str, Mapping[str, Path]]
    """Repository → its files (repository path → the local file served)."""
    requests: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """``(method, path)`` of each request, in order."""
    ranges: list[str] = field(default_factory=list[str])
    """The ``Range`` header of each file ``GET`` (``""`` for none), in order."""
    cut_after: int | None = None
    """Break the next whole-file ``GET`` off after this many bytes (then cleared): a connection lost midway."""
    etags: dict[Path, str] = field(default_factory=dict[Path, str])


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def _missing(self, code: str) -> None:
            body = json.dumps({"error": code}).encode()
            self.send_response(404)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _serve(self) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path))
            if (info := _INFO.fullmatch(path)) is not None and self.command == "GET":
                files = hub.repos.get(info.group("repo"))
                if files is None:
                    return self._missing("RepoNotFound")
                siblings = [{"rfilename": name, "size": file.stat().st_size} for name, file in files.items()]
                body = json.dumps({"id": info.group("repo"), "sha": COMMIT, "siblings": siblings}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None
            resolve = _RESOLVE.fullmatch(path)
            if resolve is None:
                return self._missing("RepoNotFound")
            files = hub.repos.get(resolve.group("repo"))
            if files is None:
                return self._missing("RepoNotFound")
            local = files.get(resolve.group("file"))
            if local is None:
                return self._missing("EntryNotFound")
            size = local.stat().st_size
            start, end = 0, size - 1
            wanted = _RANGE.fullmatch(self.headers.get("Range", ""))
            if wanted is not None:
                start = int(wanted.group("start"))
                end = int(wanted.group("end") or size - 1)
            self.send_response(206 if wanted is not None else 200)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("ETag", f'"{hub.etags[local]}"')
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(end - start + 1))
            if wanted is not None:
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.end_headers()
            if self.command == "HEAD":
                return None
            hub.ranges.append(self.headers.get("Range", ""))
            left = end - start + 1
            if wanted is None and hub.cut_after is not None:
                left, hub.cut_after = hub.cut_after, None
                self.close_connection = True
            with local.open("rb") as source:
                source.seek(start)
                while left > 0 and (chunk := source.read(min(left, 1 << 20))):
                    self.wfile.write(chunk)
                    left -= len(chunk)
            return None

        def do_GET(self) -> None:
            self._serve()

        def do_HEAD(self) -> None:
            self._serve()

    return Handler


@contextmanager
def fake_hub(repos: Mapping[str, Mapping[str, Path]]) -> Iterator[FakeHub]:
    """A hub serving ``repos`` (repository → repository path → local file) on 127.0.0.1, for the block."""
    hub = FakeHub("", repos)
    for files in repos.values():
        for local in files.values():
            if local not in hub.etags:
                hub.etags[local] = hashlib.sha256(local.read_bytes()).hexdigest()
    with running_server(_handler(hub), daemon_threads=True) as server:
        hub.url = f"http://127.0.0.1:{server.server_port}"
        yield hub
