"""Helpers for the hive-core scenario tests: checking event streams, serving a session in memory, and a policy."""

from __future__ import annotations

import math
import subprocess
from collections.abc import AsyncGenerator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from contextlib import asynccontextmanager
from typing import Any
from typing import Final
from typing import TypeVar

import anyio

from hive_core import Message
from hive_core import SessionRunner
from hive_core import TextPart
from hive_core import Tool
from hive_core.approvals import Verdict
from hive_core.runners.session import Incoming
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import Question
from hive_protocol import QuestionOption
from hive_protocol import QuestionRequestEvent
from hive_protocol import RefusalKind
from hive_protocol import RiskLevel
from hive_protocol import StopReason
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import TurnOptions
from hive_protocol import UserMessageRequest
from hive_protocol import encode
from hive_protocol import verify

E = TypeVar("E")

WAIT: Final = 10.0
"""Seconds any single wait of a test may take before it fails (a bound, never a synchronisation)."""


def message(content: str, *, model: str | None = None, **options: Any) -> UserMessageRequest:
    """A ``user_message``; the keyword arguments other than ``model`` are its :class:`TurnOptions`."""
    return UserMessageRequest(
        content=content, model=model, options=TurnOptions(**options) if options else None
    )


def stop_process(proc: subprocess.Popen[Any]) -> None:
    """Kill ``proc`` unless it already ended, and close its pipes."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()


def recording_tool(name: str, result: str, *, read_only: bool = False) -> tuple[Tool, list[str]]:
    """A tool ``name(path: str)`` answering ``result``, and the ``path`` of every call it really ran, in order."""
    ran: list[str] = []

    def run(path: str) -> str:
        ran.append(path)
        return result

    return Tool(run, name=name, description=f"Answers {result!r}.", read_only=read_only), ran


def history(turns: int, size: int) -> list[Message]:
    """``turns`` finished turns, each a user message and a reply of about ``size`` characters."""
    messages: list[Message] = []
    for n in range(turns):
        messages.append(Message("user", [TextPart(f"question {n} " + "q" * size)]))
        messages.append(Message("assistant", [TextPart(f"answer {n} " + "a" * size)]))
    return messages


def kinds(events: Sequence[Event]) -> list[str]:
    """The ``type`` of each event, in order."""
    return [event.__struct_config__.tag for event in events]  # pyright: ignore[reportReturnType]


def wire_bytes(events: Sequence[Event]) -> bytes:
    """The events as a runner writes them."""
    return b"".join(encode(event) for event in events)


def assert_verified(events: Sequence[Event], *, turns: int | None = None) -> None:
    """The stream keeps every sequence rule, as structs and as canonical wire lines."""
    assert verify(list(events), turns=turns) == []
    assert verify([encode(event) for event in events], turns=turns) == []


def assert_ended(events: Sequence[Event], stop_reason: StopReason, *, turns: int = 1) -> None:
    """The stream ends with a ``turn_end`` of ``stop_reason`` (at the tests' fixed clock) and keeps every rule."""
    assert events[-1] == TurnEndEvent(stop_reason=stop_reason, duration_ms=0)
    assert_verified(events, turns=turns)


def refused(tool: str, output: str, refusal: RefusalKind, *, call_id: str = "call_1") -> ToolEndEvent:
    """The ``tool_end`` of a call the pipeline refused."""
    return ToolEndEvent(tool=tool, success=False, output=output, call_id=call_id, refusal=refusal)


def asked_event(start: ToolStartEvent, *, action: str, target: str, level: RiskLevel) -> HitlRequestEvent:
    """The ``hitl_request`` a :class:`~hive_core.HitlBridge` sends about the call ``start`` started."""
    return HitlRequestEvent(
        id=f"hitl-{start.call_id}",
        action=action,
        target=target,
        description=f"Allow {start.tool}?",
        tool_name=start.tool,
        arguments=start.input,
        call_id=start.call_id,
        level=level,
    )


def one_question(
    request_id: str, question: str, labels: Sequence[str], *, free_text: bool
) -> QuestionRequestEvent:
    """A question request of one single-choice ``question`` offering ``labels`` (and free text, when asked)."""
    options = [QuestionOption(label=label) for label in labels]
    return QuestionRequestEvent(
        id=request_id,
        questions=[
            Question(question=question, multi_select=False, options=options, allow_free_text=free_text)
        ],
    )


def of_type(events: Sequence[Event], kind: type[E]) -> list[E]:
    """The events of one type, in order."""
    return [event for event in events if isinstance(event, kind)]


class Wire:
    """A :class:`SessionRunner` served in memory: requests go in through a memory stream, events are collected.

    ``react`` is called with every event as it is emitted (synchronously, like a client reading its line) and
    may send requests in answer.
    """

    def __init__(self, runner: SessionRunner, *, react: Callable[[Event, Wire], None] | None = None) -> None:
        self.runner = runner
        self.events: list[Event] = []
        self._react = react
        self._send, self._receive = anyio.create_memory_object_stream[Incoming](math.inf)
        self._changed = anyio.Event()
        self.served = False
        """Whether ``serve`` has returned."""

    def emit(self, event: Event) -> None:
        """The runner's event sink."""
        self.events.append(event)
        self._changed.set()
        self._changed = anyio.Event()
        if self._react is not None:
            self._react(event, self)

    def send(self, request: Any) -> None:
        """Send one request (a struct, or a raw line as bytes) to the session."""
        self._send.send_nowait(request)

    def close(self) -> None:
        """End of input."""
        self._send.close()

    async def wait_for(self, kind: type[E], count: int = 1, where: Callable[[E], bool] | None = None) -> E:
        """Wait until ``count`` events of ``kind`` (matching ``where``) were emitted; return the last of them."""
        with anyio.fail_after(WAIT):
            while True:
                found = [e for e in self.events if isinstance(e, kind) and (where is None or where(e))]
                if len(found) >= count:
                    return found[count - 1]
                await self._changed.wait()

    async def _serve(self) -> None:
        with self._receive:
            await self.runner.serve(self._receive, self.emit)
        self.served = True

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[Wire, None]:
        """Serve while the block runs; leaving it ends the input and waits (bounded) for the session to end."""
        with anyio.fail_after(WAIT):
            async with anyio.create_task_group() as group:
                group.start_soon(self._serve)
                try:
                    yield self
                finally:
                    self.close()

    async def run(self, *requests: Any) -> list[Event]:
        """Send ``requests``, end the input, and serve the session to its end."""
        for request in requests:
            self.send(request)
        self.close()
        with anyio.fail_after(WAIT):
            await self._serve()
        return self.events


class Rules:
    """A tool-call policy: a verdict per tool name, ``default`` (allow) for the others.

    It records every call it judged in :attr:`seen`, and counts no tool as read-only beyond the tool's own marking.
    """

    def __init__(self, default: Verdict | None = None, **verdicts: Verdict) -> None:
        self.default = default or Verdict.allow()
        self.verdicts = verdicts
        self.seen: list[tuple[str, dict[str, Any]]] = []

    def evaluate(self, tool_name: str, arguments: Mapping[str, Any]) -> Verdict:
        self.seen.append((tool_name, dict(arguments)))
        return self.verdicts.get(tool_name, self.default)

    def is_read_only(self, tool_name: str) -> bool:
        return False
