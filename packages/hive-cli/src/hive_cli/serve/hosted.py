"""One session ``hive serve`` hosts: the session runner, its input, and the log of every event it wrote.

A client reads the log as Server-Sent Events from any position (``Last-Event-ID``), as often as it reconnects:
nothing is lost and nothing is sent twice to a reader that names the last event it saw. Requests are checked whole
before any of them is passed on, so a malformed body changes nothing.
"""

from __future__ import annotations

import math
import subprocess
import time
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Literal

import anyio
from anyio.abc import TaskStatus

from hive_cli.assemble import HostOptions
from hive_cli.errors import USER_ERRORS
from hive_core import SessionRunner
from hive_core.child_processes import SupervisedProcess
from hive_core.child_processes import open_child
from hive_core.runners import Feed
from hive_core.sessions import SessionStoreError
from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import HitlResponseRequest
from hive_protocol import QuestionRequestEvent
from hive_protocol import QuestionResponseRequest
from hive_protocol import Request
from hive_protocol import SessionStartedEvent
from hive_protocol import ShutdownRequest
from hive_protocol import ToolEndEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UnknownEvent
from hive_protocol import UnreadableRequest
from hive_protocol import UserMessageRequest
from hive_protocol import decode_event
from hive_protocol import decode_request
from hive_protocol import encode
from hive_protocol import excerpt

from .agents import AgentLink
from .agents import session_spec
from .log_store import LoggedSession
from .log_store import ServeLogStore
from .settings import SessionSettings

if TYPE_CHECKING:
    from hive_cli.engine import Engine
    from hive_cli.engine import SessionSpec

    from .shared_log import SharedServeLog

__all__ = ["HostedSession", "RequestRefused", "SessionStatus"]

Carrier = Literal["in_process", "isolated", "external", "engine"]
"""Where a hosted session's turns run: in the server; in a ``hive run --http`` child of its own (``--isolate``);
in an agent that connects to the agent endpoints by itself (``"backend": "external"``); on the workers of an
engine (``--engine``), whose events the server reads back from the shared store."""

SessionStatus = Literal["starting", "idle", "running", "waiting", "ended"]
"""What a hosted session is doing: opening; no turn; a turn runs; a turn waits for an approval; its input closed
and its last turn ended (or it failed to open)."""

_TITLE_CHARS = 80
_STREAMED = (b'{"type":"text_delta"', b'{"type":"thinking_delta"')
"""Events written to the store in batches; any other is written at once, with what waits before it."""
_SAVE_BATCH = 256
_FOLLOW_SECONDS = 15.0
"""How long a reader of the shared store waits for an announcement before reading anyway: only a safety net (the
listener wakes every reader each time it starts listening), so that idle sessions cost the store nothing."""
_ENGINE_ATTEMPTS = 60
"""Tries, a second apart, to pass a request on to an engine that does not answer (a minute: a restart)."""
_QUIET_PREFIXES = (b'{"type":"session_started"', b'{"type":"error"')
"""Events that may stand after a turn's end without a turn having begun."""


class RequestRefused(Exception):
    """A request body the session cannot take; nothing of it was passed on."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


@dataclass
class HostedSession:
    """A session served by ``hive serve`` (see the module's documentation)."""

    session_id: str
    options: HostOptions
    created_at: float
    carrier: Carrier = "in_process"
    agent_command: Sequence[str] = ()
    """For an isolated session: the command of its agent (``hive run --http URL --session-id ID …``)."""
    agent_environment: Mapping[str, str] | None = None
    store: ServeLogStore | None = None
    """Where the session and its events are kept across restarts of the server (``None``: in memory only)."""
    settings: SessionSettings | None = None
    """The settings it was opened with (its :attr:`options` hold them as a layer), kept with it."""
    engine: Engine | None = None
    """For a session on an engine: the engine its requests are passed on to."""
    shared: SharedServeLog | None = None
    """For a session on an engine: the shared store its record, messages and events are kept in (by whichever
    front end or worker writes them)."""

    def __post_init__(self) -> None:
        self.backend = self.options.agent or "hive"
        self.model = self.options.model
        self.title = ""
        """The first words of the first message."""
        self.updated_at = self.created_at
        self.feed = Feed[bytes]()
        """The events' feed, which readers follow; :meth:`changed` wakes on its :meth:`~Feed.notify`."""
        self.log: list[bytes] = self.feed.items
        """Every event written, encoded (the SSE ``id`` of ``log[i]`` is ``i + 1``)."""
        self.messages: list[str] = []
        """The user's messages, in order: the n-th is the message of the n-th turn."""
        self.runner: SessionRunner | None = None
        self.opened = False
        self.link = AgentLink()
        """The agent endpoints' side of an isolated or external session."""
        self.agent: SupervisedProcess | None = None
        """An isolated session's running agent process."""
        self.input_closed = False
        self.ended = False
        self.suspended = False
        """Whether the server stopped it: it is opened again when the server starts again."""
        self._turns_sent = 0
        self._turns_ended = 0
        self._waiting: dict[str, _Ask] = {}
        """Approvals and questions asked and not yet answered, by their request id."""
        self._resume_agent = False
        """Whether an isolated session restored with an approval waiting starts its agent at once (it asks again)."""
        self._unsaved: list[tuple[int, bytes]] = []
        """Logged events not yet written to the store: (position, line)."""
        self._send, self._receive = anyio.create_memory_object_stream[bytes | Request](math.inf)
        self._remote = anyio.Event()
        """Set when the shared store announces new events of the session (an engine's session)."""

    @property
    def status(self) -> SessionStatus:
        if self.ended:
            return "ended"
        if not self.opened:
            return "starting"
        if self._turns_ended >= self._turns_sent:
            return "idle"
        return "waiting" if self._waiting else "running"

    @property
    def waiting(self) -> list[str]:
        """The ids of the approvals and questions the running turn asked and that wait for their answer, in the
        order they were asked."""
        return list(self._waiting)

    @property
    def queued(self) -> int:
        """Messages sent and not yet answered, the running turn's included."""
        return max(0, self._turns_sent - self._turns_ended)

    def summary(self) -> dict[str, object]:
        """The session as ``GET /api/sessions`` lists it."""
        return {
            "session_id": self.session_id,
            "title": self.title,
            "backend": self.backend,
            "model": self.model,
            "status": self.status,
            "queued": self.queued,
            "events": len(self.log),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
        }

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Open the session and serve it until its input closes and its last turn ends."""
        self._save()
        try:
            if self.carrier == "in_process":
                await self._run_in_process(task_status)
            elif self.carrier == "engine":
                await self._run_on_engine(task_status)
            else:
                self.opened = True
                task_status.started()
                self._notify()
                if self.carrier == "isolated":
                    await self._run_isolated()
                else:
                    while not self._agent_done():
                        await self.changed()
        finally:
            self.ended = True
            self.flush()
            if not self.suspended:
                self._save()
            self._notify()

    async def _run_in_process(self, task_status: TaskStatus[None]) -> None:
        from hive_cli.serving import open_server_session

        try:
            async with open_server_session(self.options, self.session_id) as runner:
                self.runner = runner
                self.opened = True
                task_status.started()
                self._notify()
                async with self._receive:
                    await runner.serve(self._receive, self.emit)
        except USER_ERRORS as exc:
            self.emit(ErrorEvent(message=str(exc), code="internal"))
            if not self.opened:
                task_status.started()

    @property
    def spec(self) -> SessionSpec:
        """What an engine's worker opens the session with."""
        return session_spec(self.session_id, self.options)

    async def _run_on_engine(self, task_status: TaskStatus[None]) -> None:
        """Open the session on the engine, pass its requests on, and follow its events in the shared store until
        its input closed and its last turn ended (or the server stops)."""
        assert self.engine is not None
        try:
            await self.engine.open(self.spec)
        except Exception as exc:
            # Only here: the shared store may be what failed, and the reason is what the opener is answered.
            self._mirror(
                encode(ErrorEvent(message=f"the engine cannot run the session: {exc}", code="internal"))
            )
            task_status.started()
            return
        self.opened = True
        task_status.started()
        self._notify()
        async with anyio.create_task_group() as group:
            group.start_soon(self._pass_on)
            await self._follow()
            group.cancel_scope.cancel()

    async def _pass_on(self) -> None:
        assert self.engine is not None
        async with self._receive:
            async for request in self._receive:
                await self._to_engine(
                    request if isinstance(request, bytes) else encode(request).rstrip(b"\n")
                )
        if self.input_closed:
            await self._to_engine(encode(ShutdownRequest()).rstrip(b"\n"))

    async def _to_engine(self, line: bytes) -> None:
        """Pass one request on, trying again while the engine is away (a restart); after that, say it was lost."""
        assert self.engine is not None
        for attempt in range(_ENGINE_ATTEMPTS):
            try:
                await self.engine.send(self.spec, line)
                return
            except Exception as exc:
                if attempt + 1 == _ENGINE_ATTEMPTS:
                    self.emit(
                        ErrorEvent(
                            message=f"the engine did not take a request ({exc}): it was not run",
                            code="internal",
                        )
                    )
                    return
                await anyio.sleep(1.0)

    async def _follow(self) -> None:
        shared = self.shared
        assert shared is not None
        while True:
            try:
                lines = await anyio.to_thread.run_sync(
                    lambda: shared.events(self.session_id, after=len(self.log))
                )
            except SessionStoreError:
                lines = []  # the store is away (a restart): read again at the next wake or timeout
            for line in lines:
                self._mirror(line)
            if lines:
                self._notify()
            if self.suspended or (self.input_closed and self.queued == 0):
                return
            # Woken by the store's announcement, or by the listener starting again (after a store's restart).
            with anyio.move_on_after(_FOLLOW_SECONDS):
                await self._remote.wait()
            self._remote = anyio.Event()

    def remote_changed(self) -> None:
        """The shared store has new events of the session."""
        self._remote.set()

    def _mirror(self, line: bytes) -> None:
        """Take one event line of the shared store (an engine's session)."""
        self.log.append(line)
        self.updated_at = time.time()
        event = decode_event(line)
        if isinstance(event, UnknownEvent):
            return
        self._track(event)
        if not line.startswith((*_QUIET_PREFIXES, b'{"type":"turn_end"')):
            # A turn another front end was sent is running.
            self._turns_sent = max(self._turns_sent, self._turns_ended + 1)

    async def _run_isolated(self) -> None:
        """One agent process at a time: started when there is something for it to read, started again after one
        died (its turn ended with an ``error``), until the input closed and every turn ended."""
        while not self._agent_done():
            if self.link.delivered >= len(self.link.inbox) and not self._resume_agent:
                await self.changed()
                continue
            self._resume_agent = False
            self.agent = await open_child(
                list(self.agent_command),
                cwd=self.options.cwd,
                env=self.agent_environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=None,  # the agent's complaints go where the server's own do
            )
            try:
                code = await self.agent.wait()
            finally:
                with anyio.CancelScope(shield=True):
                    self.agent.kill_tree()
                    await self.agent.aclose()
            self._agent_died(code)

    def _agent_died(self, code: int) -> None:
        """End every turn the dead agent was sent and did not end: the running one, and those it had queued."""
        outstanding = self.link.delivered_turns() - self._turns_ended
        for index in range(outstanding):
            if index == 0:
                message = f"the session's agent process exited (status {code}) during the turn"
            else:
                message = f"not run: the session's agent process exited (status {code}) before this turn"
            self.emit(ErrorEvent(message=message, code="internal"))
            self.emit(TurnEndEvent())
        self._waiting.clear()

    def _agent_done(self) -> bool:
        return self.input_closed and self.queued == 0 and self.link.delivered >= len(self.link.inbox)

    def stop(self) -> None:
        """End the session now, as a signal does: the running turn is cancelled, queued ones dropped; a
        restarted server opens it again."""
        self.suspended = True
        if self.carrier == "engine":
            self._remote.set()  # the session goes on on the engine: only this server stops following it
            return
        self.input_closed = True
        self._send.close()
        if self.runner is not None:
            self.runner.stop()
        if self.carrier != "in_process":
            self._turns_ended = self._turns_sent
            self.link.delivered = len(self.link.inbox)
            if self.agent is not None:
                self.agent.kill_tree()
            self._notify()

    def delivered(self, position: int) -> None:
        """The agent was sent the inbox up to ``position``."""
        if position > self.link.delivered:
            self.link.delivered = position
            self._notify()

    def agent_events(self, first: str | None, body: bytes) -> None:
        """Log the lines of an agent's events batch that were not logged before (see :class:`AgentLink`)."""
        for line in self.link.take(first, body):
            event = decode_event(line)
            if isinstance(event, UnknownEvent):
                self._log(line + b"\n")
                self._notify()
            else:
                self.emit(event)

    def emit(self, event: Event) -> None:
        """The runner's event sink: log the event and wake the readers."""
        if isinstance(event, SessionStartedEvent) and self.log:
            return  # a session opened again (a new agent, a restarted server) is not news to its readers
        if self.shared is not None:
            # The shared store numbers the events of every writer; this server reads its own back like the rest.
            self.shared.append(self.session_id, [encode(event).rstrip(b"\n")])
            self._remote.set()
            return
        self._log(encode(event))
        self._track(event)
        self._notify()

    def restore(self, lines: Iterable[bytes], messages: Iterable[str] = ()) -> None:
        """Take back the events and user messages a restarted server kept (no reader has seen them from this
        server yet)."""
        self.messages.extend(messages)
        if self.carrier == "engine":
            for line in lines:
                self._mirror(line)
            self._turns_sent = max(self._turns_sent, len(self.messages))
            return
        for line in lines:
            self.log.append(line)
            event = decode_event(line)
            if not isinstance(event, UnknownEvent):
                self._track(event)
        started_turn = any(not line.startswith(_QUIET_PREFIXES) for line in self.log[self._last_turn_end() :])
        self._turns_sent = self._turns_ended + (1 if started_turn else 0)
        if started_turn and not any(ask.kind == "approval" for ask in self._waiting.values()):
            # The server died during the turn (a clean stop ends turns): only a waiting approval is kept and
            # asked again by the session's runner; anything else of the turn is lost, and its readers are told.
            self.emit(
                ErrorEvent(message="the server stopped during this turn: it did not finish", code="internal")
            )
            self.emit(TurnEndEvent())
        self._resume_agent = started_turn and self.queued > 0

    def record(self) -> LoggedSession:
        """The session as the store keeps it."""
        return LoggedSession(
            session_id=self.session_id,
            backend=self.backend,
            model=self.model,
            working_directory=str(self.options.cwd),
            carrier=self.carrier,
            title=self.title,
            created_at=self.created_at,
            updated_at=self.updated_at,
            ended=self.ended,
            settings=self.settings,
        )

    def _log(self, line: bytes) -> None:
        self.log.append(line)
        self.updated_at = time.time()
        if self.store is not None:
            self._unsaved.append((len(self.log), line))
            if not line.startswith(_STREAMED) or len(self._unsaved) >= _SAVE_BATCH:
                self.flush()

    def flush(self) -> None:
        """Write the events not yet kept in the store."""
        if self.store is not None and self._unsaved:
            self.store.append(self.session_id, self.take_unsaved())

    def take_unsaved(self) -> list[tuple[int, bytes]]:
        """The logged events not yet written to the store, as (position, line); the caller writes them."""
        unsaved, self._unsaved = self._unsaved, []
        return unsaved

    def _track(self, event: Event) -> None:
        if isinstance(event, TurnEndEvent):
            self._turns_ended += 1
            self._waiting.clear()  # nothing of an ended turn waits any more
        elif isinstance(event, HitlRequestEvent):
            self._waiting[event.id] = _Ask("approval", event.call_id)
        elif isinstance(event, QuestionRequestEvent):
            self._waiting[event.id] = _Ask("question", event.call_id)
        elif isinstance(event, ToolEndEvent):
            for settled in [key for key, ask in self._waiting.items() if ask.call_id == event.call_id]:
                del self._waiting[settled]

    def _last_turn_end(self) -> int:
        for index in range(len(self.log) - 1, -1, -1):
            if self.log[index].startswith(b'{"type":"turn_end"'):
                return index + 1
        return 0

    @property
    def keeper(self) -> ServeLogStore | SharedServeLog | None:
        """Where the session's record and messages are kept: the shared store on an engine, else the server's."""
        return self.shared or self.store

    def _save(self) -> None:
        if self.keeper is not None:
            self.keeper.save(self.record())

    def send(self, body: bytes) -> int:
        """Pass on the request lines of ``body``; returns how many. Raises :class:`RequestRefused` (and passes
        nothing on) when a line is unreadable, an approval answer matches nothing waiting, or the input is closed.
        An unreadable line also writes the ``error`` event stdio answers it with (``unreadable_request``)."""
        if self.input_closed:
            raise RequestRefused(409, "the session's input is closed", "session_closed")
        requests: list[Request] = []
        answered: set[str] = set()
        unreadable: list[tuple[int, UnreadableRequest]] = []
        for number, line in enumerate(body.splitlines(), 1):
            if not line.strip():
                continue
            request = decode_request(line)
            if isinstance(request, UnreadableRequest):
                unreadable.append((number, request))
                continue
            if isinstance(request, HitlResponseRequest | QuestionResponseRequest) and not unreadable:
                answered.add(self._answered(request, answered))
            requests.append(request)
        if unreadable:
            # The stream says what was skipped, as stdio's does: every reader sees it, not only the sender.
            for _, request in unreadable:
                self.emit(request.to_event())
            number, first = unreadable[0]
            raise RequestRefused(400, f"line {number}: {first.message}", "unreadable_request")
        if not requests:
            raise RequestRefused(400, "the body holds no request line", "unreadable_request")
        for settled in answered:
            del self._waiting[settled]
        for request in requests:
            if isinstance(request, UserMessageRequest):
                self._turns_sent += 1
                self.messages.append(request.content)
                if self.keeper is not None:
                    self.keeper.add_message(self.session_id, len(self.messages), request.content)
                if not self.title:
                    self.title = excerpt(" ".join(request.content.split()), _TITLE_CHARS)
                    self._save()
            elif isinstance(request, ShutdownRequest):
                self.input_closed = True
            if self.carrier in ("in_process", "engine"):
                self._send.send_nowait(request)
            else:
                self.link.add(encode(request).rstrip(b"\n"), turn=isinstance(request, UserMessageRequest))
        if self.input_closed:
            self._send.close()
        self._notify()
        return len(requests)

    def close_input(self) -> None:
        """End the session's input, as end of file does on stdio: queued turns still run."""
        if not self.input_closed:
            self.input_closed = True
            self._send.close()
            if self.carrier != "in_process":
                self.link.add(encode(ShutdownRequest()).rstrip(b"\n"), turn=False)
            self._notify()

    async def changed(self) -> None:
        """Wait until something happens to the session."""
        await self.feed.changed()

    def _answered(self, request: HitlResponseRequest | QuestionResponseRequest, taken: set[str]) -> str:
        """The id of the ask ``request`` answers; :class:`RequestRefused` (409) when it answers nothing that waits
        (never asked, answered already, or its turn ended), so a late answer is never taken silently."""
        kind: AskKind = "approval" if isinstance(request, HitlResponseRequest) else "question"
        code = f"stale_{kind}"
        open_ids = [key for key, ask in self._waiting.items() if ask.kind == kind and key not in taken]
        if request.id is None:  # an approval answer may leave out the id when only one approval waits
            if len(open_ids) != 1:
                raise RequestRefused(
                    409, f"{len(open_ids)} approvals wait: the answer must name its id", code
                )
            return open_ids[0]
        if request.id not in open_ids:
            raise RequestRefused(409, f"no {kind} waits with id {request.id!r}", code)
        return request.id

    def _notify(self) -> None:
        self.feed.notify()


AskKind = Literal["approval", "question"]


@dataclass(frozen=True)
class _Ask:
    """An approval or a question that waits for its answer."""

    kind: AskKind
    call_id: str | None
    """The tool call it belongs to (settled when that call ends)."""


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))
