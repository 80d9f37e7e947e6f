"""Helpers for the coding-agent backend tests: the fake ACP agent's launch spec and options, a fake CLI program,
a turn cancelled mid-way, replaying decoded wire lines through a backend's mapper, and reading the events of a
turn."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from typing import Final
from typing import Protocol
from typing import TypeVar

import anyio
from acp_fake_agent import arguments

from hive_core.backends import AgentBackend
from hive_core.runners import SessionRunner
from hive_core.runners import collect_turn
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.kit.specs import LaunchSpec
from hive_providers.backends.kit.tool_calls import ToolCallTracker

E = TypeVar("E", bound=Event)
L = TypeVar("L")


class Mapper(Protocol):
    """What maps one CLI's decoded wire to hive events, as :func:`replay` drives it."""

    def finish(self) -> TurnEndEvent:
        """The event that ends the turn."""
        ...


M = TypeVar("M", bound=Mapper)

WAIT: Final = 20.0
"""Seconds a turn may take before the test fails (a bound, not a synchronisation)."""

SPEC: Final = LaunchSpec(
    name="fake", title="Fake agent", executables=("fake-acp",), install_hint="pip install nothing"
)
"""The launch spec of the fake ACP agent (``acp_fake_agent.py``)."""


def options(tmp_path: Path, transcript: str | Path, *later: str | Path, **more: Any) -> BackendOptions:
    """Options that start the fake agent on ``transcript`` (then ``later`` ones, one per restart), logging what
    hive sends to ``log.jsonl``."""
    extra: tuple[str, ...] = ()
    if later:
        extra = (*[str(arguments(name)[1]) for name in later], "--counter", str(tmp_path / "runs"))
    settings: dict[str, Any] = {"cancel_grace": 1.0, "startup_timeout": 10.0, **more}
    return BackendOptions(
        cwd=tmp_path,
        executable=sys.executable,
        arguments=(*arguments(transcript, tmp_path / "log.jsonl"), *extra),
        **settings,
    )


def fake_program(tmp: Path, name: str, script: Path) -> Path:
    """An executable ``tmp/name`` that runs ``script`` with this interpreter, passing its arguments on: a fake CLI
    a backend starts as it would start the real one."""
    program = tmp / name
    program.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n', encoding="utf-8")
    program.chmod(0o755)
    return program


def fake_cli_options(tmp: Path, program: Path, environment: Mapping[str, str], **more: Any) -> BackendOptions:
    """Options that start the fake CLI ``program`` in ``tmp`` (its home ``tmp/home``) with ``environment``."""
    return BackendOptions(
        cwd=tmp,
        home=tmp / "home",
        executable=str(program),
        environment=dict(environment),
        cancel_grace=2.0,
        **more,
    )


def replay(
    make: Callable[[Callable[[Event], None], ToolCallTracker], M],
    feed: Callable[[M, L], object],
    lines: Iterable[L],
) -> tuple[M, list[Event]]:
    """The mapper ``make`` builds (emitting into one list, its calls tracked by a tracker emitting there too)
    after ``feed`` gave it each of ``lines``, and every event it emitted, its ``finish`` last."""
    events: list[Event] = []
    mapper = make(events.append, ToolCallTracker(events.append))
    for line in lines:
        feed(mapper, line)
    events.append(mapper.finish())
    return mapper, events


async def run_and_cancel(
    backend: AcpBackend, *, when: Callable[[Event], bool] | None = None
) -> tuple[list[Event], float, SessionRunner]:
    """Run one turn, cancelling it (as a ``cancel`` request does) at the first event ``when`` accepts."""
    runner = SessionRunner(backend)
    events: list[Event] = []
    cancelled_at: list[float] = []

    def sink(event: Event) -> None:
        events.append(event)
        if when is not None and not cancelled_at and when(event):
            cancelled_at.append(time.monotonic())
            runner.cancel()

    await runner.run_turn(UserMessageRequest(content="go"), sink)
    took = time.monotonic() - cancelled_at[0] if cancelled_at else -1.0
    return events, took, runner


async def one_turn(backend: AgentBackend, prompt: str, wait: float = WAIT) -> list[Event]:
    """The events of one turn of ``prompt``, bounded by ``wait`` seconds; the backend is closed after it."""
    try:
        with anyio.fail_after(wait):
            return await collect_turn(backend, prompt)
    finally:
        await backend.aclose()


def clean(events: list[Event], turns: int = 1) -> list[Event]:
    """The events, asserted to keep the protocol's rules as ``turns`` turns."""
    violations = verify(events, turns=turns)
    assert violations == [], "\n".join(str(violation) for violation in violations)
    return events


def text_of(events: list[Event]) -> str:
    """The text the turn streamed."""
    return "".join(event.content for event in events if isinstance(event, TextDeltaEvent))


def kinds(events: list[Event]) -> list[type[Event]]:
    """The type of each event, in order."""
    return [type(event) for event in events]


def of(events: list[Event], kind: type[E]) -> list[E]:
    """The events of one ``kind``, in order."""
    return [event for event in events if isinstance(event, kind)]


def end_of(events: list[Event]) -> TurnEndEvent:
    """The last event, asserted to end the turn."""
    end = events[-1]
    assert isinstance(end, TurnEndEvent), events
    return end
