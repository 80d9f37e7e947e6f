"""The scripted model server: a real HTTP server on 127.0.0.1 that replays a script of rounds over four model
APIs and records every request it receives."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any
from typing import NoReturn
from typing import Self
from typing import cast
from urllib.parse import parse_qsl

import anyio.to_thread
import msgspec

from hive_conformance.script import ContextLengthFailure
from hive_conformance.script import DropConnectionFailure
from hive_conformance.script import HttpFailure
from hive_conformance.script import MalformedStreamFailure
from hive_conformance.script import Round

from .anthropic import AnthropicMessagesApi
from .gemini import GeminiApi
from .gemini import model_from_path
from .openai_chat import OpenAIChatApi
from .openai_chat import openai_error_body
from .openai_responses import OpenAIResponsesApi
from .recording import Endpoint
from .recording import RecordedRequest
from .wire import CREATED
from .wire import Call
from .wire import WireApi
from .wire import dumps
from .wire import stock_message

__all__ = ["DEFAULT_MODEL", "EXHAUSTED_STATUS", "Responder", "ScriptedModelServer"]

DEFAULT_MODEL = "scripted-model"
"""The model name the server reports when a request names none."""

EXHAUSTED_STATUS = 410
"""The status of the answer to a request that finds no round left: one that no SDK retries."""

Responder = Callable[[RecordedRequest], Round | None]
"""Chooses the round that answers a model request from the request itself (its ``round`` not yet set);
``None`` leaves the request to the script's queue."""

_CLOSE_TIMEOUT = 5.0
_STALL_POLL = 0.1
_GEMINI_PATH = re.compile(r"/models/[^/]+:(streamGenerateContent|generateContent|countTokens)$")
_DISCONNECTED = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
_APIS: dict[Endpoint, WireApi] = {
    api.endpoint: api for api in (OpenAIChatApi(), OpenAIResponsesApi(), AnthropicMessagesApi(), GeminiApi())
}


class _Stopped(Exception):
    """A reply ends early: the server is closing while it waits, or its client went away during a stall."""


class ScriptedModelServer:
    """Replays scripted rounds to whichever model API a request calls, one round per request, in order.

    Routes (matched on the path's end, so any base path prefix works): ``POST …/chat/completions`` (OpenAI
    Chat Completions), ``POST …/responses`` (OpenAI Responses), ``POST …/messages`` (Anthropic Messages),
    ``POST …/models/{model}:streamGenerateContent`` and ``:generateContent`` (Gemini). These consume a
    round each. ``GET …/models`` lists the model, and ``POST …/messages/count_tokens`` and
    ``…:countTokens`` answer a rough count; they consume none. A request that finds no round left is
    answered with status :data:`EXHAUSTED_STATUS` and an error saying so, and is recorded like any other.

    Use it as a context manager, from sync or async code (it serves from background threads)::

        with ScriptedModelServer([Round(parts=[ScriptText(chunks=["Hi"])])]) as server:
            client = OpenAI(base_url=server.url + "/v1", api_key="test")
            ...
            assert server.remaining == []
    """

    def __init__(
        self,
        rounds: Iterable[Round] = (),
        *,
        model: str = DEFAULT_MODEL,
        host: str = "127.0.0.1",
        port: int = 0,
        responder: Responder | None = None,
    ) -> None:
        """Prepare a server for ``rounds``; it binds ``host:port`` (0 picks a free port) on :meth:`start`.

        With a ``responder``, each model request is first offered to it: the round it returns answers the
        request (and counts as consumed), and only when it returns ``None`` is the next scripted round used.
        A responder serves clients that send an unpredictable number of requests (titles, probes), answering
        each from what it asks rather than from its position.
        """
        self.model = model
        """The model name reported when a request names none, and listed by ``GET …/models``."""
        self.responder = responder
        """Consulted for every model request before the script's queue (see :class:`Responder`)."""
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._rounds: deque[Round] = deque(rounds)
        self._next_round = 0
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._stopping = threading.Event()
        self._httpd: _HttpServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """Bind the port and start serving in a background thread."""
        if self._httpd is not None:
            raise RuntimeError("the scripted model server is already started")
        self._stopping.clear()
        httpd = _HttpServer((self._host, self._port), self)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-model-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving: wake replies waiting on a delay, close open connections, and free the port."""
        httpd, thread = self._httpd, self._thread
        if httpd is None or thread is None:
            return
        self._stopping.set()
        httpd.shutdown()
        thread.join()
        httpd.close_connections(_CLOSE_TIMEOUT)
        httpd.server_close()
        self._httpd = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await anyio.to_thread.run_sync(self.close)

    # -- what tests look at ----------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("the scripted model server is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The server's base URL, ``http://127.0.0.1:PORT`` (no trailing slash, no path)."""
        return f"http://{self._host}:{self.port}"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> list[Round]:
        """The rounds not yet consumed, in order (a copy)."""
        with self._lock:
            return list(self._rounds)

    @property
    def consumed(self) -> int:
        """How many rounds have been consumed."""
        with self._lock:
            return self._next_round

    @property
    def unanswered(self) -> list[RecordedRequest]:
        """Requests to a model API that found no round left."""
        with self._lock:
            return [r for r in self._requests if r.round is None and r.endpoint in _APIS]

    @property
    def errors(self) -> list[str]:
        """Tracebacks of failures inside the server itself (a bug here, not in the client)."""
        with self._lock:
            return list(self._errors)

    def add(self, *rounds: Round) -> None:
        """Append rounds to the script, also while serving."""
        with self._lock:
            self._rounds.extend(rounds)

    def reset(self, rounds: Iterable[Round] = ()) -> None:
        """Start over with ``rounds``, also while serving, so one server can serve scenario after scenario:
        the rounds not yet consumed are replaced, the recorded requests and errors are forgotten, and rounds
        count from 0 again (replies whose ids derive from the round's position come out the same whatever
        ran before)."""
        with self._lock:
            self._rounds = deque(rounds)
            self._next_round = 0
            self._requests = []
            self._errors = []

    def assert_consumed(self) -> None:
        """Raise ``AssertionError`` unless every round was consumed, no request found the script exhausted,
        and the server met no internal error."""
        with self._lock:
            problems: list[str] = []
            if self._rounds:
                problems.append(f"{len(self._rounds)} scripted round(s) were never requested")
            exhausted = [r for r in self._requests if r.round is None and r.endpoint in _APIS]
            problems += [
                f"request {r.index} ({r.method} {r.path}) found the script exhausted" for r in exhausted
            ]
            problems += [f"server error: {error}" for error in self._errors]
        if problems:
            raise AssertionError("scripted model server: " + "; ".join(problems))

    # -- serving ---------------------------------------------------------------------------------------------

    def _serve(self, handler: _Handler) -> None:
        exchange = _Exchange(handler, self._stopping)
        try:
            self._route(handler, exchange)
        except (*_DISCONNECTED, _Stopped):
            handler.close_connection = True
        except Exception:
            handler.close_connection = True
            text = traceback.format_exc()
            with self._lock:
                self._errors.append(text)
            if not exchange.started:
                exchange.send_json(500, openai_error_body(500, "scripted model server failed:\n" + text))

    def _route(self, handler: _Handler, exchange: _Exchange) -> None:
        raw = _read_body(handler)
        path, _, query_text = handler.path.partition("?")
        query = dict(parse_qsl(query_text, keep_blank_values=True))
        try:
            body: Any = msgspec.json.decode(raw) if raw else None
        except msgspec.DecodeError:
            body = None
        fields = cast("dict[str, Any]", body) if isinstance(body, dict) else {}
        method = handler.command
        endpoint, stream, sse = _classify(method, path, query, fields)
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value

        with self._lock:
            round_: Round | None = None
            round_index: int | None = None
            record = RecordedRequest(
                index=len(self._requests),
                method=method,
                path=path,
                query=query,
                headers=headers,
                body=body,
                raw_body=raw,
                endpoint=endpoint,
                stream=stream,
                round=None,
            )
            if endpoint in _APIS and self.responder is not None:
                round_ = self.responder(record)
            if endpoint in _APIS and round_ is None and self._rounds:
                round_ = self._rounds.popleft()
            if round_ is not None:
                round_index = self._next_round
                self._next_round += 1
                record = msgspec.structs.replace(record, round=round_index)
            self._requests.append(record)
            consumed = self._next_round

        if endpoint == "models":
            model = {"id": self.model, "object": "model", "created": CREATED, "owned_by": "hive-conformance"}
            exchange.send_json(200, {"object": "list", "data": [model]})
            return
        if endpoint == "count_tokens":
            tokens = max(1, len(raw) // 4)
            exchange.send_json(
                200, {"totalTokens": tokens} if "countTokens" in path else {"input_tokens": tokens}
            )
            return
        if endpoint == "unknown":
            message = f"scripted model server: no route for {method} {path}"
            exchange.send_json(404, openai_error_body(404, message))
            return

        api = _APIS[endpoint]
        if round_ is None or round_index is None:
            message = (
                f"scripted model server: request {record.index} ({method} {path}) found no scripted round left; "
                f"the script's {consumed} round(s) were all consumed"
            )
            exchange.send_json(
                EXHAUSTED_STATUS, api.error_body(EXHAUSTED_STATUS, message), {"x-should-retry": "false"}
            )
            return

        model = model_from_path(path) if endpoint == "gemini" else fields.get("model")
        call = Call(
            round_index=round_index,
            model=model if isinstance(model, str) and model else self.model,
            body=fields,
            stream=stream,
            sse=sse,
        )
        _reply(api, round_, call, exchange)


def _classify(
    method: str, path: str, query: dict[str, str], body: dict[str, Any]
) -> tuple[Endpoint, bool, bool]:
    """The route a request takes, whether it asks for a stream, and whether that stream is SSE."""
    asks_stream = body.get("stream") is True
    if method == "GET" and path.rstrip("/").endswith("/models"):
        return "models", False, False
    if method != "POST":
        return "unknown", False, False
    if path.endswith("/chat/completions"):
        return "openai_chat", asks_stream, True
    if path.endswith("/responses"):
        return "openai_responses", asks_stream, True
    if path.endswith("/messages/count_tokens"):
        return "count_tokens", False, False
    if path.endswith("/messages"):
        return "anthropic_messages", asks_stream, True
    match = _GEMINI_PATH.search(path)
    if match is not None:
        if match[1] == "countTokens":
            return "count_tokens", False, False
        streaming = match[1] == "streamGenerateContent"
        return "gemini", streaming, streaming and query.get("alt") == "sse"
    return "unknown", False, False


def _reply(api: WireApi, round_: Round, call: Call, exchange: _Exchange) -> None:
    """Answer one request with its round: an error, a stream, or a whole body."""
    failure = round_.failure
    headers = api.headers(call)
    if isinstance(failure, HttpFailure):
        extra = dict(headers)
        if failure.retry_after is not None:
            seconds = failure.retry_after
            extra["retry-after"] = str(int(seconds)) if seconds == int(seconds) else repr(seconds)
        extra.update(failure.headers)
        if failure.body is not None:
            exchange.send_json(failure.status, failure.body, extra)
        else:
            message = failure.message or stock_message(failure.status)
            exchange.send_json(failure.status, api.error_body(failure.status, message), extra)
        return
    if isinstance(failure, ContextLengthFailure):
        status, body = api.context_length_error(failure.message)
        exchange.send_json(status, body, headers)
        return

    cut = (
        failure.after_chunks if isinstance(failure, MalformedStreamFailure | DropConnectionFailure) else None
    )
    stall = round_.stall_after_chunks
    if not call.stream:
        if stall is not None:
            exchange.stall()
        exchange.wait(round_.chunk_delay * round_.chunk_count)
        data = dumps(api.body(round_, call))
        if isinstance(failure, DropConnectionFailure):
            exchange.send_partial(data, headers)
        elif isinstance(failure, MalformedStreamFailure):
            exchange.send_bytes(200, data[: len(data) // 2], "application/json", headers)
        else:
            exchange.send_bytes(200, data, "application/json", headers)
        return

    exchange.start_stream(api.stream_content_type(call), headers)
    sent = 0
    for frame in api.stream(round_, call):
        if stall is not None and (frame.closing or sent + frame.chunks > stall):
            exchange.stall()
        if cut is not None and (frame.closing or sent + frame.chunks > cut):
            break
        exchange.wait(round_.chunk_delay * frame.chunks)
        exchange.write_chunk(frame.data)
        sent += frame.chunks
    else:
        exchange.end_stream()
        return
    if isinstance(failure, DropConnectionFailure):
        exchange.drop()
    else:
        exchange.write_chunk(api.malformed_event(call) + api.stream_end(call))
        exchange.end_stream()


class _Exchange:
    """Writes one reply: a whole body, or a chunked stream flushed event by event."""

    def __init__(self, handler: _Handler, stopping: threading.Event) -> None:
        self._handler = handler
        self._stopping = stopping
        self.started = False
        """Whether the status line has been written (after which no other reply can be sent)."""

    def wait(self, seconds: float) -> None:
        if seconds > 0 and self._stopping.wait(seconds):
            raise _Stopped

    def stall(self) -> NoReturn:
        """Send nothing more until the server closes or the client goes away, then raise :class:`_Stopped`."""
        connection = self._handler.connection
        while not self._stopping.is_set():
            try:
                readable, _, _ = select.select([connection], [], [], _STALL_POLL)
                # An end of file (or a reset) on the socket: the client is gone.
                if readable and not connection.recv(1, socket.MSG_PEEK):
                    break
            except (OSError, ValueError):  # the socket was shut or closed under us
                break
            if readable:
                # The client sent bytes but is still there: wait without spinning on them.
                self._stopping.wait(_STALL_POLL)
        raise _Stopped

    def _head(self, status: int, headers: dict[str, str]) -> None:
        self.started = True
        handler = self._handler
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()

    def send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str]) -> None:
        self._head(status, {**headers, "content-type": content_type, "content-length": str(len(data))})
        self._handler.wfile.write(data)

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        if isinstance(body, str):
            self.send_bytes(status, body.encode(), "text/plain; charset=utf-8", headers or {})
        else:
            self.send_bytes(status, dumps(body), "application/json", headers or {})

    def send_partial(self, data: bytes, headers: dict[str, str]) -> None:
        """Promise the whole body, send half of it, and drop the connection."""
        full = {**headers, "content-type": "application/json", "content-length": str(len(data))}
        self._head(200, full)
        self._handler.wfile.write(data[: len(data) // 2])
        self.drop()

    def start_stream(self, content_type: str, headers: dict[str, str]) -> None:
        extra = {"content-type": content_type, "cache-control": "no-cache", "transfer-encoding": "chunked"}
        self._head(200, {**headers, **extra})

    def write_chunk(self, data: bytes) -> None:
        # One write per frame: the handler's socket writer is unbuffered, so each frame leaves at once.
        if data:
            self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_stream(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")

    def drop(self) -> None:
        """Close the socket now, in the middle of the message."""
        self._handler.close_connection = True
        with contextlib.suppress(OSError):
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        self._handler.connection.close()


class _Handler(BaseHTTPRequestHandler):
    """Hands every request to the owning :class:`ScriptedModelServer`."""

    protocol_version = "HTTP/1.1"
    # Streams are many small writes; without this, Nagle's algorithm holds events back.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._owner()._serve(self)  # pyright: ignore[reportPrivateUsage]

    def do_POST(self) -> None:
        self._owner()._serve(self)  # pyright: ignore[reportPrivateUsage]

    def do_PUT(self) -> None:
        self._owner()._serve(self)  # pyright: ignore[reportPrivateUsage]

    def do_PATCH(self) -> None:
        self._owner()._serve(self)  # pyright: ignore[reportPrivateUsage]

    def do_DELETE(self) -> None:
        self._owner()._serve(self)  # pyright: ignore[reportPrivateUsage]

    def _owner(self) -> ScriptedModelServer:
        return cast(_HttpServer, self.server).owner

    def log_message(self, format: str, *args: Any) -> None:
        """Stay quiet: tests read :attr:`ScriptedModelServer.requests` instead of a log."""


class _HttpServer(ThreadingHTTPServer):
    """A threading HTTP server that keeps track of its open connections so it can close them."""

    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    """The listen backlog (socketserver's default is 5): many clients connecting at once (a load benchmark)
    would otherwise see their connections refused and retried a second or more later."""

    def __init__(self, address: tuple[str, int], owner: ScriptedModelServer) -> None:
        self.owner = owner
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._connections_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="scripted-model-connection",
            daemon=True,
        )
        with self._connections_lock:
            self._connections[request] = thread
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.pop(request, None)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Connection failures are the client's business (a cancelled stream); say nothing."""

    def close_connections(self, timeout: float) -> None:
        """Shut every open connection and wait (at most ``timeout`` seconds) for their threads."""
        with self._connections_lock:
            open_ = list(self._connections.items())
        for connection, _ in open_:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + timeout
        for _, thread in open_:
            thread.join(max(0.0, deadline - time.monotonic()))


def _read_body(handler: _Handler) -> bytes:
    """The request body, whether sized by ``content-length`` or sent in chunks."""
    if handler.headers.get("transfer-encoding", "").lower() == "chunked":
        data = bytearray()
        while True:
            size = int(handler.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(data)
            data += handler.rfile.read(size)
            handler.rfile.readline()
    length = int(handler.headers.get("content-length") or 0)
    return handler.rfile.read(length) if length > 0 else b""
