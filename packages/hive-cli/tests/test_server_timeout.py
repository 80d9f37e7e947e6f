"""``hive run --server --timeout N``: each turn may take at most N seconds; the server goes on serving.

A turn over its time ends as ``hive run --timeout`` ends one: ``error{code: timeout}`` and its ``turn_end``. The
limit is per turn, not for the server: a server lives as long as its client, and the next turn gets the whole
budget again.
"""

from __future__ import annotations

import msgspec
import pytest
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text

from hive_conformance.model_server import ScriptedModelServer
from hive_protocol import verify


@pytest.mark.slow
def test_a_turn_over_its_time_ends_with_a_timeout_error_and_the_next_turn_runs(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    # The first answer starts, then stalls for good: only the timeout can end that turn.
    server.add(msgspec.structs.replace(text("partial ", "never sent"), stall_after_chunks=1), text("quick"))
    # Two seconds: long enough for the request to reach the model on a loaded machine, so the stalled answer is
    # surely the first turn's.
    with ws.use(server).start("run", "--server", "--timeout", "2") as proc:
        assert proc.next_event()["type"] == "session_started"
        proc.send({"type": "user_message", "content": "slow"})
        slow = proc.events_until("turn_end", timeout=30)
        proc.send({"type": "user_message", "content": "fast"})
        fast = proc.events_until("turn_end", timeout=30)
        proc.send({"type": "shutdown"})
        assert proc.wait() == 0, proc.stderr
        lines = list(proc.out)

    # The partial answer shows the turn was stalled in the model's stream (unless the time ran out first).
    assert [e["type"] for e in slow] in (["text_delta", "error", "turn_end"], ["error", "turn_end"]), slow
    assert [e["content"] for e in slow if e["type"] == "text_delta"] in (["partial "], [])
    error, end = slow[-2:]
    assert error["code"] == "timeout"
    assert "2 s" in error["message"]
    assert "stop_reason" not in end  # a failure, not a cancellation
    assert [e["type"] for e in fast] == ["text_delta", "turn_end"]
    assert fast[0]["content"] == "quick"
    assert fast[1]["stop_reason"] == "completed"
    assert len(model_requests(server)) == 2
    assert verify(lines, turns=2) == []


def test_the_help_says_the_timeout_is_per_turn_with_server(ws: Workspace) -> None:
    shown = ws.run("run", "--help")
    assert shown.code == 0, shown
    assert "with --server, each turn" in " ".join(shown.stdout.split())
