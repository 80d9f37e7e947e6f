"""The ACP CLIs that cannot run on this machine (Qoder and Kiro need a vendor login; Junie's and OMP's installers
download binaries; DeepSeek Harness did not install), driven through their own launch specs by the fake agent
replaying transcripts written from each CLI's documented behaviour: the same client, the same rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp_fake_agent import read_log
from hitl_turn import Turn

from hive_protocol import ErrorEvent
from hive_protocol import Event
from hive_protocol import HitlRequestEvent
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio


async def _turn(tmp_path: Path, name: str, transcript: str, *, approve: bool) -> list[Event]:
    return await Turn(tmp_path, transcript, spec=resolve_backend(name), approve=approve).run(
        "RUNTOOL go", stop_reason=None
    )


def _answer(tmp_path: Path) -> Any:
    [answer] = [
        message["result"]
        for message in read_log(tmp_path / "log.jsonl")
        if "method" not in message and "result" in message
    ]
    return answer


@pytest.mark.parametrize(
    ("name", "allow", "reject"),
    [
        ("kiro-cli", "allow", "deny"),
        ("junie", "approve", "reject"),
        ("omp", "allow_once", "reject_once"),
        ("dsh", "once", "no"),
    ],
)
@pytest.mark.parametrize("approve", [True, False], ids=["approve", "reject"])
async def test_a_command_is_asked_about_and_answered_by_kind(
    tmp_path: Path, name: str, allow: str, reject: str, approve: bool
) -> None:
    events = await _turn(tmp_path, name, f"{name}-permission", approve=approve)

    [asked] = [event for event in events if isinstance(event, HitlRequestEvent)]
    assert asked.tool_name == "execute_command"
    assert asked.arguments == {"command": "touch hive_tool_ran.txt"}
    [start] = [event for event in events if isinstance(event, ToolStartEvent)]
    [end] = [event for event in events if isinstance(event, ToolEndEvent)]
    assert start.call_id == end.call_id == asked.call_id
    assert end.success is approve  # a refused call is a failure whatever the agent reports after it
    assert _answer(tmp_path) == {"outcome": {"outcome": "selected", "optionId": allow if approve else reject}}
    assert "".join(e.content for e in events if isinstance(e, TextDeltaEvent)) == "MOCK_REPLY done"
    last = events[-1]
    assert isinstance(last, TurnEndEvent)
    assert last.stop_reason == "completed"


async def test_a_cli_that_needs_a_login_ends_the_turn_with_an_auth_error(tmp_path: Path) -> None:
    events = await _turn(tmp_path, "qodercli", "qodercli-auth-required", approve=True)

    [error] = [event for event in events if isinstance(event, ErrorEvent)]
    assert error.code == "auth"
    assert "Authentication required" in error.message
    assert isinstance(events[-1], TurnEndEvent)
