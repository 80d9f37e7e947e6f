"""``hive serve --engine``: front ends that keep sessions on Temporal and PostgreSQL, and workers that run them.

Real parts throughout: the Temporal dev server, PostgreSQL, two ``hive worker`` and two ``hive serve`` processes
on 127.0.0.1, the scripted model server. Workers and front ends are killed with SIGKILL.
"""

from __future__ import annotations

import signal
from contextlib import ExitStack
from typing import Any

import anyio
from agent_cli_harness import ASK_TRANSCRIPT
from agent_cli_harness import FakeCli
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import text
from cli_harness import wait_until
from engine_harness import TemporalServer
from engine_harness import start_worker
from serve_harness import Served
from serve_harness import serving
from temporalio.client import Client

from hive_conformance.model_server import ScriptedModelServer

Events = list[tuple[int, dict[str, Any]]]


def front_end(stack: ExitStack, ws: Workspace, temporal: TemporalServer, store_url: str) -> Served:
    return stack.enter_context(serving(ws, "--engine", temporal.engine, "--store", store_url))


def read(served: Served, session: str, *, after: int | None, until: Any) -> Events:
    """The stream from ``after`` until ``until(event)`` holds (that event included)."""
    seen: Events = []
    for position, event in served.events(session, after=after):
        seen.append((position, event))
        if until(event):
            return seen
    raise AssertionError(f"the stream ended early: {seen}")


def test_a_killed_worker_and_a_killed_front_end_lose_nothing_and_repeat_nothing(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    marker = ws.project / "runs.txt"
    server.add(
        calls(("c1", "execute_command", {"command": f"echo ran >> {marker}"})),
        text(*[f"slow{index} " for index in range(400)], delay=0.05),
        text("Finished on the other worker."),
    )
    ws.use(server).allow_all().sandbox_off()
    with ExitStack() as stack:
        workers = [stack.enter_context(start_worker(ws, temporal, store_url)) for _ in range(2)]
        first = front_end(stack, ws, temporal, store_url)
        second = front_end(stack, ws, temporal, store_url)
        session = first.open(working_directory=str(ws.project))
        assert (
            first.send(session, {"type": "user_message", "content": "Run it, then tell me."}).status_code
            == 202
        )
        deltas = 0

        def streaming(event: dict[str, Any]) -> bool:
            nonlocal deltas
            deltas += event["type"] == "text_delta"
            return deltas >= 5

        before = read(first, session, after=None, until=streaming)
        running = next(proc for proc in workers if f"of session {session}" in proc.stderr)
        running.kill()
        first.proc.kill()
        rest = read(second, session, after=before[-1][0], until=lambda event: event["type"] == "turn_end")
        assert session in second.client.get("/api/sessions").text
    got = before + rest
    assert [position for position, _ in got] == list(range(1, len(got) + 1))
    kinds = [event["type"] for _, event in got]
    assert kinds.count("session_started") == 1
    assert [event["call_id"] for _, event in got if event["type"] == "tool_end"] == ["c1"]
    fallback = [index for index, (_, event) in enumerate(got) if event["type"] == "fallback"]
    assert len(fallback) == 1, kinds
    assert got[fallback[0]][1]["category"] == "worker_lost"
    after = "".join(event["content"] for _, event in got[fallback[0] :] if event["type"] == "text_delta")
    assert after == "Finished on the other worker."
    assert marker.read_text().splitlines() == ["ran"]
    assert len(model_requests(server)) == 3


def test_a_worker_stopped_with_sigterm_hands_its_turn_on(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    server.add(text(*[f"slow{index} " for index in range(400)], delay=0.05), text("Handed on."))
    ws.use(server)
    with ExitStack() as stack:
        workers = [stack.enter_context(start_worker(ws, temporal, store_url)) for _ in range(2)]
        served = front_end(stack, ws, temporal, store_url)
        session = served.open(working_directory=str(ws.project))
        assert served.send(session, {"type": "user_message", "content": "Go."}).status_code == 202
        before = read(served, session, after=None, until=lambda event: event["type"] == "text_delta")
        running = next(proc for proc in workers if f"of session {session}" in proc.stderr)
        running.signal(signal.SIGTERM)
        rest = read(served, session, after=before[-1][0], until=lambda event: event["type"] == "turn_end")
        assert running.wait() == 0
    kinds = [event["type"] for _, event in rest]
    assert kinds.count("fallback") == 1
    fallback = kinds.index("fallback")
    assert rest[fallback][1]["category"] == "worker_lost"
    assert (
        "".join(event["content"] for _, event in rest[fallback:] if event["type"] == "text_delta")
        == "Handed on."
    )
    assert rest[-1][1].get("stop_reason") != "cancelled"


def test_an_approval_asked_on_a_dead_worker_runs_on_another_and_a_cancel_reaches_a_running_turn(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    server.add(
        calls(("c1", "write_file", {"path": "config.json", "content": '{"a": 1}'})),
        text("Wrote it."),
        text(*[f"long{index} " for index in range(400)], delay=0.05),
    )
    ws.use(server)
    with ExitStack() as stack:
        asked_on = stack.enter_context(start_worker(ws, temporal, store_url))
        served = front_end(stack, ws, temporal, store_url)
        session = served.open(working_directory=str(ws.project))
        assert (
            served.send(session, {"type": "user_message", "content": "Write the config."}).status_code == 202
        )
        asked = read(served, session, after=None, until=lambda event: event["type"] == "hitl_request")
        request = asked[-1][1]
        # The wait holds no worker: the turn's activity ends once the request is out.
        wait_until(lambda: anyio.run(pending_activities, temporal, session) == 0, what="the activity to end")
        asked_on.kill()
        stack.enter_context(start_worker(ws, temporal, store_url))
        answer = {"type": "hitl_response", "id": request["id"], "approved": True}
        assert served.send(session, answer).status_code == 202
        done = read(served, session, after=asked[-1][0], until=lambda event: event["type"] == "turn_end")
        assert (ws.project / "config.json").read_text() == '{"a": 1}'
        kinds = [event["type"] for _, event in done]
        assert kinds.count("hitl_request") == 0  # not asked twice
        # No worker was lost: the wait had let its worker go, and the answer started a fresh activity.
        assert "fallback" not in kinds
        assert "".join(event["content"] for _, event in done if event["type"] == "text_delta") == "Wrote it."

        assert (
            served.send(session, {"type": "user_message", "content": "Go on at length."}).status_code == 202
        )
        read(served, session, after=done[-1][0], until=lambda event: event["type"] == "text_delta")
        assert served.send(session, {"type": "cancel"}).status_code == 202
        ended = read(served, session, after=done[-1][0], until=lambda event: event["type"] == "turn_end")
        assert ended[-1][1]["stop_reason"] == "cancelled"


def test_a_cancel_while_an_approval_waits_ends_the_turn(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    server.add(calls(("c1", "write_file", {"path": "config.json", "content": "{}"})), text("Never."))
    ws.use(server)
    with ExitStack() as stack:
        stack.enter_context(start_worker(ws, temporal, store_url))
        served = front_end(stack, ws, temporal, store_url)
        session = served.open(working_directory=str(ws.project))
        assert served.send(session, {"type": "user_message", "content": "Write it."}).status_code == 202
        asked = read(served, session, after=None, until=lambda event: event["type"] == "hitl_request")
        wait_until(lambda: anyio.run(pending_activities, temporal, session) == 0, what="the activity to end")
        assert served.send(session, {"type": "cancel"}).status_code == 202
        ended = read(served, session, after=asked[-1][0], until=lambda event: event["type"] == "turn_end")
    assert ended[-1][1]["stop_reason"] == "cancelled"
    assert [event["type"] for _, event in ended].count("hitl_request") == 0
    assert not (ws.project / "config.json").exists()
    assert len(model_requests(server)) == 1


def test_a_question_asked_on_a_worker_is_answered_through_the_front_end(
    ws: Workspace, temporal: TemporalServer, store_url: str
) -> None:
    cli = FakeCli.install(ws, "reasonix")
    ws.env.update(cli.env("cli-hello"), HIVE_TEST_TRANSCRIPT=str(ASK_TRANSCRIPT))
    with ExitStack() as stack:
        stack.enter_context(start_worker(ws, temporal, store_url))
        served = front_end(stack, ws, temporal, store_url)
        session = served.open(backend="reasonix", working_directory=str(ws.project))
        served.send(session, {"type": "user_message", "content": "ASKME which database should I use?"})
        position, asked = served.until(session, "question_request")[-1]
        answer = {"type": "question_response", "id": asked["id"], "answers": {"Which database?": "SQLite"}}
        assert served.send(session, answer).status_code == 202
        rest = served.until(session, "turn_end", after=position)
    assert "MOCK_REPLY done" in "".join(e.get("content", "") for _, e in rest if e["type"] == "text_delta")
    [chosen] = [m for m in cli.log() if "result" in m and "outcome" in m["result"]]
    assert chosen["result"]["outcome"]["outcome"] == "selected"
    assert chosen["result"]["outcome"]["optionId"] != "q1:cancel"


async def pending_activities(engine: TemporalServer, session_id: str) -> int:
    """How many activities the session's workflow has scheduled or running."""
    client = await Client.connect(f"127.0.0.1:{engine.port}")
    description = await client.get_workflow_handle(session_id).describe()
    return len(description.raw_description.pending_activities)


def test_sessions_go_on_after_the_temporal_server_restarts(
    ws: Workspace, server: ScriptedModelServer, temporal: TemporalServer, store_url: str
) -> None:
    server.add(text("Before."), text("After."))
    ws.use(server)
    with ExitStack() as stack:
        stack.enter_context(start_worker(ws, temporal, store_url))
        served = front_end(stack, ws, temporal, store_url)
        session = served.open(working_directory=str(ws.project))
        first = served.turn(session, "One.")
        temporal.stop()
        temporal.start()
        second = served.turn(session, "Two.", after=first[-1][0])
    assert "".join(event["content"] for _, event in second if event["type"] == "text_delta") == "After."
    assert second[0][0] == first[-1][0] + 1
