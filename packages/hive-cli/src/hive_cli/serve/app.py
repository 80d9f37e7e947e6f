"""The routes of ``hive serve``: the client API of the turn-stream protocol's HTTP binding, under ``/api``.

- ``POST /api/sessions`` ``{"session_id"?, "working_directory"?, "backend"?, "model"?, "settings"?}`` → 201
  ``{"session_id": …}`` once the session is open (its ``session_started`` is the first event of its stream).
  ``settings`` are the session's own, over the server's configuration (:mod:`hive_cli.serve.settings`). An ended
  session opened again goes on after the events it has.
- ``GET /api/sessions`` → ``{"sessions": [...]}``, newest first; ``GET /api/sessions/{id}`` → one of them.
- ``GET /api/sessions/{id}/events``: Server-Sent Events, ``id:`` the event's 1-based position, ``data:`` its
  canonical line; ``Last-Event-ID`` resumes after that event; the stream ends once the session has ended.
- ``GET /api/sessions/{id}/messages`` → ``{"messages": [{"turn": n, "content": …}]}``: the user's messages, which
  the event stream does not carry (the n-th is the n-th turn's), so a page opened again shows them.
- ``POST /api/sessions/{id}/requests``: request lines (JSON Lines), checked whole before any is passed on.
- ``POST /api/sessions/{id}/close``: ends the session's input, as end of file does on stdio.
- ``DELETE /api/sessions/{id}``: forgets an ended session (its events and its stored conversation): its id opens
  a new session afterwards. 409 while it is live.
- ``POST /api/ag-ui``: the AG-UI protocol's run (a ``RunAgentInput`` in, AG-UI events out as SSE), its thread a
  session of this server (:mod:`hive_cli.serve.ag_ui`).

``/`` is the web chat page (``page/``, its scripts and styles under ``/page/``), sent with a Content-Security-Policy
that lets it run only its own scripts and reach only this server.

Errors are JSON ``{"error": message, "code": …}``: 400 a malformed body (a request line it cannot read also writes
the ``error`` event stdio answers it with), 404 an unknown session, 409 an approval or question answer that matches
nothing waiting, a closed input or a live session deleted, 429 past ``--max-sessions``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any
from typing import Final

import anyio
import msgspec
from anyio.abc import TaskGroup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse
from starlette.routing import Mount
from starlette.routing import Route
from starlette.staticfiles import StaticFiles

from hive_cli.assemble import HostOptions
from hive_cli.assemble import SessionLayer
from hive_cli.log_records import log_json
from hive_cli.session_store import open_session_store
from hive_core.session_id import new_session_id
from hive_core.sessions import SessionInUse
from hive_core.sessions import SessionStoreError
from hive_core.sessions import execution_log
from hive_protocol import sse_event

from .ag_ui import AgUiEndpoint
from .agents import EVENT_POSITION_HEADER
from .agents import AgentCommand
from .agents import EventsRefused
from .hosted import Carrier
from .hosted import HostedSession
from .hosted import RequestRefused
from .log_store import LoggedSession
from .log_store import ServeLogStore
from .settings import SessionSettings
from .settings import SettingsRefused
from .settings import decode_settings

if TYPE_CHECKING:
    from hive_cli.engine import Engine

    from .shared_log import SharedServeLog

__all__ = ["ServeApp", "SessionRequest"]

PING_SECONDS: Final = 15.0
"""How often an idle event stream sends a comment, so proxies and browsers keep it open."""
SAVE_SECONDS: Final = 0.25
"""How long streamed events may wait before they are written to the store."""
MAX_BODY_BYTES: Final = 16 * 1024 * 1024
_SESSION_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
EXTERNAL: Final = "external"
_LISTEN_AGAIN_SECONDS: Final = 5.0
"""The backend of a session whose agent connects by itself to the agent endpoints."""
PAGE: Final = Path(__file__).parent / "page"
"""The web chat page's files: ``index.html`` at ``/``, the rest under ``/page/``."""
PAGE_HEADERS: Final = {
    # Model output is shown on the page: should anything get past the sanitiser, it can still run no script
    # but the page's own files, load nothing from elsewhere, and reach no other server.
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


class SessionRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The body of ``POST /api/sessions``."""

    session_id: str | None = None
    """The id to open (or resume, from the session store); a new one when absent."""
    working_directory: str | None = None
    """The project's folder; the server's own when absent."""
    backend: str | None = None
    """``hive`` (the built-in loop, the default), a coding-agent CLI's name, or ``external``: an agent connects to
    the session's agent endpoints by itself."""
    model: str | None = None
    """The model, replacing the configured one."""
    settings: dict[str, object] | None = None
    """The session's own settings over the server's configuration (:class:`SessionSettings`'s keys only); for
    sessions that run in the server."""


class ServeApp:
    """The sessions of one ``hive serve`` and the Starlette app that serves them."""

    def __init__(
        self,
        group: TaskGroup,
        *,
        defaults: HostOptions,
        max_sessions: int | None = None,
        isolate: AgentCommand | None = None,
        store: ServeLogStore | None = None,
        engine: Engine | None = None,
        shared: SharedServeLog | None = None,
    ) -> None:
        self._group = group
        self._defaults = defaults
        self.max_sessions = max_sessions
        self.isolate = isolate
        """How to start a session's own agent process (``--isolate``); ``None`` to run sessions in the server."""
        self.store = store
        """Where sessions and their events are kept across restarts (``None``: in memory only)."""
        self.engine = engine
        """The engine new sessions run on (``--engine``); ``None`` to run them here."""
        self.shared = shared
        """With an engine: the store every front end keeps the sessions and their events in."""
        self.sessions: dict[str, HostedSession] = {}
        self.app: Final = Starlette(
            routes=[
                Route("/", self._home, methods=["GET"]),
                Mount("/page", app=_PageFiles(directory=PAGE)),
                Route("/api/sessions", self._create, methods=["POST"]),
                Route("/api/sessions", self._list, methods=["GET"]),
                Route("/api/sessions/{session_id}", self._get, methods=["GET"]),
                Route("/api/sessions/{session_id}", self._delete, methods=["DELETE"]),
                Route("/api/sessions/{session_id}/events", self._events, methods=["GET"]),
                Route("/api/sessions/{session_id}/messages", self._messages, methods=["GET"]),
                Route("/api/sessions/{session_id}/log", self._log, methods=["GET"]),
                Route("/api/sessions/{session_id}/requests", self._requests, methods=["POST"]),
                Route("/api/sessions/{session_id}/close", self._close, methods=["POST"]),
                Route("/api/agent/{session_id}/ready", self._agent_ready, methods=["POST"]),
                Route("/api/agent/{session_id}/inbox", self._agent_inbox, methods=["GET"]),
                Route("/api/agent/{session_id}/events", self._agent_events, methods=["POST"]),
                Route("/api/ag-ui", AgUiEndpoint(self).run, methods=["POST"]),
            ],
            exception_handlers={_TooLarge: _too_large},
        )

    def _options(
        self, cwd: Path, *, model: str | None, agent: str | None, layer: SessionLayer | None = None
    ) -> HostOptions:
        """A session's options: the server's defaults (provider, pre-approvals, a CLI's endpoint and mode) with the
        session's folder, model, backend and settings."""
        return replace(self._defaults, cwd=cwd, model=model, agent=agent, layer=layer)

    def _hosted(
        self,
        session_id: str,
        options: HostOptions,
        carrier: Carrier,
        created_at: float,
        settings: SessionSettings | None = None,
    ) -> HostedSession:
        """A session of this server (not yet running)."""
        if carrier == "engine":
            session = HostedSession(
                session_id, options, created_at, carrier=carrier, engine=self.engine, shared=self.shared
            )
        elif carrier == "isolated" and self.isolate is not None:
            session = HostedSession(
                session_id,
                options,
                created_at,
                carrier=carrier,
                agent_command=self.isolate.command(session_id, options),
                agent_environment=self.isolate.environment,
                store=self.store,
            )
        else:
            session = HostedSession(
                session_id, options, created_at, carrier=carrier, store=self.store, settings=settings
            )
        if carrier == "external":
            session.backend = EXTERNAL
        return session

    async def keep_flushing(self, every: float = SAVE_SECONDS) -> None:
        """Write every session's pending streamed events to the store, ``every`` seconds, until cancelled."""
        while True:
            await anyio.sleep(every)
            if self.store is not None:
                self.store.append_many(
                    [(session.session_id, session.take_unsaved()) for session in self.sessions.values()]
                )

    async def restore(self) -> int:
        """Take back the sessions a previous run of the server kept: every one is listed and replays its events;
        one that had not ended is opened again (an approval that waited is asked again). Returns how many.

        With an engine, the sessions are those of the shared store, whichever front end opened them: this one
        follows every one that has not ended."""
        if self.shared is not None:
            await self._adopt_new()
            return len(self.sessions)
        if self.store is None:
            return 0
        for kept in self.store.sessions():
            carrier: Carrier = (
                "isolated"
                if kept.carrier == "isolated" and self.isolate
                else ("external" if kept.carrier == "external" else "in_process")
            )
            session = self._kept(
                kept, carrier, self.store.events(kept.session_id), self.store.messages(kept.session_id)
            )
            if not kept.ended:
                await self._group.start(session.run)
        return len(self.sessions)

    async def _adopt_new(self) -> None:
        """Serve every session of the shared store this front end does not serve yet (read on a thread: the
        server answers meanwhile)."""
        shared = self.shared
        assert shared is not None
        served = set(self.sessions)

        def read() -> list[tuple[LoggedSession, list[bytes], list[str]]]:
            return [
                (kept, shared.events(kept.session_id), shared.messages(kept.session_id))
                for kept in shared.sessions()
                if kept.session_id not in served
            ]

        for kept, events, messages in await anyio.to_thread.run_sync(read):
            if kept.session_id not in self.sessions:
                self._adopt(kept, events, messages)

    def _adopt(self, kept: LoggedSession, events: list[bytes], messages: list[str]) -> HostedSession:
        """A session of the shared store as this front end serves it: its events so far, then the rest as they
        come (when it has not ended)."""
        session = self._kept(kept, "engine", events, messages)
        if not kept.ended:
            self._group.start_soon(session.run)
        return session

    def _kept(
        self, kept: LoggedSession, carrier: Carrier, events: Iterable[bytes], messages: list[str]
    ) -> HostedSession:
        """A kept session, its events and messages taken back, listed by this server (not yet running)."""
        options = self._options(
            Path(kept.working_directory),
            model=kept.model,
            agent=None if kept.backend in (EXTERNAL, "hive") else kept.backend,
            layer=None if kept.settings is None else kept.settings.layer(),
        )
        session = self._hosted(kept.session_id, options, carrier, kept.created_at, kept.settings)
        session.title = kept.title
        session.restore(events, messages)
        session.updated_at = kept.updated_at
        self.sessions[kept.session_id] = session
        if kept.ended:
            session.ended = session.input_closed = True
        return session

    async def follow_shared(self) -> None:
        """Wake each session this front end follows when the shared store announces events of it, until
        cancelled (with an engine only)."""
        shared = self.shared
        if shared is None:
            return
        stopped = False

        def woken(session_id: str) -> None:
            session = self.sessions.get(session_id)
            if session is not None:
                anyio.from_thread.run_sync(session.remote_changed)

        def wake_all() -> None:
            for session in list(self.sessions.values()):
                session.remote_changed()

        def listening() -> None:
            # Appends made while nobody listened were announced to no one: every reader reads once more.
            anyio.from_thread.run_sync(wake_all)

        try:
            while True:
                try:
                    await anyio.to_thread.run_sync(
                        lambda: shared.listen(woken, lambda: stopped, listening), abandon_on_cancel=True
                    )
                except SessionStoreError as exc:
                    # Readers are woken all at once when listening again; the server goes on.
                    sys.stderr.write(f"hive: not woken by the shared store ({exc}); listening again\n")
                    await anyio.sleep(_LISTEN_AGAIN_SECONDS)
        finally:
            stopped = True

    def stop(self) -> None:
        """Stop every session (their running turns are cancelled and still end with ``turn_end``)."""
        for session in self.sessions.values():
            session.stop()

    async def _home(self, request: Request) -> Response:
        return FileResponse(PAGE / "index.html", media_type="text/html", headers=PAGE_HEADERS)

    async def _create(self, request: Request) -> Response:
        body = await _body(request)
        try:
            wanted = msgspec.json.decode(body or b"{}", type=SessionRequest)
        except msgspec.DecodeError as exc:
            return _error(400, f"not a session request: {exc}", "bad_request")
        opened = await self.open(wanted)
        if isinstance(opened, Response):
            return opened
        return JSONResponse({"session_id": opened.session_id}, status_code=201)

    async def open(self, wanted: SessionRequest) -> HostedSession | Response:
        """Open the session ``wanted`` asks for (an ended one goes on), or the error response that refuses it."""
        live = sum(1 for session in self.sessions.values() if not session.ended)
        if self.max_sessions is not None and live >= self.max_sessions:
            return _error(
                429,
                f"{live} sessions are live, the most this server runs (--max-sessions)",
                "too_many_sessions",
            )
        session_id = new_session_id() if wanted.session_id is None else wanted.session_id
        if not _SESSION_ID.fullmatch(session_id):
            return _error(
                400,
                "a session id is 1 to 128 letters, digits and . _ : - (starting with a letter or digit)",
                "bad_request",
            )
        existing = await self._known(session_id)
        if existing is not None and not existing.ended:
            return _error(409, f"session {session_id!r} is already open", "session_open")
        cwd = Path(wanted.working_directory) if wanted.working_directory else self._defaults.cwd
        if not cwd.is_dir():
            return _error(400, f"no such folder: {cwd}", "bad_request")
        external = wanted.backend == EXTERNAL
        if external and self.engine is not None:
            return _error(
                400,
                "sessions on an engine run on its workers: the external backend is not one",
                "bad_request",
            )
        settings: SessionSettings | None = None
        if wanted.settings is not None:
            if external or self.isolate is not None or self.engine is not None:
                return _error(
                    400,
                    "settings apply to sessions whose turns run in the server, not in an agent process of their "
                    "own (--isolate, the external backend)",
                    "bad_request",
                )
            try:
                settings = decode_settings(wanted.settings)
            except SettingsRefused as refused:
                return _error(400, str(refused), "bad_request")
        options = self._options(
            cwd,
            model=wanted.model or self._defaults.model,
            agent=None if external else wanted.backend or self._defaults.agent,
            layer=None if settings is None else settings.layer(),
        )
        carrier: Carrier = (
            "engine"
            if self.engine is not None
            else "external"
            if external
            else "isolated"
            if self.isolate is not None
            else "in_process"
        )
        session = self._hosted(session_id, options, carrier, time.time(), settings)
        if existing is not None:
            # An ended session opened again goes on: its stream continues after the events it already has.
            session.created_at, session.title = existing.created_at, existing.title
            session.restore(existing.log, existing.messages)
        self.sessions[session_id] = session
        await self._group.start(session.run)
        if session.ended and session.runner is None:
            del self.sessions[session_id]
            return _error(400, _last_error(session), "session_failed")
        return session

    async def _list(self, request: Request) -> Response:
        if self.shared is not None:
            await self._adopt_new()
        ordered = sorted(self.sessions.values(), key=lambda session: session.created_at, reverse=True)
        return JSONResponse({"sessions": [session.summary() for session in ordered]})

    async def _get(self, request: Request) -> Response:
        session = await self._session(request)
        return _unknown(request) if session is None else JSONResponse(session.summary())

    async def _delete(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        session_id = session.session_id
        if not session.ended:
            return _error(
                409, f"session {session_id!r} is live: close it and let its turns end first", "session_open"
            )
        try:
            _forget_conversation(session_id)
        except SessionInUse as exc:
            return _error(409, str(exc), "session_in_use")
        del self.sessions[session_id]
        if session.keeper is not None:
            session.keeper.forget(session_id)
        return Response(status_code=204)

    async def _events(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        last = request.headers.get("last-event-id", "0").strip() or "0"
        if not last.isdigit():
            return _error(400, f"Last-Event-ID must be an event's position, not {last!r}", "bad_request")
        return StreamingResponse(
            _stream(session, int(last)),
            media_type="text/event-stream",
            headers={"cache-control": "no-store", "x-accel-buffering": "no"},
        )

    async def _messages(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        numbered = [
            {"turn": number, "content": content} for number, content in enumerate(session.messages, 1)
        ]
        return JSONResponse({"messages": numbered})

    async def _log(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        lines = await anyio.to_thread.run_sync(_execution_log, session.session_id)
        return Response(lines, media_type="application/jsonl", headers={"cache-control": "no-store"})

    async def _requests(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        body = await _body(request)
        try:
            accepted = session.send(body)
        except RequestRefused as refused:
            return _error(refused.status, str(refused), refused.code)
        return JSONResponse({"accepted": accepted}, status_code=202)

    async def _close(self, request: Request) -> Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        session.close_input()
        return Response(status_code=204)

    async def _session(self, request: Request) -> HostedSession | None:
        return await self._known(request.path_params["session_id"])

    async def _known(self, session_id: str) -> HostedSession | None:
        found = self.sessions.get(session_id)
        shared = self.shared
        if found is None and shared is not None and _SESSION_ID.fullmatch(session_id):
            # Opened by another front end: served here from the shared store.
            def read() -> tuple[LoggedSession, list[bytes], list[str]] | None:
                kept = shared.session(session_id)
                return (
                    None if kept is None else (kept, shared.events(session_id), shared.messages(session_id))
                )

            loaded = await anyio.to_thread.run_sync(read)
            if loaded is not None:
                return self.sessions.get(session_id) or self._adopt(*loaded)
        return found

    async def _agent_session(self, request: Request) -> HostedSession | Response:
        session = await self._session(request)
        if session is None:
            return _unknown(request)
        if session.carrier == "in_process":
            return _error(
                409, "this session's turns run in the server: it takes no agent", "no_agent_session"
            )
        if session.ended:
            return _error(409, "the session has ended", "session_closed")
        return session

    async def _agent_ready(self, request: Request) -> Response:
        session = await self._agent_session(request)
        if isinstance(session, Response):
            return session
        session.link.ready()
        return Response(status_code=204)

    async def _agent_inbox(self, request: Request) -> Response:
        session = await self._agent_session(request)
        if isinstance(session, Response):
            return session
        last = request.headers.get("last-event-id", "").strip()
        if last and not last.isdigit():
            return _error(400, f"Last-Event-ID must be a request's position, not {last!r}", "bad_request")
        after = int(last) if last else session.link.delivered
        return StreamingResponse(_inbox(session, after), media_type="text/event-stream")

    async def _agent_events(self, request: Request) -> Response:
        session = await self._agent_session(request)
        if isinstance(session, Response):
            return session
        try:
            session.agent_events(request.headers.get(EVENT_POSITION_HEADER), await _body(request))
        except EventsRefused as refused:
            return _error(409, str(refused), "events_out_of_order")
        return Response(status_code=204)


async def _inbox(session: HostedSession, after: int) -> AsyncIterator[bytes]:
    """The session's requests for its agent after position ``after``, then each new one, while the session lives."""
    position = max(0, after)
    link = session.link
    while not session.ended:
        while position < len(link.inbox):
            position += 1
            session.delivered(position)
            yield sse_event(link.inbox[position - 1], position)
        with anyio.move_on_after(PING_SECONDS) as waited:
            await session.changed()
        if waited.cancelled_caught:
            yield b": ping\n\n"


async def _stream(session: HostedSession, after: int) -> AsyncIterator[bytes]:
    """The session's events after position ``after`` as SSE, then each new one, until the session ended."""
    position = max(0, after)
    log = session.log
    while True:
        if position < len(log):
            # Kept before shown: a reader's Last-Event-ID must still name an event after the server died.
            session.flush()
            # Everything already logged goes in one write: a streaming turn's deltas arrive in bursts.
            end = len(log)
            yield b"".join(sse_event(log[index].rstrip(b"\n"), index + 1) for index in range(position, end))
            position = end
            continue
        if session.ended:
            return
        with anyio.move_on_after(PING_SECONDS) as waited:
            await session.changed()
        if waited.cancelled_caught:
            yield b": ping\n\n"


class _PageFiles(StaticFiles):
    """The page's scripts and styles, with the page's headers."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers.update(PAGE_HEADERS)
        return response


class _TooLarge(Exception):
    pass


async def _body(request: Request) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise _TooLarge
    return bytes(body)


async def _too_large(request: Request, exc: Exception) -> Response:
    return _error(413, f"the body is larger than {MAX_BODY_BYTES} bytes", "too_large")


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": message, "code": code}, status_code=status)


def _unknown(request: Request) -> JSONResponse:
    return _error(404, f"no session {request.path_params['session_id']!r}", "unknown_session")


def _forget_conversation(session_id: str) -> None:
    """Delete the stored conversation of ``session_id`` (none is fine); raises ``SessionInUse`` when another
    process serves it."""
    with open_session_store() as store, store.lease(session_id):
        store.delete(session_id)


def _execution_log(session_id: str) -> bytes:
    """The session's execution log as JSON Lines (as ``hive logs -o json`` prints it); empty while nothing of it
    was recorded (a session whose agent is external records none)."""
    with open_session_store() as store:
        if store.get(session_id) is None:
            return b""
        records = execution_log(store.entries(session_id))
        return "".join(log_json(record) + "\n" for record in records).encode()


def _last_error(session: HostedSession) -> str:
    for line in reversed(session.log):
        event = json.loads(line)
        if event.get("type") == "error":
            return str(event.get("message"))
    return "the session could not be opened"
