"""The real Claude Code CLI through :class:`ClaudeCodeBackend`, in process, against the scripted model server.

Each turn runs under a :class:`~hive_core.runners.SessionRunner` with a :class:`~hive_core.hitl.HitlBridge`
answering ``hitl_request`` on the wire, and the whole stream is judged by :func:`hive_protocol.verify`: a Bash
``touch`` approved (the file exists) and rejected (it does not, and the model read the reason); a second turn
resuming the CLI's session (the model is sent the first turn's words); a turn cancelled mid-text (``turn_end``
cancelled, no process left). Skipped, saying why, when Claude Code is not installed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import anyio
import msgspec
import pytest
from agent_clis_harness import (
    MODEL,
    SLOW_PROMPT,
    TIMEOUT,
    TOOL_FILE,
    TOOL_PROMPT,
    ModelServers,
    model_requests,
    owned_processes,
    request_text,
    require_cli,
    wait_until,
)

from hive_conformance.model_server import ScriptedModelServer
from hive_core.hitl import HitlBridge
from hive_core.runners import SessionRunner
from hive_protocol import (
    PROTOCOL_VERSION,
    Event,
    HitlRequestEvent,
    HitlResponseRequest,
    SessionStartedEvent,
    TextDeltaEvent,
    ToolEndEvent,
    ToolStartEvent,
    TurnEndEvent,
    UserMessageRequest,
    verify,
)
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.registry import resolve_backend
from hive_providers.backends.specs import BackendOptions, ModelEndpoint

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

REMEMBERED: Final = "PINEAPPLE-7319"
"""A word the first turn says and the resumed turn's model request must carry."""


class _Session:
    """One hive session on Claude Code: the backend, its runner and bridge, and every event written."""

    def __init__(self, tmp: Path, server: ScriptedModelServer, *, approve: bool | None) -> None:
        require_cli("claude")
        self.project = tmp / "project"
        self.project.mkdir(exist_ok=True)
        self.approve = approve
        self.bridge = HitlBridge(timeout=TIMEOUT)
        self.backend = ClaudeCodeBackend(
            resolve_backend("claude-code"),
            BackendOptions(
                cwd=self.project,
                model=MODEL,
                endpoint=ModelEndpoint(base_url=f"{server.url}/v1", model=MODEL),
                home=tmp / "home",
                executable=str(require_cli("claude")),
                approvals=self.bridge,
                cancel_grace=3.0,
            ),
        )
        self.runner = SessionRunner(self.backend, bridge=self.bridge)
        self.events: list[Event] = [
            SessionStartedEvent(session_id="claude-test", protocol_version=PROTOCOL_VERSION)
        ]
        self.on_event: Callable[[Event], None] | None = None
        self.bridge.attach(self._emit)

    def _emit(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, HitlRequestEvent):
            assert self.approve is not None, f"the turn asked {event}"
            self.bridge.answer(
                HitlResponseRequest(id=event.id, approved=self.approve, reason="not in this test")
            )
        if self.on_event is not None:
            self.on_event(event)

    async def turn(self, prompt: str) -> list[Event]:
        start = len(self.events)
        with anyio.fail_after(TIMEOUT):
            await self.runner.run_turn(UserMessageRequest(content=prompt), self._emit)
        return self.events[start:]

    def stream(self) -> list[bytes]:
        return [msgspec.json.encode(event) for event in self.events]


def _of(events: list[Event], kind: type[Any]) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def _stop(events: list[Event]) -> str | None:
    end = events[-1]
    assert isinstance(end, TurnEndEvent), events
    return end.stop_reason


def _text(events: list[Event]) -> str:
    return "".join(event.content for event in _of(events, TextDeltaEvent))


def _assert_gone(pid: int | None) -> None:
    assert pid is not None
    wait_until(lambda: not _alive(pid), timeout=15.0, what=f"Claude Code ({pid}) to end")
    mark = f"HIVE_OWNER={os.getpid()}:".encode()
    left = [p for p in owned_processes(os.getpid()) if p == pid or (_carries(p, mark) and _is_claude(p))]
    assert not left, f"Claude Code processes left: {left}"


def _alive(pid: int) -> bool:
    try:
        status = (Path("/proc") / str(pid) / "status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _carries(pid: int, mark: bytes) -> bool:
    try:
        return mark in (Path("/proc") / str(pid) / "environ").read_bytes()
    except OSError:
        return False


def _is_claude(pid: int) -> bool:
    try:
        return b"claude" in (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return False


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_approved_touch_runs(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"), approve=True)
    turn = await session.turn(TOOL_PROMPT)
    starts = _of(turn, ToolStartEvent)
    ends = _of(turn, ToolEndEvent)
    asked = _of(turn, HitlRequestEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert starts[0].input == {"command": f"touch {TOOL_FILE}"}
    assert len(asked) == 1
    assert asked[0].call_id == starts[0].call_id
    assert asked[0].arguments == {"command": f"touch {TOOL_FILE}"}
    assert [e.success for e in ends] == [True], turn
    assert (session.project / TOOL_FILE).exists()
    assert _text(turn) == "MOCK_REPLY done", turn
    end = turn[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert end.input_tokens
    assert end.output_tokens
    assert session.backend.session_id is not None
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_rejected_touch_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("claude")
    since = len(server.requests)
    session = _Session(tmp_path, server, approve=False)
    turn = await session.turn(TOOL_PROMPT)
    ends = _of(turn, ToolEndEvent)
    assert [(e.success, e.refusal) for e in ends] == [(False, "rejected")], turn
    assert not (session.project / TOOL_FILE).exists()
    assert _text(turn) == "MOCK_REPLY done", turn
    assert isinstance(turn[-1], TurnEndEvent)
    assert turn[-1].stop_reason == "completed"
    # The model read the rejection and its reason.
    sent = [request_text(r) for r in model_requests(server, since)]
    assert any("not in this test" in text for text in sent), sent[-1][-2000:]
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_resume_continues_the_cli_session(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("claude")
    session = _Session(tmp_path, server, approve=None)
    first = await session.turn(f"Remember the word {REMEMBERED}.")
    assert _stop(first) == "completed", first
    claude_session = session.backend.session_id
    assert claude_session is not None
    first_pid = session.backend.last_pid
    since = len(server.requests)
    second = await session.turn("What was the word?")
    assert _stop(second) == "completed", second
    assert session.backend.last_command is not None
    assert session.backend.last_command[-2:] == ["--resume", claude_session]
    assert session.backend.last_pid != first_pid, "a Claude Code process was reused across turns"
    sent = [json.loads(request_text(r)) for r in model_requests(server, since)]
    assert any(REMEMBERED in json.dumps(body.get("messages")) for body in sent), "the model never saw turn 1"
    assert session.backend.session_id == claude_session
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


FORKED: Final = "MANGO-4861"
"""A word only the forked session's turn says: resuming the original must not send it."""


async def test_fork_copies_the_session_and_leaves_the_original(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("claude")
    original = _Session(tmp_path, server, approve=None)
    assert _stop(await original.turn(f"Remember the word {REMEMBERED}.")) == "completed"
    original_id = original.backend.session_id
    assert original_id is not None

    forked = _Session(tmp_path, server, approve=None)
    forked.backend = ClaudeCodeBackend(
        forked.backend.spec, replace(forked.backend.options, resume=original_id, fork=True)
    )
    forked.runner = SessionRunner(forked.backend, bridge=forked.bridge)
    since = len(server.requests)
    assert _stop(await forked.turn(f"Now remember {FORKED} too.")) == "completed"
    assert forked.backend.last_command is not None
    assert forked.backend.last_command[-3:] == ["--resume", original_id, "--fork-session"]
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text and FORKED in text for text in sent), "the fork never saw turn 1"
    fork_id = forked.backend.session_id
    assert fork_id is not None
    assert fork_id != original_id
    # A later turn of the fork continues the copy, without copying it again.
    assert _stop(await forked.turn("And the second word?")) == "completed"
    assert forked.backend.last_command[-2:] == ["--resume", fork_id]
    assert forked.backend.session_id == fork_id

    since = len(server.requests)
    assert _stop(await original.turn("What was the word?")) == "completed"
    assert original.backend.last_command is not None
    assert original.backend.last_command[-2:] == ["--resume", original_id]
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text for text in sent), "the original lost turn 1"
    assert not any(FORKED in text for text in sent), "the forked turn leaked into the original session"
    assert original.backend.session_id == original_id
    assert verify(forked.stream()) == []
    assert verify(original.stream()) == []
    _assert_gone(forked.backend.last_pid)
    _assert_gone(original.backend.last_pid)


async def test_cancel_mid_text(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"), approve=None)
    deltas = 0

    def cancel_on_third_delta(event: Event) -> None:
        nonlocal deltas
        if isinstance(event, TextDeltaEvent):
            deltas += 1
            if deltas == 3:
                assert session.runner.cancel()

    session.on_event = cancel_on_third_delta
    with anyio.fail_after(TIMEOUT):
        turn = await session.turn(SLOW_PROMPT)
    assert _stop(turn) == "cancelled", turn
    assert deltas < 40, "the text went on streaming after the cancel"
    _assert_gone(session.backend.last_pid)
    session.on_event = None
    after = await session.turn("hello")
    assert _stop(after) == "completed", after
    assert verify(session.stream()) == []
    _assert_gone(session.backend.last_pid)


async def test_cancel_while_the_approval_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    bridge_session = _Session(tmp_path, model_servers("claude"), approve=None)
    asked: list[HitlRequestEvent] = []
    # Answer nothing: cancel as the request is published, before the bridge is answered.
    bridge_session.bridge.attach(lambda event: _cancel_instead(bridge_session, event, asked))
    turn = await bridge_session.turn(TOOL_PROMPT)
    assert len(asked) == 1, turn
    assert _stop(turn) == "cancelled", turn
    ends = _of(turn, ToolEndEvent)
    assert [e.success for e in ends] == [False], turn
    assert not (bridge_session.project / TOOL_FILE).exists()
    _assert_gone(bridge_session.backend.last_pid)
    assert verify(bridge_session.stream()) == []


def _cancel_instead(session: _Session, event: Event, asked: list[HitlRequestEvent]) -> None:
    session.events.append(event)
    if isinstance(event, HitlRequestEvent):
        asked.append(event)
        assert session.runner.cancel()
