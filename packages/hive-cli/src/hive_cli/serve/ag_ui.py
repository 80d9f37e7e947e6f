"""``POST /api/ag-ui``: hive serve's sessions through the AG-UI protocol (``ag-ui-protocol``'s models).

A ``RunAgentInput`` comes in, decoded once here; the run's AG-UI events go out as Server-Sent Events, each with an
``id:`` (its 1-based place in the run) so a dropped client posts the same input again with ``Last-Event-ID`` and
receives the rest of that run, once.

- The thread is a hive session: ``threadId`` is the session id (a new one opens a session, an ended one goes on).
  ``runId`` names the run: posting a known ``runId`` again starts nothing, it streams that run (from
  ``Last-Event-ID`` when given).
- The run's message is the last of ``messages`` when it is a ``user`` message whose id this thread has not run
  (text, or text parts only). Earlier messages are not sent again: the session already holds the conversation,
  and what a client sends of it is not read (nor ``state``, ``tools`` or ``context``: hive's own apply). A run
  with no new message and no ``resume`` is a reconnect: ``MESSAGES_SNAPSHOT`` (the conversation as the server
  has it), ``STATE_SNAPSHOT`` (the plan) and ``RUN_FINISHED`` with the interrupts still open.
- Ids: a tool call keeps hive's call id; a message's id is ``m``/``r``/``t`` and the position of its first event
  in the session's log, so a replayed run and a snapshot name everything as the live run did. Runs and the user
  messages' ids are kept in memory: a restarted server forgets them (the session and its events it keeps).
- hive's events map onto AG-UI's: text onto ``TEXT_MESSAGE_*``, thinking onto ``REASONING_*``, a tool call onto
  ``TOOL_CALL_START/ARGS/END`` and its outcome onto ``TOOL_CALL_RESULT``, the plan onto ``STATE_SNAPSHOT`` /
  ``STATE_DELTA`` of ``{"plan": …}``, other news onto ``CUSTOM`` events named ``hive.<type>``; the turn's end onto
  ``RUN_FINISHED`` (with its token usage) or, after an error, ``RUN_ERROR``.
- Approvals and questions end the run with ``RUN_FINISHED`` whose ``outcome`` is ``interrupt``, listing every one
  that waits (``id`` hive's request id, ``reason`` ``tool_approval`` or ``question``, ``message``, ``toolCallId``,
  ``responseSchema``). The next run answers them in ``resume``: every open interrupt covered, an approval's payload
  ``{approved, reason?, always?}``, a question's ``{answers: {question: label, labels or text}}``, ``cancelled``
  meaning rejected or declined. The same resume posted again (a retry) answers nothing twice: it streams the run
  that answered it. An interrupt that is not open (unknown, or answered otherwise) is a 400 naming it.

Errors are JSON ``{"error": message, "code": …, "field"?: …}``: 400 for input that is not a valid ``RunAgentInput``
(the field named) or that does not fit the thread's state, 409 while another turn of the session runs.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import cast

import anyio
import anyio.lowlevel
from ag_ui.core import AssistantMessage
from ag_ui.core import BaseEvent
from ag_ui.core import CustomEvent
from ag_ui.core import FunctionCall
from ag_ui.core import Interrupt
from ag_ui.core import Message
from ag_ui.core import MessagesSnapshotEvent
from ag_ui.core import ReasoningEndEvent
from ag_ui.core import ReasoningMessage
from ag_ui.core import ReasoningMessageContentEvent
from ag_ui.core import ReasoningMessageEndEvent
from ag_ui.core import ReasoningMessageStartEvent
from ag_ui.core import ReasoningStartEvent
from ag_ui.core import ResumeEntry
from ag_ui.core import RunAgentInput
from ag_ui.core import RunErrorEvent
from ag_ui.core import RunFinishedEvent
from ag_ui.core import RunFinishedInterruptOutcome
from ag_ui.core import RunStartedEvent
from ag_ui.core import StateDeltaEvent
from ag_ui.core import StateSnapshotEvent
from ag_ui.core import TextMessageContentEvent
from ag_ui.core import TextMessageEndEvent
from ag_ui.core import TextMessageStartEvent
from ag_ui.core import TextPart
from ag_ui.core import TokenUsage
from ag_ui.core import ToolCall
from ag_ui.core import ToolCallArgsEvent
from ag_ui.core import ToolCallEndEvent
from ag_ui.core import ToolCallResultEvent
from ag_ui.core import ToolCallStartEvent
from ag_ui.core import ToolMessage
from ag_ui.core import UserMessage
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.responses import Response
from starlette.responses import StreamingResponse

from hive_protocol import HitlResponseRequest
from hive_protocol import QuestionResponseRequest
from hive_protocol import UserMessageRequest
from hive_protocol import encode
from hive_protocol import sse_event

from .hosted import HostedSession
from .hosted import RequestRefused

if TYPE_CHECKING:
    from .app import ServeApp

__all__ = ["APPROVAL_SCHEMA", "AgUiEndpoint", "translate"]

MAX_INPUT_BYTES: Final = 16 * 1024 * 1024
KEPT_RUNS: Final = 256
"""Runs a thread remembers, to stream them again on a reconnect."""
PING_SECONDS: Final = 15.0
"""How often an idle run's stream sends a comment, so proxies and browsers keep it open."""
APPROVAL_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean", "description": "true runs the tool call, false refuses it"},
        "reason": {"type": "string", "description": "why; on a refusal the model reads it"},
        "always": {"type": "boolean", "description": "allow such calls for the rest of the session"},
    },
    "required": ["approved"],
    "additionalProperties": False,
}
"""The ``responseSchema`` of an approval interrupt: its ``resume`` payload."""
_ROLES: Final = frozenset({"developer", "system", "assistant", "user", "tool", "activity", "reasoning"})
_SETTLE_ROUNDS: Final = 8
"""Scheduler rounds a run lets pass once a turn waits, so asks made at the same moment (parallel tool calls) all
make its interrupt outcome."""


class _Refused(Exception):
    """Input the endpoint turns down: the status, message, code and the input field it names."""

    def __init__(self, status: int, message: str, code: str, where: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.where = where


@dataclass
class _Run:
    """One AG-UI run of a thread: where its events start in the session's log and, once decided, how it ended."""

    run_id: str
    thread_id: str
    start: int
    """The log position its events start at."""
    connect: bool = False
    """A reconnect: snapshots and the open interrupts, no turn of its own."""
    end: int | None = None
    """The log position its events stop at, once it finished."""
    interrupts: list[Interrupt] | None = None
    """The interrupt outcome it finished with."""
    resume: dict[str, str] = field(default_factory=dict[str, str])
    """The resume entries it applied (interrupt id to the entry's JSON), to recognise the same resume again."""


@dataclass
class _Thread:
    """What the endpoint remembers of a thread besides its session: its runs and the user messages it ran."""

    runs: dict[str, _Run] = field(default_factory=dict[str, _Run])
    message_ids: list[str | None] = field(default_factory=list[str | None])
    """The AG-UI id of each turn's user message (``None`` for a turn sent another way), by turn."""
    answered: dict[str, _Run] = field(default_factory=dict[str, _Run])
    """The run that answered each interrupt."""
    created_at: float | None = None
    """When its session was created: another value means another session of the same id."""
    asked_at: dict[str, float] = field(default_factory=dict[str, float])
    """When a run first reported each approval (its ``expiresAt`` counts from then)."""

    def keep(self, run: _Run) -> None:
        """Remember ``run`` (the oldest are forgotten past :data:`KEPT_RUNS`: posting one again is a new run)."""
        self.runs[run.run_id] = run
        while len(self.runs) > KEPT_RUNS:
            del self.runs[next(iter(self.runs))]


class AgUiEndpoint:
    """The ``POST /api/ag-ui`` route of one ``hive serve`` (see the module's documentation)."""

    def __init__(self, serve: ServeApp) -> None:
        self._serve = serve
        self._threads: dict[str, _Thread] = {}

    async def run(self, request: Request) -> Response:
        """Take one ``RunAgentInput`` and answer with its run's events (or the error that refuses it)."""
        try:
            body = await _read(request)
            given = _decode(body)
            return await self._run(given, request.headers.get("last-event-id"))
        except _Refused as refused:
            content: dict[str, Any] = {"error": str(refused), "code": refused.code}
            if refused.where is not None:
                content["field"] = refused.where
            return JSONResponse(content, status_code=refused.status)

    async def _run(self, given: RunAgentInput, last_event_id: str | None) -> Response:
        after = 0
        if last_event_id is not None and last_event_id.strip():
            if not last_event_id.strip().isdigit():
                raise _Refused(
                    400,
                    f"Last-Event-ID must be an event's place in the run, not {last_event_id!r}",
                    "bad_request",
                )
            after = int(last_event_id)
        session = self._serve.sessions.get(given.thread_id)
        thread = self._thread(given.thread_id, session)
        known = thread.runs.get(given.run_id)
        if known is not None and session is not None:
            return _streaming(self._events(known, session, thread, after))
        if after:
            raise _Refused(
                400,
                f"Last-Event-ID given for run {given.run_id!r}, which this thread never ran",
                "bad_request",
                "runId",
            )
        session = await self._session(given.thread_id)
        thread = self._thread(given.thread_id, session)
        run = self._resume(given, session, thread) if given.resume else self._start(given, session, thread)
        return _streaming(self._events(run, session, thread, 0))

    def _thread(self, thread_id: str, session: HostedSession | None) -> _Thread:
        """What this endpoint knows of the thread: forgotten when its session is a new one of the same id (the
        old one was deleted), kept when an ended session went on."""
        thread = self._threads.get(thread_id)
        if thread is None or (session is not None and thread.created_at not in (None, session.created_at)):
            thread = self._threads[thread_id] = _Thread()
        if session is not None:
            thread.created_at = session.created_at
        return thread

    async def _session(self, thread_id: str) -> HostedSession:
        from .app import SessionRequest

        session = self._serve.sessions.get(thread_id)
        if session is not None and not session.ended:
            return session
        opened = await self._serve.open(SessionRequest(session_id=thread_id))
        if isinstance(opened, Response):
            problem = json.loads(bytes(opened.body))
            raise _Refused(
                opened.status_code, f"threadId: {problem.get('error')}", str(problem.get("code")), "threadId"
            )
        return opened

    def _start(self, given: RunAgentInput, session: HostedSession, thread: _Thread) -> _Run:
        """A run with a new user message, or a reconnect when there is none."""
        found = _new_message(given.messages, thread)
        run = _Run(given.run_id, given.thread_id, len(session.log))
        if found is None:
            run.connect = True
            thread.keep(run)
            return run
        if session.waiting:
            raise _Refused(
                400,
                f"the thread waits for interrupts {', '.join(session.waiting)}: answer them with resume first",
                "interrupts_open",
                "resume",
            )
        if session.status != "idle":
            raise _Refused(409, "a turn of this thread is running: wait for its RUN_FINISHED", "thread_busy")
        message_id, content = found
        try:
            session.send(encode(UserMessageRequest(content=content)))
        except RequestRefused as refused:
            raise _Refused(refused.status, str(refused), refused.code) from None
        while len(thread.message_ids) < len(session.messages) - 1:
            thread.message_ids.append(None)
        thread.message_ids.append(message_id)
        thread.keep(run)
        return run

    def _resume(self, given: RunAgentInput, session: HostedSession, thread: _Thread) -> _Run:
        """A run that answers the open interrupts: every one covered, each answer checked before any is sent."""
        entries = given.resume or []
        repeated = [thread.answered.get(entry.interrupt_id) for entry in entries]
        first = repeated[0] if repeated else None
        if first is not None and all(
            run is first and first.resume.get(entry.interrupt_id) == _entry_key(entry)
            for run, entry in zip(repeated, entries, strict=True)
        ):
            return first  # the same resume again: its run, not a second answer
        asks = _asks(session)
        open_ids = session.waiting
        lines: list[bytes] = []
        seen: set[str] = set()
        for index, entry in enumerate(entries):
            where = f"resume[{index}].interruptId"
            if entry.interrupt_id in seen:
                raise _Refused(
                    400, f"interrupt {entry.interrupt_id!r} is answered twice", "bad_resume", where
                )
            seen.add(entry.interrupt_id)
            ask = asks.get(entry.interrupt_id)
            if entry.interrupt_id not in open_ids or ask is None:
                raise _Refused(
                    400,
                    f"interrupt {entry.interrupt_id!r} is not open in this thread",
                    "stale_interrupt",
                    where,
                )
            lines.append(_answer(entry, ask, f"resume[{index}].payload"))
        missing = [ask_id for ask_id in open_ids if ask_id not in seen]
        if missing:
            raise _Refused(
                400, f"open interrupts not answered: {', '.join(missing)}", "interrupts_open", "resume"
            )
        run = _Run(given.run_id, given.thread_id, len(session.log))
        try:
            session.send(b"".join(lines))
        except RequestRefused as refused:
            raise _Refused(400, str(refused), refused.code, "resume") from None
        for entry in entries:
            run.resume[entry.interrupt_id] = _entry_key(entry)
            thread.answered[entry.interrupt_id] = run
        thread.keep(run)
        return run

    async def _events(
        self, run: _Run, session: HostedSession, thread: _Thread, after: int
    ) -> AsyncIterator[bytes]:
        """The run's events as SSE from place ``after`` on, following the session's log until the run finished."""
        place = 0

        def numbered(events: Sequence[BaseEvent]) -> bytes:
            nonlocal place
            out = bytearray()
            for event in events:
                place += 1
                if place > after:
                    out += _sse(event, place)
            return bytes(out)

        yield numbered(self._opening(run, session, thread))
        if run.connect:
            return
        translator = _Translator(session.model)
        position = run.start
        while True:
            stop = run.end if run.end is not None else len(session.log)
            events: list[BaseEvent] = []
            while position < stop and not translator.finished:
                events += translator.feed(session.log[position], position)
                position += 1
            if translator.finished or (run.end is not None and position >= run.end):
                if run.end is None:
                    run.end = position
                yield numbered([*events, *translator.close(), translator.finish(run)])
                return
            if events:
                yield numbered(events)
            if run.end is None and position >= len(session.log) and await _settled(session, position):
                if run.end is None and position >= len(session.log):
                    # The turn waits for its asks: the run ends here with them as its interrupts.
                    run.end = position
                    run.interrupts = _interrupts(session, thread)
                continue
            if run.end is None and session.ended and position >= len(session.log):
                translator.fail("the session ended before the run finished")
                continue
            if run.end is not None or position < len(session.log):
                continue
            with anyio.move_on_after(PING_SECONDS) as waited:
                await session.changed()
            if waited.cancelled_caught:
                yield b": ping\n\n"

    def _opening(self, run: _Run, session: HostedSession, thread: _Thread) -> list[BaseEvent]:
        started = RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id, protocol_version="1.0")
        if not run.connect:
            return [started]
        if run.end is None:
            run.end = run.start
            run.interrupts = _interrupts(session, thread) if session.status == "waiting" else None
        events: list[BaseEvent] = [
            started,
            MessagesSnapshotEvent(messages=_conversation(session, thread, run.start)),
        ]
        plan = _plan_state(session.log[: run.start])
        if plan is not None:
            events.append(StateSnapshotEvent(snapshot=plan))
        events.append(_finished(run, None))
        return events


def _decode(body: bytes) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate_json(body or b"{}")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = _field(first["loc"])
        message = f"{where}: {first['msg']}" if where else str(first["msg"])
        raise _Refused(400, f"not a RunAgentInput: {message}", "bad_request", where or None) from None


def _field(location: Sequence[int | str]) -> str:
    """A pydantic error location as the input's field path (``messages[0].content``), the union tags left out."""
    text = ""
    previous: int | str | None = None
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not (isinstance(previous, int) and part in _ROLES):
            text += f".{part}" if text else part
        previous = part
    return text


async def _read(request: Request) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_INPUT_BYTES:
            raise _Refused(413, f"the body is larger than {MAX_INPUT_BYTES} bytes", "too_large")
    return bytes(body)


def _new_message(messages: Sequence[Message], thread: _Thread) -> tuple[str, str] | None:
    """The id and text of the input's last message when it is a user message this thread has not run yet (a
    message something follows was answered already)."""
    if not messages:
        return None
    index = len(messages) - 1
    message = messages[index]
    if isinstance(message, UserMessage) and message.id not in thread.message_ids:
        if isinstance(message.content, str):
            text = message.content
        else:
            parts: list[str] = []
            for number, part in enumerate(message.content):
                if not isinstance(part, TextPart):
                    raise _Refused(
                        400,
                        f"only text parts are taken, not {part.type!r}",
                        "bad_request",
                        f"messages[{index}].content[{number}]",
                    )
                parts.append(part.text)
            text = "".join(parts)
        if not text.strip():
            raise _Refused(400, "the user message is empty", "bad_request", f"messages[{index}].content")
        return message.id, text
    return None


def _entry_key(entry: ResumeEntry) -> str:
    return json.dumps([entry.status, entry.payload], sort_keys=True)


def _answer(entry: ResumeEntry, ask: dict[str, Any], where: str) -> bytes:
    """The request line that answers ``ask`` as ``entry`` says (its payload checked against the ask's schema)."""
    if ask["type"] == "hitl_request":
        if entry.status == "cancelled":
            return encode(HitlResponseRequest(id=ask["id"], approved=False, reason="cancelled by the user"))
        answer = _object(entry.payload)
        if answer is None:
            raise _Refused(400, "an approval's payload is {approved, reason?, always?}", "bad_resume", where)
        unknown = sorted(set(answer) - {"approved", "reason", "always"})
        if unknown:
            raise _Refused(400, f"unknown field {unknown[0]!r}", "bad_resume", f"{where}.{unknown[0]}")
        approved, reason, always = answer.get("approved"), answer.get("reason"), answer.get("always", False)
        if not isinstance(approved, bool):
            raise _Refused(400, "approved must be true or false", "bad_resume", f"{where}.approved")
        if reason is not None and not isinstance(reason, str):
            raise _Refused(400, "reason must be text", "bad_resume", f"{where}.reason")
        if not isinstance(always, bool):
            raise _Refused(400, "always must be true or false", "bad_resume", f"{where}.always")
        return encode(
            HitlResponseRequest(id=ask["id"], approved=approved, reason=reason, always_approve=always)
        )
    if entry.status == "cancelled":
        return encode(QuestionResponseRequest(id=ask["id"]))
    payload = _object(entry.payload)
    answers = _object(payload.get("answers")) if payload is not None else None
    if answers is None:
        raise _Refused(
            400, "a question's payload is {answers: {question: choice}}", "bad_resume", f"{where}.answers"
        )
    checked: dict[str, list[str] | str] = {}
    for key, value in answers.items():
        if isinstance(value, str):
            checked[key] = value
        elif isinstance(value, list) and all(isinstance(item, str) for item in cast("list[object]", value)):
            checked[key] = [str(item) for item in cast("list[object]", value)]
        else:
            raise _Refused(
                400, "an answer is a label, a list of labels or text", "bad_resume", f"{where}.answers.{key}"
            )
    return encode(QuestionResponseRequest(id=ask["id"], answers=checked))


def _object(value: object) -> dict[str, object] | None:
    """``value`` when it is a JSON object."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def _asks(session: HostedSession) -> dict[str, dict[str, Any]]:
    """The approvals and questions the running turn asked, by id (from its events in the log)."""
    asks: dict[str, dict[str, Any]] = {}
    for line in reversed(session.log):
        if line.startswith(b'{"type":"turn_end"'):
            break
        if line.startswith((b'{"type":"hitl_request"', b'{"type":"question_request"')):
            event = json.loads(line)
            asks.setdefault(str(event["id"]), event)
    return asks


def _interrupts(session: HostedSession, thread: _Thread) -> list[Interrupt] | None:
    asks = _asks(session)
    bridge = session.runner.bridge if session.runner is not None else None
    found: list[Interrupt] = []
    for ask_id in session.waiting:
        if ask_id not in asks:
            continue
        expires_at = None
        if bridge is not None and asks[ask_id]["type"] == "hitl_request":
            # The approval is refused once its wait times out; counted from when a run first reported it.
            asked = thread.asked_at.setdefault(ask_id, time.time())
            expires_at = _iso(asked + bridge.timeout)
        found.append(_interrupt(asks[ask_id], expires_at))
    return found or None


def _iso(moment: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(moment))


def _interrupt(ask: dict[str, Any], expires_at: str | None) -> Interrupt:
    if ask["type"] == "hitl_request":
        target = f": {ask['target']}" if ask.get("target") else ""
        return Interrupt(
            id=ask["id"],
            reason="tool_approval",
            message=f"{ask['description']} ({ask['action']}{target})",
            tool_call_id=ask.get("call_id"),
            response_schema=APPROVAL_SCHEMA,
            expires_at=expires_at,
            metadata={
                "tool": ask.get("tool_name"),
                "arguments": ask.get("arguments"),
                "level": ask.get("level"),
            },
        )
    questions: list[dict[str, Any]] = ask["questions"]
    properties: dict[str, Any] = {}
    for question in questions:
        labels = [option["label"] for option in question["options"]]
        choice: dict[str, Any] = {"enum": labels} if labels else {"type": "string"}
        if question.get("allow_free_text") and labels:
            choice = {"anyOf": [choice, {"type": "string"}]}
        properties[question["question"]] = (
            {"type": "array", "items": choice} if question.get("multi_select") else choice
        )
    return Interrupt(
        id=ask["id"],
        reason="question",
        message="\n".join(str(question["question"]) for question in questions),
        tool_call_id=ask.get("call_id"),
        response_schema={
            "type": "object",
            "properties": {
                "answers": {"type": "object", "properties": properties, "additionalProperties": False}
            },
            "required": ["answers"],
        },
        metadata={"questions": questions},
    )


async def _settled(session: HostedSession, position: int) -> bool:
    """Whether the running turn waits for asks and wrote nothing more after ``position`` while other tasks ran."""
    if not session.waiting:
        return False
    for _ in range(_SETTLE_ROUNDS):
        await anyio.lowlevel.checkpoint()
        if len(session.log) > position:
            return False
    return bool(session.waiting)


def _finished(run: _Run, usage: list[TokenUsage] | None) -> RunFinishedEvent:
    outcome = None if not run.interrupts else RunFinishedInterruptOutcome(interrupts=run.interrupts)
    return RunFinishedEvent(thread_id=run.thread_id, run_id=run.run_id, outcome=outcome, usage=usage)


def _sse(event: BaseEvent, place: int) -> bytes:
    return sse_event(event.model_dump_json(by_alias=True).encode(), place)


def _streaming(events: AsyncIterator[bytes]) -> StreamingResponse:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )


class _Translator:
    """hive's events of one run, in log order, as AG-UI events: every start gets its end before the run ends."""

    def __init__(self, model: str | None) -> None:
        self._model = model
        self._text: str | None = None
        self._reasoning: str | None = None
        self._assistant: str | None = None
        """The assistant message the round's tool calls belong to."""
        self._error: tuple[str, str | None] | None = None
        self._usage: list[TokenUsage] | None = None
        self._plan: dict[str, Any] | None = None
        self.finished = False

    def feed(self, line: bytes, position: int) -> list[BaseEvent]:
        """The AG-UI events of the log's line at ``position``."""
        try:
            event: dict[str, Any] = json.loads(line)
        except ValueError:
            return []
        kind = event.get("type")
        out: list[BaseEvent] = []
        if kind == "text_delta":
            out += self._close_reasoning()
            if self._text is None:
                self._text = self._assistant = f"m{position}"
                out.append(TextMessageStartEvent(message_id=self._text, role="assistant"))
            out.append(TextMessageContentEvent(message_id=self._text, delta=str(event["content"])))
        elif kind == "thinking_delta":
            out += self._close_text()
            if self._reasoning is None:
                self._reasoning = f"r{position}"
                out.append(ReasoningStartEvent(message_id=self._reasoning))
                out.append(ReasoningMessageStartEvent(message_id=self._reasoning, role="reasoning"))
            out.append(ReasoningMessageContentEvent(message_id=self._reasoning, delta=str(event["content"])))
        elif kind == "tool_start":
            out += self.close()
            if self._assistant is None:
                self._assistant = f"m{position}"
            call_id = str(event["call_id"])
            arguments = event.get("input")
            out.append(
                ToolCallStartEvent(
                    tool_call_id=call_id, tool_call_name=str(event["tool"]), parent_message_id=self._assistant
                )
            )
            text = arguments if isinstance(arguments, str) else json.dumps(arguments)
            out.append(ToolCallArgsEvent(tool_call_id=call_id, delta=text))
            out.append(ToolCallEndEvent(tool_call_id=call_id))
        elif kind == "tool_end":
            out += self.close()
            self._assistant = None
            out.append(
                ToolCallResultEvent(
                    message_id=f"t{position}",
                    tool_call_id=str(event["call_id"]),
                    content=str(event.get("output") or ""),
                    role="tool",
                )
            )
        elif kind in ("hitl_request", "question_request"):
            out += self.close()
        elif kind in ("plan_created", "plan_step_started", "plan_step_completed", "plan_completed"):
            out += self._plan_events(event)
        elif kind == "error":
            out += self.close()
            self._error = (str(event.get("message")), event.get("code"))
        elif kind == "turn_end":
            out += self.close()
            self._usage = _usage(event, self._model)
            self.finished = True
        elif kind in ("addendum", "fallback", "agent_work", "agent_selected"):
            out.append(
                CustomEvent(name=f"hive.{kind}", value={k: v for k, v in event.items() if k != "type"})
            )
        return out

    def fail(self, message: str) -> None:
        """End the run with an error of the server's (its session ended without the turn's end)."""
        self._error = (message, "internal")
        self.finished = True

    def finish(self, run: _Run) -> BaseEvent:
        """The run's last event."""
        if self._error is not None and run.interrupts is None:
            message, code = self._error
            return RunErrorEvent(message=message, code=code, usage=self._usage)
        return _finished(run, self._usage)

    def close(self) -> list[BaseEvent]:
        """End whatever text or reasoning message is open."""
        return [*self._close_text(), *self._close_reasoning()]

    def _close_text(self) -> list[BaseEvent]:
        if self._text is None:
            return []
        ended, self._text = self._text, None
        return [TextMessageEndEvent(message_id=ended)]

    def _close_reasoning(self) -> list[BaseEvent]:
        if self._reasoning is None:
            return []
        ended, self._reasoning = self._reasoning, None
        return [ReasoningMessageEndEvent(message_id=ended), ReasoningEndEvent(message_id=ended)]

    def _plan_events(self, event: dict[str, Any]) -> list[BaseEvent]:
        kind = event["type"]
        if kind == "plan_created" or self._plan is None:
            self._plan = _plan_apply(None, event)
            return [StateSnapshotEvent(snapshot={"plan": self._plan})]
        before = json.dumps(self._plan)
        self._plan = _plan_apply(self._plan, event)
        if json.dumps(self._plan) == before:
            return []
        if kind == "plan_completed":
            return [
                StateDeltaEvent.model_validate(
                    {"delta": [{"op": "replace", "path": "/plan/status", "value": self._plan["status"]}]}
                )
            ]
        index = int(event["step_index"])
        return [
            StateDeltaEvent.model_validate(
                {
                    "delta": [
                        {"op": "replace", "path": f"/plan/steps/{index}", "value": self._plan["steps"][index]}
                    ]
                }
            )
        ]


def _plan_apply(plan: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any]:
    """The plan state after one plan event: ``{id, status, steps: [{description, status, summary?}]}``."""
    kind = event["type"]
    if kind == "plan_created" or plan is None:
        descriptions = [str(text) for text in event.get("step_descriptions", [])]
        return {
            "id": event.get("plan_id"),
            "status": "running",
            "steps": [{"description": text, "status": "pending"} for text in descriptions],
        }
    steps: list[dict[str, Any]] = [dict(step) for step in plan["steps"]]
    updated = {**plan, "steps": steps}
    if kind == "plan_completed":
        updated["status"] = "done" if event.get("success") else "failed"
        return updated
    index = int(event["step_index"])
    if 0 <= index < len(steps):
        if kind == "plan_step_started":
            steps[index] = {**steps[index], "status": "running"}
        else:
            done = {**steps[index], "status": "done" if event.get("success") else "failed"}
            if event.get("summary"):
                done["summary"] = event["summary"]
            steps[index] = done
    return updated


def _plan_state(lines: Sequence[bytes]) -> dict[str, Any] | None:
    plan: dict[str, Any] | None = None
    for line in lines:
        if line.startswith(b'{"type":"plan_'):
            plan = _plan_apply(plan, json.loads(line))
    return None if plan is None else {"plan": plan}


def _usage(event: dict[str, Any], model: str | None) -> list[TokenUsage] | None:
    if event.get("input_tokens") is None and event.get("output_tokens") is None:
        return None
    return [
        TokenUsage(
            model=model,
            input_tokens=event.get("input_tokens"),
            output_tokens=event.get("output_tokens"),
            total_tokens=event.get("total_tokens"),
            cached_input_tokens=event.get("cached_input_tokens"),
        )
    ]


def translate(lines: Sequence[bytes], start: int = 0) -> Iterator[BaseEvent]:
    """The AG-UI events of hive event lines (``lines[i]`` at log position ``start + i``), without run events."""
    translator = _Translator(None)
    for offset, line in enumerate(lines):
        yield from translator.feed(line, start + offset)
    yield from translator.close()


def _conversation(session: HostedSession, thread: _Thread, end: int) -> list[Message]:
    """The thread's messages as the session's log holds them up to ``end``: each turn's user message, then what
    the run's events built (the same ids its runs streamed)."""
    messages: list[Message] = []
    turn = 0
    begin = 0
    log = session.log[:end]
    bounds = [index + 1 for index, line in enumerate(log) if line.startswith(b'{"type":"turn_end"')]
    if not bounds or bounds[-1] < len(log):
        bounds.append(len(log))
    for stop in bounds:
        segment = log[begin:stop]
        if any(not line.startswith((b'{"type":"session_started"', b'{"type":"error"')) for line in segment):
            turn += 1
            if turn <= len(session.messages):
                ids = thread.message_ids
                known = ids[turn - 1] if turn - 1 < len(ids) else None
                message_id = known or f"u{turn}"
                messages.append(UserMessage(id=message_id, content=session.messages[turn - 1]))
            _reduce(messages, translate(segment, begin))
        begin = stop
    return messages


def _reduce(messages: list[Message], events: Iterator[BaseEvent]) -> None:
    """Apply AG-UI events to a message list the way a client builds its conversation from them."""
    by_id: dict[str, Message] = {}
    for event in events:
        if isinstance(event, TextMessageStartEvent | ReasoningMessageStartEvent):
            opened: Message = (
                AssistantMessage(id=event.message_id, content="")
                if isinstance(event, TextMessageStartEvent)
                else ReasoningMessage(id=event.message_id, content="")
            )
            messages.append(opened)
            by_id[event.message_id] = opened
        elif isinstance(event, TextMessageContentEvent | ReasoningMessageContentEvent):
            found = by_id.get(event.message_id)
            if isinstance(found, AssistantMessage | ReasoningMessage):
                found.content = (found.content or "") + event.delta
        elif isinstance(event, ToolCallStartEvent):
            parent_id = event.parent_message_id or event.tool_call_id
            parent = by_id.get(parent_id)
            if not isinstance(parent, AssistantMessage):
                parent = AssistantMessage(id=parent_id)
                messages.append(parent)
                by_id[parent_id] = parent
            call = ToolCall(
                id=event.tool_call_id, function=FunctionCall(name=event.tool_call_name, arguments="")
            )
            parent.tool_calls = [*(parent.tool_calls or []), call]
        elif isinstance(event, ToolCallArgsEvent):
            for message in messages:
                if isinstance(message, AssistantMessage):
                    for call in message.tool_calls or []:
                        if call.id == event.tool_call_id:
                            call.function.arguments += event.delta
        elif isinstance(event, ToolCallResultEvent):
            content = event.content if isinstance(event.content, str) else ""
            messages.append(
                ToolMessage(id=event.message_id, tool_call_id=event.tool_call_id, content=content)
            )
