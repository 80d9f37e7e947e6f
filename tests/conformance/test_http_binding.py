"""The kit's HTTP binding (:mod:`hive_conformance.http`) against a real HTTP runner: hive behind
:mod:`http_bridge`, one ``hive run --server`` per session.

A runner passes over HTTP exactly when it passes over stdio: the scenarios that stress the transport pass with
every byte compared, and the lines they produced over HTTP are the fixture's bytes (``duration_ms`` aside).
Also: ``Last-Event-ID`` resumption, the bridge's own answers, the SSE parser, and a URL where nothing listens.
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator
from collections.abc import Generator
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest
from http_bridge import HttpBridge
from hypothesis import given
from hypothesis import strategies as st

from hive_conformance.cli import main
from hive_conformance.fixtures import Scenario
from hive_conformance.fixtures import default_fixtures_dir
from hive_conformance.fixtures import load_scenarios
from hive_conformance.harness import Suite
from hive_conformance.harness import normalize_recording
from hive_conformance.harness import run_suite
from hive_conformance.http import HttpTarget
from hive_conformance.http import sse_payloads
from hive_conformance.targets import RunnerStartError
from hive_conformance.tool_server import SERVER_NAME
from hive_conformance.workspace import API_KEY
from hive_conformance.workspace import MODEL
from hive_conformance.workspace import PASSED_VARIABLES
from hive_conformance.workspace import SESSION_ID
from hive_conformance.workspace import SETTINGS_FILE_NAME
from hive_conformance.workspace import prepare_workspace

TRANSPORT_SCENARIOS = (
    "text_plain",
    "non_ascii",
    "line_separators",
    "long_request_line",
    "approval_approve",
    "cancel_during_tool",
    "shutdown_drains_queue",
    "unreadable_malformed",
    "two_turns",
)
"""Scenarios that stress the transport: odd bytes, a line over 1 MiB, requests while a turn runs or waits, a
runner that exits with its input open, a malformed line, two turns in one session."""

SCENARIOS = load_scenarios(names=TRANSPORT_SCENARIOS)
TEXT_PLAIN = next(scenario for scenario in SCENARIOS if scenario.name == "text_plain")
WAIT = 30.0


def runner_environment(suite: Suite) -> dict[str, str]:
    """The bridge's environment: what the harness gives a stdio runner (see ``prepare_workspace``), minus what
    the bridge sets per session (``HOME``, ``HIVE_HOME``, ``HIVE_SESSION_ID``) and the fixture MCP server file
    (the bridge declares the server in each session's hive home, from the binding's ``settings``)."""
    environment = {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
    environment.update(
        OPENAI_ENDPOINT=suite.model.url.rstrip("/") + "/v1",
        OPENAI_API="responses",
        OPENAI_API_KEY=API_KEY,
        OPENAI_MODEL=MODEL,
        NO_COLOR="1",
    )
    return environment


@pytest.fixture(scope="module")
def suite() -> Iterator[Suite]:
    """The scripted model and the fixture tools, for the whole module."""
    with Suite(default_fixtures_dir() / "files") as running:
        yield running


@pytest.fixture(scope="module")
def bridge(suite: Suite) -> Iterator[HttpBridge]:
    """hive behind the bridge, its children pointed at the suite's servers."""
    with HttpBridge(environment=runner_environment(suite)) as running:
        yield running


# -- the kit over HTTP ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_kit_passes_over_http_with_the_stdio_bytes(
    suite: Suite, bridge: HttpBridge, tmp_path: Path
) -> None:
    output = tmp_path / "output"
    report = await run_suite(SCENARIOS, HttpTarget(bridge.url), suite, exact=True, output_dir=output)
    failures = {
        scenario.name: scenario.diff or scenario.findings or scenario.stderr
        for scenario in report.scenarios
        if scenario.status != "pass"
    }
    assert failures == {}
    # A subset leaves some mandatory requirements untested, so the report cannot say "conformant".
    assert {requirement.status for requirement in report.requirements} == {"pass", "not_tested"}
    assert [scenario.name for scenario in report.scenarios] == sorted(TRANSPORT_SCENARIOS)
    for scenario in SCENARIOS:
        written = (output / f"{scenario.name}.jsonl").read_bytes()
        assert written.endswith(b"\n"), scenario.name
        assert normalize_recording(written.split(b"\n")[:-1]) == scenario.expected, scenario.name


# -- the bridge by hand: Last-Event-ID, and its answers ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_last_event_id_replays_exactly_the_events_after_it(
    suite: Suite, bridge: HttpBridge, tmp_path: Path
) -> None:
    handle = await _open_text_plain(suite, bridge, tmp_path)
    events = f"/sessions/{handle}/events"
    async with httpx2.AsyncClient(base_url=bridge.url, timeout=WAIT) as client:
        with anyio.fail_after(WAIT):
            sent = await client.post(f"/sessions/{handle}/requests", content=_request_bytes(TEXT_PLAIN))
            assert sent.status_code == 204
            assert (await client.post(f"/sessions/{handle}/close")).status_code == 204
            # The input is closed: the stream ends once the turn has ended.
            everything = await client.get(events)
            assert everything.status_code == 200
            assert everything.headers["content-type"].startswith("text/event-stream")
            lines = await _payloads(everything.content)
            resumed = await client.get(events, headers={"last-event-id": "2"})
            at_end = await client.get(events, headers={"last-event-id": str(len(lines))})
            not_an_id = await client.get(events, headers={"last-event-id": "two"})
            late = await client.post(f"/sessions/{handle}/requests", content=_request_bytes(TEXT_PLAIN))
    assert normalize_recording(lines) == TEXT_PLAIN.expected
    assert everything.content == _frames(lines, first=1)
    assert (resumed.status_code, resumed.content) == (200, _frames(lines[2:], first=3))
    assert (at_end.status_code, at_end.content) == (200, b"")
    assert not_an_id.status_code == 400
    assert late.status_code == 409


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_bridge_answers_unknown_sessions_and_bad_requests(
    bridge: HttpBridge, tmp_path: Path
) -> None:
    async with httpx2.AsyncClient(base_url=bridge.url, timeout=WAIT) as client:
        with anyio.fail_after(WAIT):
            unknown = [
                await client.get("/sessions/nobody/events"),
                await client.post("/sessions/nobody/requests", content=b"{}\n"),
                await client.post("/sessions/nobody/close"),
            ]
            no_directory = await client.post(
                "/sessions", json={"session_id": "x", "working_directory": str(tmp_path / "missing")}
            )
            not_json = await client.post("/sessions", content=b"{not json")
    assert [response.status_code for response in unknown] == [404, 404, 404]
    assert no_directory.status_code == 400
    assert not_json.status_code == 400


@pytest.mark.anyio
async def test_closing_the_bridge_kills_the_children_and_ends_their_streams(tmp_path: Path) -> None:
    # A child that never exits by itself: it reads its input until the end, which never comes.
    command = [
        sys.executable,
        "-c",
        "import sys; sys.stdout.write('{}\\n'); sys.stdout.flush(); sys.stdin.read()",
    ]
    with HttpBridge(command) as bridge:
        async with httpx2.AsyncClient(base_url=bridge.url, timeout=WAIT) as client:
            with anyio.fail_after(WAIT):
                opened = await client.post(
                    "/sessions", json={"session_id": "a", "working_directory": str(tmp_path)}
                )
                again = await client.post(
                    "/sessions", json={"session_id": "a", "working_directory": str(tmp_path)}
                )
                assert [opened.json(), again.json()] == [{"session_id": "a"}, {"session_id": "a-2"}]
                pids = [bridge.pid("a"), bridge.pid("a-2")]
                async with client.stream("GET", "/sessions/a/events") as events:
                    chunks = events.aiter_bytes()
                    assert await anext(chunks) == b"id: 1\ndata: {}\n\n"
                    await anyio.to_thread.run_sync(bridge.close)
                    assert [chunk async for chunk in chunks] == []
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# -- a URL where nothing listens -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_url_where_nothing_listens_is_a_runner_start_error(suite: Suite) -> None:
    with (
        _silent_port() as url,
        anyio.fail_after(WAIT),
        pytest.raises(RunnerStartError, match="cannot open a session at"),
    ):
        await run_suite([TEXT_PLAIN], HttpTarget(url), suite, exact=True)


@pytest.mark.anyio
async def test_the_token_goes_with_every_request_as_a_bearer(suite: Suite) -> None:
    seen: list[str | None] = []

    class Refusing(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.headers.get("authorization"))
            self.send_response(401)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Refusing) as refusing:
        thread = threading.Thread(target=refusing.serve_forever, daemon=True)
        thread.start()
        url = f"http://127.0.0.1:{refusing.server_address[1]}"
        try:
            with anyio.fail_after(WAIT), pytest.raises(RunnerStartError, match="401"):
                await run_suite([TEXT_PLAIN], HttpTarget(url, token="s3cret"), suite, exact=True)
        finally:
            refusing.shutdown()
    assert seen == ["Bearer s3cret"]


@pytest.mark.parametrize("bad", ["silent", "http://[::1", "localhost:1"])
def test_the_cli_exits_2_with_a_message_when_it_cannot_reach_the_runner(
    bad: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with _silent_port() as silent:
        status = main(["http", "-q", "-k", "text_plain", silent if bad == "silent" else bad])
    out, err = capsys.readouterr()
    assert status == 2
    assert err.startswith("hive-conformance: ")
    assert "Traceback" not in err
    assert out == ""


# -- sse_payloads --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chunks", "payloads"),
    [
        ([b'id: 1\ndata: {"a":1}\n\n'], [b'{"a":1}']),
        ([b"data: a\ndata: b\ndata:c\n\n"], [b"a\nb\nc"]),
        ([b"data: x\r", b"\n\r", b"\ndata: y\r\r"], [b"x", b"y"]),
        ([b": comment\nid: 7\nevent: turn\nretry: 10\nfoo: bar\ndata: kept\n\n"], [b"kept"]),
        ([b": only a comment\nid: 3\n\n\n"], []),
        ([b"data\n\ndata:\n\ndata: \n\n"], [b"", b"", b""]),
        ([b"data:  two spaces\n\n"], [b" two spaces"]),
        ([b"\xef\xbb", b"\xbfdata: after the BOM\n\n"], [b"after the BOM"]),
        ([b"data: \xff not UTF-8 \xe2\x80\xa8\n\n"], [b"\xff not UTF-8 \xe2\x80\xa8"]),
        ([b"data: done\n\ndata: cut off\n"], [b"done"]),
        ([b"data: done\n\ndata: cut off"], [b"done"]),
    ],
)
@pytest.mark.anyio
async def test_sse_payloads(chunks: list[bytes], payloads: list[bytes]) -> None:
    assert [payload async for payload in sse_payloads(_aiter(chunks))] == payloads


_LINE = st.binary(max_size=12).map(lambda data: data.replace(b"\n", b"").replace(b"\r", b""))
_EVENT = st.tuples(
    st.lists(_LINE, max_size=3),  # the data lines
    st.lists(st.sampled_from([b": note", b"id: 9", b"event: x", b"retry: 1", b":"]), max_size=2),  # the rest
    st.booleans(),  # "data: …" rather than "data:…"
)


@given(
    events=st.lists(_EVENT, max_size=6),
    endings=st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1),
    bom=st.booleans(),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
)
def test_sse_payloads_read_any_stream_cut_anywhere(
    events: list[tuple[list[bytes], list[bytes], bool]], endings: list[bytes], bom: bool, cuts: list[int]
) -> None:
    lines: list[bytes] = []
    for data, others, spaced in events:
        lines += others
        lines += [b"data:" + (b" " if spaced or line.startswith(b" ") else b"") + line for line in data]
        lines.append(b"")
    stream = bytearray(b"\xef\xbb\xbf" if bom else b"")
    previous = b""
    for number, line in enumerate(lines):
        ending = endings[number % len(endings)]
        if previous == b"\r" and not line and ending == b"\n":
            ending = b"\r\n"  # "\r" then an empty line's "\n" would read as one "\r\n"
        stream += line + ending
        previous = ending
    edges = sorted({0, len(stream), *(cut for cut in cuts if cut < len(stream))})
    chunks = [bytes(stream[start:end]) for start, end in itertools.pairwise(edges)]

    async def read() -> list[bytes]:
        return [payload async for payload in sse_payloads(_aiter(chunks))]

    assert anyio.run(read) == [b"\n".join(data) for data, _, _ in events if data]


# -- helpers -------------------------------------------------------------------------------------------------


async def _open_text_plain(suite: Suite, bridge: HttpBridge, root: Path) -> str:
    """Prepare text_plain's model and project as the harness would, and open a session on it."""
    suite.model.reset(TEXT_PLAIN.rounds)
    workspace = prepare_workspace(
        root, TEXT_PLAIN.meta, model_url=suite.model.url, tools_url=suite.tools.url, server_name=SERVER_NAME
    )
    async with httpx2.AsyncClient(base_url=bridge.url, timeout=WAIT) as client:
        response = await client.post(
            "/sessions",
            json={
                "session_id": SESSION_ID,
                "working_directory": str(workspace.project),
                "settings": json.loads((workspace.project / SETTINGS_FILE_NAME).read_text()),
            },
        )
    assert response.status_code == 200
    return str(response.json()["session_id"])


def _request_bytes(scenario: Scenario) -> bytes:
    """The request lines of a scenario made only of plain requests."""
    return scenario.path.joinpath("input.jsonl").read_bytes()


def _frames(lines: list[bytes], *, first: int) -> bytes:
    return b"".join(b"id: %d\ndata: %b\n\n" % (number, line) for number, line in enumerate(lines, first))


async def _payloads(body: bytes) -> list[bytes]:
    return [payload async for payload in sse_payloads(_aiter([body]))]


async def _aiter(chunks: list[bytes]) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


@contextmanager
def _silent_port() -> Generator[str]:
    """A URL whose port is bound but not listening: every connection is refused, and no one else takes it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{bound.getsockname()[1]}"
