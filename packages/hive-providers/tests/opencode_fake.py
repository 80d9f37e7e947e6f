"""A tiny stand-in for ``opencode serve`` on 127.0.0.1 that replays a recorded transcript (test helper).

Run as a program (``python opencode_fake.py serve --port 0 --hostname 127.0.0.1``, like the real one) with
``OPENCODE_FAKE_TRANSCRIPT`` naming a jsonl transcript and ``OPENCODE_FAKE_LOG`` a file where every request it
gets is appended as one JSON line (method, path, body). It prints the real server's "listening on" line, answers
``/global/health``, ``POST /session`` (the transcript's session id), ``GET /session/{id}``, ``/session/{id}/fork``,
``/session/status`` (``{}``), and streams ``GET /event`` (``server.connected`` first). ``prompt_async`` starts the
replay of the transcript's events; after a ``question.asked``, ``permission.asked`` or ``form.created`` event the
replay waits until a reply, reject or cancel names that request (not for an MCP form, which hive leaves alone);
after a fork the events carry the fork's id. ``abort`` / ``interrupt`` ends the replay with
``session.error`` ``MessageAbortedError`` and ``session.idle``.

The transcript's first line is a header object: ``session`` (the id ``POST /session`` returns; default: the
first ``session.created``), ``responses`` (``"METHOD /path-regex"`` -> a list of ``[status, body]`` answers used
in turn, then ``200 true``), ``die_after`` (an event type: the server exits with status 3 right after sending
it). A line ``{"raw": "text"}`` is sent as ``data: text`` verbatim (for malformed events).
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

_GATES = ("question.asked", "permission.asked", "form.created")


class _State:
    def __init__(self, transcript: Path, log: Path) -> None:
        lines = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
        self.header: dict[str, Any] = lines[0]
        self.events: list[dict[str, Any]] = lines[1:]
        self.session = self.header.get("session") or next(
            (e["properties"]["sessionID"] for e in self.events if e.get("type") == "session.created"),
            "ses_fake",
        )
        self.original = self.session
        self.responses: dict[str, list[list[Any]]] = {
            k: list(v) for k, v in self.header.get("responses", {}).items()
        }
        self.log = log
        self.lock = threading.Lock()
        self.listeners: list[queue.Queue[str]] = []
        self.settled: set[str] = set()
        self.settle = threading.Condition(self.lock)
        self.aborted = threading.Event()

    def record(self, method: str, path: str, body: Any) -> None:
        with self.lock, self.log.open("a") as out:
            out.write(json.dumps({"method": method, "path": path, "body": body}) + "\n")

    def answer(self, method: str, path: str) -> tuple[int, Any]:
        with self.lock:
            for pattern, answers in self.responses.items():
                verb, _, route = pattern.partition(" ")
                if verb == method and re.fullmatch(route, path) and answers:
                    status, body = answers.pop(0)
                    return int(status), body
        return 200, True

    def publish(self, data: str) -> None:
        with self.lock:
            for listener in self.listeners:
                listener.put(data)

    def replay(self) -> None:
        die_after = self.header.get("die_after")
        for event in self.events:
            if self.aborted.is_set():
                return
            if "raw" in event:
                self.publish(str(event["raw"]))
                continue
            self.publish(json.dumps(event).replace(self.original, self.session))
            kind = event.get("type")
            if kind == die_after:
                time.sleep(0.3)
                os._exit(3)
            props = event.get("properties", {})
            form = props.get("form", {})
            request_id = props.get("id") or form.get("id")
            if (
                kind in _GATES
                and isinstance(request_id, str)
                and form.get("metadata", {}).get("kind") != "mcp"
            ):
                self._wait_settled(request_id)

    def _wait_settled(self, request_id: str) -> None:
        with self.settle:
            self.settle.wait_for(lambda: request_id in self.settled or self.aborted.is_set(), timeout=60)

    def abort(self) -> None:
        self.aborted.set()
        with self.settle:
            self.settle.notify_all()
        for event in (
            {
                "type": "session.error",
                "properties": {
                    "sessionID": self.session,
                    "error": {"name": "MessageAbortedError", "data": {"message": "Aborted"}},
                },
            },
            {"type": "session.idle", "properties": {"sessionID": self.session}},
        ):
            self.publish(json.dumps(event))


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _body(self) -> Any:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode(errors="replace")

        def _send(self, status: int, body: Any) -> None:
            data = b"" if status == 204 else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            state.record("GET", path, None)
            if path == "/global/health":
                self._send(200, {"healthy": True, "version": "fake"})
            elif path == "/event":
                self._events()
            elif path == "/session/status":
                self._send(200, {})
            elif path.startswith("/session/"):
                sid = path.split("/")[2]
                self._send(
                    *((200, {"id": sid}) if sid == state.session else (404, {"name": "NotFoundError"}))
                )
            else:
                self._send(404, {"name": "NotFound"})

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            body = self._body()
            state.record("POST", path, body)
            status, answer = state.answer("POST", path)
            if path == "/session":
                self._send(200, {"id": state.session})
                return
            if path.endswith("/fork"):
                state.session = state.original + "_fork"
                self._send(200, {"id": state.session})
                return
            if path.endswith("/prompt_async"):
                self._send(204, None)
                threading.Thread(target=state.replay, daemon=True).start()
                return
            if path.endswith(("/abort", "/interrupt")):
                self._send(200, True)
                state.abort()
                return
            self._send(status, answer)
            match = re.search(r"/(que_[^/]+|per_[^/]+|frm_[^/]+)/(reply|reject|cancel)$", path)
            if match:
                with state.settle:
                    state.settled.add(match.group(1))
                    state.settle.notify_all()

        def _events(self) -> None:
            listener: queue.Queue[str] = queue.Queue()
            with state.lock:
                state.listeners.append(listener)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.end_headers()
            try:
                self.wfile.write(b'data: {"type":"server.connected","properties":{}}\n\n')
                self.wfile.flush()
                while True:
                    data = listener.get()
                    self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()
            except OSError:
                pass
            finally:
                with state.lock:
                    state.listeners.remove(listener)

    return Handler


def main() -> None:
    """Serve the transcript named by ``OPENCODE_FAKE_TRANSCRIPT`` until killed."""
    state = _State(Path(os.environ["OPENCODE_FAKE_TRANSCRIPT"]), Path(os.environ["OPENCODE_FAKE_LOG"]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    print(f"opencode server listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
