"""The real Claude Code CLI through :class:`ClaudeCodeBackend`, in process, against the scripted model server.

Each turn runs under a :class:`~hive_core.runners.SessionRunner` with a :class:`~hive_core.hitl.HitlBridge`
answering ``hitl_request`` on the wire, and the whole stream is judged by :func:`hive_protocol.verify`: a Bash
``touch`` approved (the file exists) and rejected (it does not, and the model read the reason); a second turn
resuming the CLI's session (the model is sent the first turn's words); a turn cancelled mid-text (``turn_end``
cancelled, no process left). Skipped, saying why, when Claude Code is not installed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Final

import anyio
import pytest
from agent_clis_harness import SLOW_PROMPT
from agent_clis_harness import TIMEOUT
from agent_clis_harness import TOOL_FILE
from agent_clis_harness import TOOL_PROMPT
from agent_clis_harness import ModelServers
from agent_clis_harness import model_requests
from agent_clis_harness import request_text
from agent_clis_turns import BackendSession
from agent_clis_turns import assert_gone
from agent_clis_turns import of_type
from agent_clis_turns import offline_options
from agent_clis_turns import reply_text
from agent_clis_turns import stop_of

from hive_conformance.model_server import ScriptedModelServer
from hive_core.hitl import HitlBridge
from hive_core.runners import SessionRunner
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import verify
from hive_providers.backends.claude import ClaudeCodeBackend
from hive_providers.backends.registry import resolve_backend

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

REMEMBERED: Final = "PINEAPPLE-7319"
"""A word the first turn says and the resumed turn's model request must carry."""


class _Session(BackendSession[ClaudeCodeBackend]):
    """One hive session on Claude Code, its approvals answered ``approve`` through a bridge."""

    def __init__(self, tmp: Path, server: ScriptedModelServer, *, approve: bool | None) -> None:
        bridge = HitlBridge(timeout=TIMEOUT)
        backend = ClaudeCodeBackend(
            resolve_backend("claude-code"), offline_options(tmp, server, "claude", approvals=bridge)
        )
        super().__init__(backend, session_id="claude-test", bridge=bridge, approve=approve)


async def test_approved_touch_runs(tmp_path: Path, model_servers: ModelServers) -> None:
    session = _Session(tmp_path, model_servers("claude"), approve=True)
    turn = await session.turn(TOOL_PROMPT)
    starts = of_type(turn, ToolStartEvent)
    ends = of_type(turn, ToolEndEvent)
    asked = of_type(turn, HitlRequestEvent)
    assert [s.tool for s in starts] == ["execute_command"], turn
    assert starts[0].input == {"command": f"touch {TOOL_FILE}"}
    assert len(asked) == 1
    assert asked[0].call_id == starts[0].call_id
    assert asked[0].arguments == {"command": f"touch {TOOL_FILE}"}
    assert [e.success for e in ends] == [True], turn
    assert (session.project / TOOL_FILE).exists()
    assert reply_text(turn) == "MOCK_REPLY done", turn
    end = turn[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "completed"
    assert end.input_tokens
    assert end.output_tokens
    assert session.backend.session_id is not None
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


async def test_rejected_touch_does_not_run(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("claude")
    since = len(server.requests)
    session = _Session(tmp_path, server, approve=False)
    turn = await session.turn(TOOL_PROMPT)
    ends = of_type(turn, ToolEndEvent)
    assert [(e.success, e.refusal) for e in ends] == [(False, "rejected")], turn
    assert not (session.project / TOOL_FILE).exists()
    assert reply_text(turn) == "MOCK_REPLY done", turn
    assert isinstance(turn[-1], TurnEndEvent)
    assert turn[-1].stop_reason == "completed"
    # The model read the rejection and its reason.
    sent = [request_text(r) for r in model_requests(server, since)]
    assert any("not in this test" in text for text in sent), sent[-1][-2000:]
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


async def test_resume_continues_the_cli_session(tmp_path: Path, model_servers: ModelServers) -> None:
    server = model_servers("claude")
    session = _Session(tmp_path, server, approve=None)
    first = await session.turn(f"Remember the word {REMEMBERED}.")
    assert stop_of(first) == "completed", first
    claude_session = session.backend.session_id
    assert claude_session is not None
    first_pid = session.backend.last_pid
    since = len(server.requests)
    second = await session.turn("What was the word?")
    assert stop_of(second) == "completed", second
    assert session.backend.last_command is not None
    assert session.backend.last_command[-2:] == ["--resume", claude_session]
    assert session.backend.last_pid != first_pid, "a Claude Code process was reused across turns"
    sent = [json.loads(request_text(r)) for r in model_requests(server, since)]
    assert any(REMEMBERED in json.dumps(body.get("messages")) for body in sent), "the model never saw turn 1"
    assert session.backend.session_id == claude_session
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


FORKED: Final = "MANGO-4861"
"""A word only the forked session's turn says: resuming the original must not send it."""


async def test_fork_copies_the_session_and_leaves_the_original(
    tmp_path: Path, model_servers: ModelServers
) -> None:
    server = model_servers("claude")
    original = _Session(tmp_path, server, approve=None)
    assert stop_of(await original.turn(f"Remember the word {REMEMBERED}.")) == "completed"
    original_id = original.backend.session_id
    assert original_id is not None

    forked = _Session(tmp_path, server, approve=None)
    forked.backend = ClaudeCodeBackend(
        forked.backend.spec, replace(forked.backend.options, resume=original_id, fork=True)
    )
    forked.runner = SessionRunner(forked.backend, bridge=forked.bridge)
    since = len(server.requests)
    assert stop_of(await forked.turn(f"Now remember {FORKED} too.")) == "completed"
    assert forked.backend.last_command is not None
    assert forked.backend.last_command[-3:] == ["--resume", original_id, "--fork-session"]
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text and FORKED in text for text in sent), "the fork never saw turn 1"
    fork_id = forked.backend.session_id
    assert fork_id is not None
    assert fork_id != original_id
    # A later turn of the fork continues the copy, without copying it again.
    assert stop_of(await forked.turn("And the second word?")) == "completed"
    assert forked.backend.last_command[-2:] == ["--resume", fork_id]
    assert forked.backend.session_id == fork_id

    since = len(server.requests)
    assert stop_of(await original.turn("What was the word?")) == "completed"
    assert original.backend.last_command is not None
    assert original.backend.last_command[-2:] == ["--resume", original_id]
    sent = [json.dumps(json.loads(request_text(r)).get("messages")) for r in model_requests(server, since)]
    assert any(REMEMBERED in text for text in sent), "the original lost turn 1"
    assert not any(FORKED in text for text in sent), "the forked turn leaked into the original session"
    assert original.backend.session_id == original_id
    assert verify(forked.stream()) == []
    assert verify(original.stream()) == []
    assert_gone(forked.backend.last_pid, "claude")
    assert_gone(original.backend.last_pid, "claude")


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
    assert stop_of(turn) == "cancelled", turn
    assert deltas < 40, "the text went on streaming after the cancel"
    assert_gone(session.backend.last_pid, "claude")
    session.on_event = None
    after = await session.turn("hello")
    assert stop_of(after) == "completed", after
    assert verify(session.stream()) == []
    assert_gone(session.backend.last_pid, "claude")


async def test_cancel_while_the_approval_waits(tmp_path: Path, model_servers: ModelServers) -> None:
    bridge_session = _Session(tmp_path, model_servers("claude"), approve=None)
    asked = bridge_session.cancel_when_asked(HitlRequestEvent)
    turn = await bridge_session.turn(TOOL_PROMPT)
    assert len(asked) == 1, turn
    assert stop_of(turn) == "cancelled", turn
    ends = of_type(turn, ToolEndEvent)
    assert [e.success for e in ends] == [False], turn
    assert not (bridge_session.project / TOOL_FILE).exists()
    assert_gone(bridge_session.backend.last_pid, "claude")
    assert verify(bridge_session.stream()) == []
