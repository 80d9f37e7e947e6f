"""``BackendOptions.fork`` on the ACP backend: ``session/fork`` when the agent offers it, else a clear refusal
before any session is opened; against the fake agent replaying recorded transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fake_agent import read_log
from backend_harness import SPEC
from backend_harness import one_turn
from backend_harness import options
from backend_harness import text_of

from hive_core.runners import collect_turn
from hive_protocol import ErrorEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_protocol import verify
from hive_providers.backends.acp.backend import AcpBackend
from hive_providers.backends.kit.errors import BackendUnavailable

pytestmark = pytest.mark.anyio

WAIT = 20.0


def _methods(tmp_path: Path) -> list[Any]:
    return [message.get("method") for message in read_log(tmp_path / "log.jsonl")]


async def test_a_fork_runs_every_turn_in_the_copy(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "fork", resume="sess_original", fork=True))
    try:
        with anyio.fail_after(WAIT):
            first = await collect_turn(backend, "continue")
            assert backend.session_id == "sess_copy"
            second = await collect_turn(backend, "again")
    finally:
        await backend.aclose()
    assert verify([*first, *second], turns=2) == []
    assert text_of(first) == "Forked."
    assert text_of(second) == "Still the copy."
    assert backend.session_id == "sess_copy"
    log = read_log(tmp_path / "log.jsonl")
    assert [m.get("method") for m in log] == [
        "initialize",
        "session/fork",
        "session/prompt",
        "session/prompt",
    ]
    assert log[1]["params"]["sessionId"] == "sess_original"
    assert [m["params"]["sessionId"] for m in log[2:]] == ["sess_copy", "sess_copy"]


async def test_a_fork_the_agent_does_not_offer_opens_no_session(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "fork-unsupported", resume="sess_original", fork=True))
    try:
        with anyio.fail_after(WAIT), pytest.raises(BackendUnavailable, match="cannot fork"):
            await backend(UserMessageRequest(content="continue"), lambda _: None)
        connection = backend.last_connection
        assert connection is not None
        assert connection.faulted  # stopped: nothing of the original session was touched
        assert connection.process is not None
        assert connection.process.returncode is not None
    finally:
        await backend.aclose()
    assert _methods(tmp_path) == ["initialize"]
    assert backend.session_id == "sess_original"


async def test_a_refused_fork_fails_the_turn_instead_of_running_elsewhere(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "fork-refused", resume="sess_gone", fork=True))
    events = await one_turn(backend, "continue")
    assert verify(events, turns=1) == []
    errors = [event for event in events if isinstance(event, ErrorEvent)]
    assert errors, events
    assert "session/fork" in errors[0].message, events
    assert isinstance(events[-1], TurnEndEvent), events
    assert not text_of(events)
    assert _methods(tmp_path) == ["initialize", "session/fork"]


async def test_without_fork_a_resume_is_not_copied(tmp_path: Path) -> None:
    backend = AcpBackend(SPEC, options(tmp_path, "resume-resume", resume="sess_resumable", fork=False))
    events = await one_turn(backend, "continue")
    assert verify(events, turns=1) == []
    assert backend.session_id == "sess_resumable"
    assert "session/fork" not in _methods(tmp_path)
