"""Credentials in an endpoint URL are masked like keys wherever hive shows them: ``set``'s echo, ``get`` and
``config show`` (unless ``--raw``), ``doctor``, and a model error that quotes the endpoint."""

from __future__ import annotations

import json
import threading
from collections.abc import Generator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import model_requests

from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round

PASSWORD = "hunter2-very-secret"
QUERY_KEY = "query-key-0123456789"
ENDPOINT = f"https://alice:{PASSWORD}@llm.example.test/v1?api_key={QUERY_KEY}&region=eu"
MASKED = "https://***@llm.example.test/v1?api_key=***&region=eu"


def assert_hidden(text: str) -> None:
    assert PASSWORD not in text
    assert QUERY_KEY not in text


def test_set_get_and_config_show_mask_the_credentials_of_an_endpoint(ws: Workspace) -> None:
    config = ws.home / "config.yaml"
    echoed = ws.run("set", "gpustack.endpoint", ENDPOINT)
    assert echoed.code == 0, echoed
    assert echoed.stdout == f"gpuStack.endpoint = {MASKED}  ({config})\n"
    assert_hidden(echoed.stdout + echoed.stderr)
    assert PASSWORD in config.read_text(encoding="utf-8")  # only the display is masked

    assert ws.run("get", "gpustack.endpoint").stdout == f"gpuStack.endpoint = {MASKED}  # {config}:2\n"
    assert (
        ws.run("get", "gpustack.endpoint", "--raw").stdout
        == f"gpuStack.endpoint = {ENDPOINT}  # {config}:2\n"
    )
    everything = ws.run("get")
    assert_hidden(everything.stdout)

    shown = ws.run("config", "show", env={"OPENAI_ENDPOINT": ENDPOINT})
    assert shown.code == 0, shown
    lines = shown.stdout.splitlines()
    assert f"gpuStack.endpoint = {MASKED}  # {config}:2" in lines
    assert f"openai.endpoint = {MASKED}  # environment OPENAI_ENDPOINT" in lines
    assert_hidden(shown.stdout + shown.stderr)
    raw = ws.run("config", "show", "--raw", env={"OPENAI_ENDPOINT": ENDPOINT})
    assert f"openai.endpoint = {ENDPOINT}  # environment OPENAI_ENDPOINT" in raw.stdout.splitlines()


def test_a_model_error_that_quotes_the_endpoint_is_masked_everywhere_it_goes(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    host = server.url.removeprefix("http://")
    endpoint = f"http://alice:{PASSWORD}@{host}/v1"
    server.add(Round(failure=HttpFailure(status=401, message=f"no access for {endpoint} with this key")))
    ws.env.update(OPENAI_API_KEY="test", OPENAI_MODEL=MODEL, OPENAI_ENDPOINT=endpoint)

    result = ws.run("-p", "hello", "-o", "json")

    assert result.code == 1, result
    error = result.line_document()["error"]
    assert f"no access for http://***@{host}/v1 with this key" in error
    assert_hidden(result.stdout + result.stderr)
    assert len(model_requests(server)) == 1  # the endpoint with its credentials was really used
    # The session store keeps the error as it was shown.
    stored = b"".join(path.read_bytes() for path in ws.home.glob("sessions.db*"))
    assert b"no access for" in stored
    assert PASSWORD.encode() not in stored


class _Refusing(BaseHTTPRequestHandler):
    """Answers every request 401, quoting the address it was sent to, as some gateways do."""

    def do_GET(self) -> None:
        body = json.dumps({"error": {"message": f"no access for {self.server.endpoint}"}}).encode()  # type: ignore[attr-defined]
        self.send_response(401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def refusing_server() -> Generator[str]:
    """A local HTTP server that refuses everything; yields the endpoint, credentials and all, to reach it by."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    endpoint = f"http://alice:{PASSWORD}@127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.endpoint = endpoint  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        httpd.shutdown()
        thread.join()
        httpd.server_close()


def test_doctor_masks_the_endpoint_of_a_provider_that_refuses_it(ws: Workspace) -> None:
    with refusing_server() as endpoint:
        ws.env.update(OPENAI_API_KEY="sk-abcdefghijklmnop", OPENAI_MODEL="m", OPENAI_ENDPOINT=endpoint)
        result = ws.run("doctor", "--verbose")

    assert "openai: not reachable" in result.stdout, result
    assert "no access for http://***@127.0.0.1:" in result.stdout, result
    assert_hidden(result.stdout + result.stderr)
