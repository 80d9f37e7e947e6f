"""Sessions on Temporal: ``hive worker`` runs the turns of sessions a front end keeps on the engine.

Real parts throughout: the Temporal dev server, PostgreSQL, ``hive worker`` processes, the scripted model server.
The front end here is the engine's client and the shared event log, as ``hive serve --engine`` uses them (the
failover tests through ``hive serve`` itself are in test_serve_engine.py).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_harness import TIMEOUT
from cli_harness import Workspace
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until
from engine_harness import TemporalServer
from engine_harness import start_worker
from engine_harness import temporal_server
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from hive_cli.engine import EngineAddress
from hive_cli.engine import EngineAddressError
from hive_cli.engine import SessionSpec
from hive_cli.engine.address import TASK_QUEUE
from hive_cli.engine.temporal import TemporalEngine
from hive_cli.engine.turns import TurnActivities
from hive_cli.engine.wire import TurnFailure
from hive_cli.engine.wire import TurnInput
from hive_cli.engine.wire import TurnOutcome
from hive_cli.engine.workflow import RUN_TURN
from hive_cli.engine.workflow import SessionWorkflow
from hive_cli.serve.shared_log import SharedServeLog
from hive_conformance.model_server import ScriptedModelServer
from hive_core.sessions.postgres import PostgresSessionStore
from hive_protocol import UserMessageRequest
from hive_protocol import encode


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


def test_a_turn_every_try_of_which_fails_ends_with_an_error_and_its_turn_end(
    ws: Workspace, temporal: TemporalServer, store_url: str
) -> None:
    # The failure is injected where no real part fails on demand: a turn activity that fails for good on its
    # first try. The workflow, the engine and the closing activity writing to the shared log are the real ones.
    tried: list[int] = []

    @activity.defn(name=RUN_TURN)
    async def failing_turn(turn: TurnInput) -> TurnOutcome:
        tried.append(turn.turn)
        raise ApplicationError(f"the store went away during turn {turn.turn}", non_retryable=True)

    spec = SessionSpec(session_id="sess-givenup", working_directory=str(ws.project))
    store = PostgresSessionStore(store_url)
    activities = TurnActivities(store, SharedServeLog(store), worker="test")

    async def go() -> list[dict[str, Any]]:
        client = await Client.connect(f"127.0.0.1:{temporal.port}")
        async with Worker(
            client,
            task_queue=TASK_QUEUE,
            workflows=[SessionWorkflow],
            activities=[failing_turn, activities.end_turn],
        ):
            engine = await TemporalEngine.connect(EngineAddress.parse(temporal.engine))
            for number in (1, 2):
                await engine.send(
                    spec, encode(UserMessageRequest(content=f"Message {number}.")).rstrip(b"\n")
                )
                await anyio.to_thread.run_sync(
                    partial(
                        wait_until,
                        lambda n=number: ended_turns(store_url, spec.session_id) == n,
                        what=f"turn {number} to end",
                        timeout=TIMEOUT * 2,
                    )
                )
        # The closing activity ends a turn once, however often it runs.
        await activities.end_turn(TurnFailure(spec, 2, "run again"))
        return events(store_url, spec.session_id)

    try:
        got = anyio.run(go)
    finally:
        store.close()
    assert [event["type"] for event in got] == ["error", "turn_end", "error", "turn_end"]
    assert "the store went away during turn 1" in got[0]["message"]
    assert got[0]["message"].startswith("the turn was given up")
    assert "the store went away during turn 2" in got[2]["message"]
    assert "stop_reason" not in got[1]
    assert tried == [1, 2]


@pytest.mark.parametrize(
    ("given", "target", "namespace"),
    [
        ("temporal://127.0.0.1:7233", "127.0.0.1:7233", "default"),
        ("temporal://engine.internal:7233/hive-prod", "engine.internal:7233", "hive-prod"),
        ("temporal://[::1]:7233/", "[::1]:7233", "default"),
    ],
)
def test_an_engine_address_names_its_host_port_and_namespace(given: str, target: str, namespace: str) -> None:
    address = EngineAddress.parse(given)
    assert address.target == target
    assert address.namespace == namespace


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("127.0.0.1:7233", "is not one hive knows"),
        ("dbos://127.0.0.1:7233", "is not one hive knows"),
        ("temporal://127.0.0.1", "names no host and port"),
        ("temporal://127.0.0.1:7233/a/b", "more than a namespace"),
    ],
)
def test_a_bad_engine_address_is_refused_saying_what_a_good_one_looks_like(given: str, says: str) -> None:
    with pytest.raises(EngineAddressError, match=says) as refused:
        EngineAddress.parse(given)
    assert "temporal://HOST:PORT" in str(refused.value)


def test_a_worker_without_a_shared_store_or_a_reachable_engine_refuses_in_one_line(
    ws: Workspace, store_url: str
) -> None:
    alone = ws.run("worker", "--engine", "temporal://127.0.0.1:1/default")
    assert alone.code == 2
    assert alone.stderr.strip().splitlines() == [
        "hive: a worker needs the store every front end and worker shares: give --store postgresql://… "
        "(or sessions.store)"
    ]
    unreachable = ws.run("worker", "--engine", "temporal://127.0.0.1:1/default", "--store", store_url)
    assert unreachable.code == 1
    lines = unreachable.stderr.strip().splitlines()
    assert len(lines) == 1, unreachable.stderr
    assert lines[0].startswith("hive: the engine temporal://127.0.0.1:1/default cannot be reached")
    bad = ws.run("worker", "--engine", "http://127.0.0.1:7233")
    assert bad.code == 2
    assert "temporal://HOST:PORT" in bad.stderr


def test_a_long_session_continues_as_new_and_keeps_going(
    ws: Workspace, server: ScriptedModelServer, tmp_path: Path, store_url: str
) -> None:
    server.add(*[text(f"Reply {number}.") for number in range(1, 5)])
    ws.use(server)
    spec = SessionSpec(session_id="sess-long", working_directory=str(ws.project))
    # The server suggests continuing as new past a few events, where a real one does past thousands.
    with (
        temporal_server(tmp_path, settings={"limit.historyCount.suggestContinueAsNew": 10}) as engine,
        start_worker(ws, engine, store_url),
    ):
        for number in range(1, 5):
            send(engine, spec, encode(UserMessageRequest(content=f"Message {number}.")).rstrip(b"\n"))
            wait_until(
                lambda n=number: ended_turns(store_url, spec.session_id) == n,
                what=f"turn {number} to end",
                timeout=TIMEOUT * 2,
            )
        runs = anyio.run(workflow_runs, engine, spec.session_id)
    texts = [
        event["content"] for event in events(store_url, spec.session_id) if event["type"] == "text_delta"
    ]
    assert "".join(texts) == "Reply 1.Reply 2.Reply 3.Reply 4."
    assert runs.count("CONTINUED_AS_NEW") >= 1, runs
    assert runs.count("RUNNING") == 1, runs


async def workflow_runs(engine: TemporalServer, session_id: str) -> list[str]:
    """The statuses of every run of the session's workflow."""
    client = await Client.connect(f"127.0.0.1:{engine.port}")
    return [
        execution.status.name if execution.status is not None else "?"
        async for execution in client.list_workflows(f"WorkflowId = '{session_id}'")
    ]


def test_doctor_says_whether_the_engine_answers(ws: Workspace, temporal: TemporalServer) -> None:
    up = ws.run("doctor", "--engine", temporal.engine)
    assert f"engine: Temporal {temporal.engine} reachable, namespace default found" in up.stdout, up.stdout
    down = ws.run("doctor", "--engine", "temporal://127.0.0.1:1/default")
    assert down.code == 1
    assert "engine: the engine temporal://127.0.0.1:1/default cannot be reached" in down.stdout, down.stdout
    none = ws.run("doctor")
    assert "engine: none (hive serve runs sessions in its own process)" in none.stdout
