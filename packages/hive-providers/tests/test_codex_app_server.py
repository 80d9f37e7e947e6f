"""Codex's app-server connection on acp's JSON-RPC ``Connection``, against a tiny fake app-server (a real
subprocess): answers reach their callers whatever their order, Codex's requests are served while notifications
keep flowing, error answers go both ways, a cancel answers what is open before it returns (so does the end of a
turn), and hive writes Codex's dialect (no ``"jsonrpc"``, no null fields).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest

from hive_core.approvals import ApprovalDecision
from hive_core.approvals import ApprovalRequest
from hive_core.runners import collect_turn
from hive_protocol import TurnEndEvent
from hive_providers.backends.codex import CodexBackend
from hive_providers.backends.codex.app_server import AppServerConnection
from hive_providers.backends.codex.app_server import RpcError
from hive_providers.backends.codex.backend import CANCEL_DECISION
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.registry import resolve_backend

pytestmark = pytest.mark.anyio

APPROVAL: Final = "item/commandExecution/requestApproval"

FAKE_SERVER: Final = f"""
import json, sys
def send(m): sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
def read(): return json.loads(sys.stdin.readline())
seen = []
for line in sys.stdin:
    m = json.loads(line)
    seen.append(m)
    method, id_ = m.get("method"), m.get("id")
    if method is None:  # hive's answer to a request of ours: said back as a notification
        send({{"method": "answered", "params": m}})
    elif method == "initialize":
        send({{"id": id_, "result": {{"userAgent": "fake"}}}})
    elif method in ("a", "b"):  # two requests, answered in the reverse order of their arrival
        other = read()
        seen.append(other)
        send({{"id": other["id"], "result": {{"for": other["method"]}}}})
        send({{"id": id_, "result": {{"for": method}}}})
    elif method == "ask":  # Codex asks hive, and its notifications go on while hive decides
        send({{"id": "req-7", "method": "{APPROVAL}", "params": {{"itemId": "c1"}}}})
        for n in range(3):
            send({{"method": "tick", "params": {{"n": n}}}})
        send({{"id": id_, "result": {{}}}})
    elif method == "seen":
        send({{"id": id_, "result": {{"seen": seen}}}})
    elif method == "fail":
        send({{"id": id_, "error": {{"code": -32602, "message": "bad params"}}}})
"""


async def started(tmp_path: Path) -> AppServerConnection:
    script = tmp_path / "fake_app_server.py"
    script.write_text(textwrap.dedent(FAKE_SERVER))
    return await AppServerConnection.start(
        [sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ), timeout=10.0, name="fake"
    )


class Notes:
    """The notifications seen, and events for the ones a test waits on."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self.ticked = anyio.Event()
        self.answered = anyio.Event()

    def __call__(self, method: str, params: dict[str, Any]) -> None:
        self.seen.append((method, params))
        if method == "tick" and params.get("n") == 2:
            self.ticked.set()
        if method == "answered":
            self.answered.set()


async def test_answers_in_reverse_order_each_reach_their_caller(tmp_path: Path) -> None:
    connection = await started(tmp_path)
    results: dict[str, dict[str, Any]] = {}

    async def ask(method: str) -> None:
        results[method] = await connection.request(method)

    try:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                group.start_soon(ask, "a")
                group.start_soon(ask, "b")
            seen = (await connection.request("seen"))["seen"]
    finally:
        await connection.aclose(0.0)
    assert results == {"a": {"for": "a"}, "b": {"for": "b"}}
    # hive writes Codex's dialect: no "jsonrpc", and no null params (``initialized`` has none).
    assert seen[1] == {"method": "initialized"}
    assert all("jsonrpc" not in message for message in seen)
    assert sorted(message["id"] for message in seen[2:4]) == [1, 2]


async def test_a_request_of_codexs_is_answered_while_notifications_keep_flowing(tmp_path: Path) -> None:
    connection = await started(tmp_path)
    notes = Notes()
    asked: list[tuple[str, dict[str, Any]]] = []

    async def decide(method: str, params: dict[str, Any]) -> dict[str, Any]:
        asked.append((method, params))
        await notes.ticked.wait()  # the user decides only after every notification came
        return {"decision": "accept"}

    connection.on_notification, connection.on_request = notes, decide
    try:
        with anyio.fail_after(10):
            await connection.request("ask")
            await notes.answered.wait()
    finally:
        await connection.aclose(0.0)
    assert asked == [(APPROVAL, {"itemId": "c1"})]
    assert [method for method, _ in notes.seen] == ["tick", "tick", "tick", "answered"]
    # The answer carries Codex's id verbatim, as Codex writes an answer.
    assert notes.seen[-1][1] == {"id": "req-7", "result": {"decision": "accept"}}


async def test_errors_go_both_ways(tmp_path: Path) -> None:
    connection = await started(tmp_path)
    notes = Notes()

    async def refuse(method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RpcError(-32601, f"hive does not serve {method}")

    connection.on_notification, connection.on_request = notes, refuse
    try:
        with anyio.fail_after(10):
            with pytest.raises(RpcError, match=r"^bad params \(-32602\)$") as failed:
                await connection.request("fail")
            await connection.request("ask")
            await notes.answered.wait()
    finally:
        await connection.aclose(0.0)
    assert (failed.value.code, failed.value.message) == (-32602, "bad params")
    assert notes.seen[-1][1] == {
        "id": "req-7",
        "error": {"code": -32601, "message": f"hive does not serve {APPROVAL}"},
    }


async def test_a_cancel_answers_the_open_requests_before_it_returns(tmp_path: Path) -> None:
    connection = await started(tmp_path)
    notes = Notes()
    waiting = anyio.Event()

    async def never(method: str, params: dict[str, Any]) -> dict[str, Any]:
        waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    connection.on_notification, connection.on_request = notes, never
    try:
        with anyio.fail_after(10):
            await connection.request("ask")
            await waiting.wait()
            await connection.cancel_requests({"decision": "cancel"})
            # Written before cancel_requests returned: Codex reads it before the next request.
            seen = (await connection.request("seen"))["seen"]
    finally:
        await connection.aclose(0.0)
    assert seen[-2] == {"id": "req-7", "result": {"decision": "cancel"}}
    assert seen[-1]["method"] == "seen"


# -- a turn that ends with a request of Codex's still open -------------------------------------------------------

TURN_SERVER: Final = f"""
import json, sys
def send(m): sys.stdout.write(json.dumps(m) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    method, id_ = m.get("method"), m.get("id")
    if method is None:  # hive's answer to the approval
        open("answer.json", "w").write(json.dumps(m))
    elif method == "initialize":
        send({{"id": id_, "result": {{"userAgent": "fake"}}}})
    elif method == "thread/start":
        send({{"id": id_, "result": {{"thread": {{"id": "thr"}}}}}})
    elif method == "turn/start":
        t = {{"threadId": "thr", "turnId": "t1"}}
        send({{"id": id_, "result": {{"turn": {{"id": "t1", "status": "inProgress"}}}}}})
        # Codex asks, then ends the turn without waiting for the answer.
        send({{"id": "req-8", "method": "{APPROVAL}", "params": {{**t, "itemId": "c1", "command": "touch x"}}}})
        send({{"method": "turn/completed", "params": {{"threadId": "thr", "turn": {{"id": "t1", "status": "completed"}}}}}})
"""


class NeverAnswers:
    """An approval service whose user never decides."""

    async def request(self, request: ApprovalRequest) -> ApprovalDecision:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_request_the_turn_leaves_open_is_answered_cancel_when_it_ends(tmp_path: Path) -> None:
    script = tmp_path / "fake_codex.py"
    script.write_text(textwrap.dedent(TURN_SERVER))
    options = BackendOptions(
        cwd=tmp_path,
        executable=sys.executable,
        arguments=(str(script),),
        startup_timeout=10.0,
        cancel_grace=5.0,
        approvals=NeverAnswers(),
    )
    backend = CodexBackend(resolve_backend("codex"), options)
    answer = tmp_path / "answer.json"
    try:
        with anyio.fail_after(10):
            events = await collect_turn(backend, "hi")
    finally:
        await backend.aclose()  # closes Codex's stdin: it reads the answer (if one came) and exits
    assert isinstance(events[-1], TurnEndEvent)
    assert answer.exists()
    assert json.loads(answer.read_text()) == {"id": "req-8", "result": CANCEL_DECISION}
