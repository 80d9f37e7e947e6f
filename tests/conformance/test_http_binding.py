"""The kit's HTTP binding (:mod:`hive_conformance.http`) against ``hive serve``: a real server on a free port of
127.0.0.1, with a token, its model the suite's scripted one.

``hive serve`` passes the whole kit with every byte compared, as ``hive run --server`` does on stdio, and the lines
it streamed are the fixtures' bytes (``duration_ms`` aside). Also: ``Last-Event-ID`` resumption, a URL where nothing
listens, the token sent as a bearer (a wrong one refused with a clear message), and the SSE parser.
"""

from __future__ import annotations

import itertools
import json
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from collections.abc import Generator
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import anyio
import httpx2
import pytest
from conformance_targets import HIVE_SERVER
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

SCENARIOS = load_scenarios()
TEXT_PLAIN = next(scenario for scenario in SCENARIOS if scenario.name == "text_plain")
TOKEN = "conformance-token-0123456789"
WAIT = 30.0
HIVE_SERVE = [HIVE_SERVER[0], "serve"]
"""``hive serve``, from this interpreter's environment."""


def runner_environment(suite: Suite, home: Path) -> dict[str, str]:
    """The server's environment: what the harness gives a stdio runner (see ``prepare_workspace``), with an empty
    hive home of its own: each session's MCP server and rules come in the binding's ``settings``."""
    environment = {name: os.environ[name] for name in PASSED_VARIABLES if name in os.environ}
    environment.update(
        HOME=str(home),
        HIVE_HOME=str(home / ".hive"),
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
def served(suite: Suite, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``hive serve`` on a free port with :data:`TOKEN`, pointed at the suite's model; its API's base URL."""
    home = tmp_path_factory.mktemp("serve-home")
    with _hive_serve(runner_environment(suite, home)) as url:
        yield f"{url}/api"


@contextmanager
def _hive_serve(environment: dict[str, str]) -> Generator[str]:
    """Run ``hive serve --port 0``; yields ``http://127.0.0.1:PORT`` from its ready line. On leaving it is sent
    SIGTERM, and must exit by itself, leaving no process of its group behind."""
    process = subprocess.Popen(
        [*HIVE_SERVE, "--port", "0", "--token", TOKEN],
        stdout=subprocess.PIPE,
        env=environment,
        start_new_session=True,
    )
    try:
        assert process.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            assert selector.select(WAIT), "hive serve printed nothing"
        line = process.stdout.readline().decode()
        prefix, _, token = line.strip().partition("/?token=")
        assert (prefix.startswith("hive serve: http://127.0.0.1:"), token) == (True, TOKEN), line
        yield prefix.removeprefix("hive serve: ")
        process.send_signal(signal.SIGTERM)
        # uvicorn shuts down on the signal, then raises it again: the conventional exit of a signalled process.
        assert process.wait(WAIT) == -signal.SIGTERM
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


# -- the kit over HTTP ---------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_hive_serve_passes_the_whole_kit_with_the_stdio_bytes(
    suite: Suite, served: str, tmp_path: Path
) -> None:
    output = tmp_path / "output"
    started = time.monotonic()
    report = await run_suite(SCENARIOS, HttpTarget(served, token=TOKEN), suite, exact=True, output_dir=output)
    print(f"the whole kit against hive serve: {time.monotonic() - started:.1f} s")
    failures = {
        scenario.name: scenario.diff or scenario.findings or scenario.stderr
        for scenario in report.scenarios
        if scenario.status != "pass"
    }
    assert failures == {}
    assert report.conformant
    assert all(requirement.status == "pass" for requirement in report.requirements)
    assert [scenario.name for scenario in report.scenarios] == sorted(scenario.name for scenario in SCENARIOS)
    for scenario in SCENARIOS:
        written = (output / f"{scenario.name}.jsonl").read_bytes()
        assert written.endswith(b"\n"), scenario.name
        assert normalize_recording(written.split(b"\n")[:-1]) == scenario.expected, scenario.name


# -- Last-Event-ID, by hand ----------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_last_event_id_replays_exactly_the_events_after_it(
    suite: Suite, served: str, tmp_path: Path
) -> None:
    session = await _open_text_plain(suite, served, tmp_path)
    path = f"/sessions/{session}"
    async with httpx2.AsyncClient(base_url=served, timeout=WAIT, headers=_BEARER) as client:
        with anyio.fail_after(WAIT):
            sent = await client.post(f"{path}/requests", content=_request_bytes(TEXT_PLAIN))
            assert sent.status_code == 202
            assert (await client.post(f"{path}/close")).status_code == 204
            # The input is closed: the stream ends once the turn has ended.
            everything = await client.get(f"{path}/events")
            assert everything.status_code == 200
            assert everything.headers["content-type"].startswith("text/event-stream")
            lines = await _payloads(everything.content)
            resumed = await client.get(f"{path}/events", headers={"last-event-id": "2"})
            at_end = await client.get(f"{path}/events", headers={"last-event-id": str(len(lines))})
            not_an_id = await client.get(f"{path}/events", headers={"last-event-id": "two"})
            late = await client.post(f"{path}/requests", content=_request_bytes(TEXT_PLAIN))
            forgotten = await client.delete(path)
            gone = await client.get(f"{path}/events")
    assert normalize_recording(lines) == TEXT_PLAIN.expected
    assert everything.content == _frames(lines, first=1)
    assert (resumed.status_code, resumed.content) == (200, _frames(lines[2:], first=3))
    assert (at_end.status_code, at_end.content) == (200, b"")
    assert not_an_id.status_code == 400
    assert late.status_code == 409
    assert (forgotten.status_code, gone.status_code) == (204, 404)


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


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, "not-the-token-0123456789"])
def test_hive_serve_refuses_a_wrong_token_and_the_cli_says_so(
    served: str, token: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(["http", "-q", "-k", "text_plain", *(["--token", token] if token else []), served])
    out, err = capsys.readouterr()
    assert status == 2
    given = "no token" if token is None else "the token given"
    assert err.startswith(
        f"hive-conformance: the runner at {served} refused the request with {given} (HTTP 401"
    )
    assert err.rstrip().endswith("pass its token with --token"), err
    assert out == ""


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


_BEARER = {"authorization": f"Bearer {TOKEN}"}


async def _open_text_plain(suite: Suite, base_url: str, root: Path) -> str:
    """Prepare text_plain's model and project as the harness would, and open a session on it."""
    suite.model.reset(TEXT_PLAIN.rounds)
    workspace = prepare_workspace(
        root, TEXT_PLAIN.meta, model_url=suite.model.url, tools_url=suite.tools.url, server_name=SERVER_NAME
    )
    async with httpx2.AsyncClient(base_url=base_url, timeout=WAIT, headers=_BEARER) as client:
        response = await client.post(
            "/sessions",
            json={
                "session_id": SESSION_ID,
                "working_directory": str(workspace.project),
                "settings": json.loads((workspace.project / SETTINGS_FILE_NAME).read_text()),
            },
        )
    assert response.status_code == 201, response.text
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
