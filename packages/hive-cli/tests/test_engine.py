"""Sessions on Temporal: ``hive worker`` runs the turns of sessions a front end keeps on the engine.

Real parts throughout: the Temporal dev server, PostgreSQL, ``hive worker`` processes, the scripted model server.
The front end here is the engine's client and the shared event log, as ``hive serve --engine`` uses them.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_harness import TIMEOUT
from cli_harness import Proc
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until
from core_postgres import PostgresServer
from engine_harness import TemporalServer
from engine_harness import temporal_server

from hive_cli.engine import EngineAddress
from hive_cli.engine import SessionSpec
from hive_cli.engine.temporal import TemporalEngine
from hive_cli.serve.shared_log import SharedServeLog
from hive_conformance.model_server import ScriptedModelServer
from hive_core.sessions.postgres import PostgresSessionStore
from hive_protocol import UserMessageRequest
from hive_protocol import encode

READY_PREFIX = b"hive worker: ready ("


@pytest.fixture
def temporal(tmp_path: Path) -> Generator[TemporalServer]:
    with temporal_server(tmp_path) as server:
        yield server


@pytest.fixture
def store_url(postgres: PostgresServer) -> str:
    return postgres.new_database()


def start_worker(ws: Workspace, temporal: TemporalServer, store_url: str) -> Proc:
    proc = ws.start("worker", "--engine", temporal.engine, "--store", store_url)
    line = proc.next_line(timeout=TIMEOUT * 2)
    assert line is not None, proc.stderr
    assert line.startswith(READY_PREFIX), (line, proc.stderr)
    return proc


def send(temporal: TemporalServer, spec: SessionSpec, line: bytes) -> None:
    async def go() -> None:
        engine = await TemporalEngine.connect(EngineAddress.parse(temporal.engine))
        await engine.send(spec, line)

    anyio.run(go)


def events(store_url: str, session_id: str) -> list[dict[str, Any]]:
    store = PostgresSessionStore(store_url)
    try:
        return [json.loads(line) for line in SharedServeLog(store).events(session_id)]
    finally:
        store.close()


def ended_turns(store_url: str, session_id: str) -> int:
    return sum(1 for event in events(store_url, session_id) if event["type"] == "turn_end")


def test_a_turn_whose_worker_is_killed_goes_on_on_the_other_from_its_last_step(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    marker = ws.project / "runs.txt"
    server.add(
        calls(("c1", "execute_command", {"command": f"echo ran >> {marker}"})),
        text(*[f"slow{index} " for index in range(400)], delay=0.05),
        text("Finished on the other worker."),
    )
    ws.use(server).allow_all().sandbox_off()
    spec = SessionSpec(session_id="sess-failover", working_directory=str(ws.project))
    with start_worker(ws, temporal, store_url) as first, start_worker(ws, temporal, store_url) as second:
        send(temporal, spec, encode(UserMessageRequest(content="Run it, then tell me.")).rstrip(b"\n"))
        try:
            wait_until(
                lambda: (
                    sum(1 for event in events(store_url, spec.session_id) if event["type"] == "text_delta")
                    >= 5
                ),
                what="the second round to stream",
                timeout=TIMEOUT,
            )
        except AssertionError:
            print(events(store_url, spec.session_id), first.stderr, second.stderr)
            raise
        running = first if "turn 1 of session" in first.stderr else second
        other = second if running is first else first
        running.kill()
        wait_until(
            lambda: ended_turns(store_url, spec.session_id) == 1, what="the turn to end", timeout=TIMEOUT * 3
        )
        assert "attempt 2" in other.stderr
    got = events(store_url, spec.session_id)
    kinds = [event["type"] for event in got]
    assert kinds.count("session_started") == 1
    assert [event["call_id"] for event in got if event["type"] == "tool_end"] == ["c1"]
    fallback = [index for index, event in enumerate(got) if event["type"] == "fallback"]
    assert len(fallback) == 1, kinds
    assert got[fallback[0]]["category"] == "worker_lost"
    assert got[fallback[0]]["kind"] == "retry"
    after = "".join(event["content"] for event in got[fallback[0] :] if event["type"] == "text_delta")
    assert after == "Finished on the other worker."
    assert kinds[-1] == "turn_end"
    # The tool ran once; the model was asked for the first round once and for the lost round again.
    assert marker.read_text().splitlines() == ["ran"]
    assert len(model_requests(server)) == 3


def test_a_worker_refuses_a_session_whose_folder_it_cannot_see(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    server.add(text("never asked"))
    ws.use(server)
    spec = SessionSpec(session_id="sess-nofolder", working_directory=str(ws.root / "elsewhere"))
    with start_worker(ws, temporal, store_url):
        send(temporal, spec, encode(UserMessageRequest(content="hello")).rstrip(b"\n"))
        wait_until(
            lambda: ended_turns(store_url, spec.session_id) == 1, what="the turn to end", timeout=TIMEOUT * 2
        )
    got = events(store_url, spec.session_id)
    assert got[0]["type"] == "error"
    assert "is not visible on worker" in got[0]["message"]
    assert "shared volume" in got[0]["message"]
    assert model_requests(server) == []
