"""OpenTelemetry GenAI traces: the span tree and attributes of a turn with a tool call and a provider fallback
(in process, through an in-memory exporter), a real ``hive -p`` exporting to an OTLP/HTTP receiver on 127.0.0.1,
message content only when opted in, and nothing of OpenTelemetry imported when tracing is off."""

from __future__ import annotations

import gc
import gzip
import json
import os
import subprocess
import threading
import warnings
import zlib
from collections.abc import Generator
from collections.abc import Iterator
from collections.abc import Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from typing import ClassVar

import pytest
from cli_harness import HIVE
from cli_harness import MODEL
from cli_harness import Workspace
from cli_harness import calls
from cli_harness import model_requests
from cli_harness import scripted_server
from cli_harness import text
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from opentelemetry.trace import StatusCode

from hive_cli.__main__ import main
from hive_cli.telemetry import OtelTracer
from hive_cli.telemetry import tracing_status
from hive_conformance.model_server import ScriptedModelServer
from hive_conformance.script import HttpFailure
from hive_conformance.script import Round
from hive_core.tracing import install_tracer

# The adapter's retries of a failed request (two, made by hive while tracing) come before the chain moves on.
_REQUESTS_PER_FAILURE = 3


def _broken() -> Round:
    return Round(failure=HttpFailure(status=500, message="the primary is down"))


def _with_fallback(ws: Workspace, primary: ScriptedModelServer, second: ScriptedModelServer) -> Workspace:
    """The session's provider (openai) on ``primary``, and ``xai`` on ``second`` as its one fallback; every
    tool call allowed."""
    (ws.project / ".hive" / "config.yaml").write_text(
        f"fallback:\n  - provider: xai\n    model: {MODEL}\n", encoding="utf-8"
    )
    ws.env.update(XAI_API_KEY="second-key", XAI_ENDPOINT=second.url + "/v1")
    return ws.use(primary).allow_all()


@contextmanager
def _in_memory(*, capture: bool) -> Iterator[InMemorySpanExporter]:
    """hive-core's tracer, exporting to memory for the block."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    install_tracer(OtelTracer(provider, capture_content=capture))
    try:
        yield exporter
    finally:
        install_tracer(None)
        provider.shutdown()


def _one_shot_in_process(ws: Workspace, monkeypatch: pytest.MonkeyPatch, prompt: str) -> int:
    """``hive -p prompt`` run in this process, in the workspace's environment."""
    for name in list(os.environ):
        if name not in ws.env:
            monkeypatch.delenv(name)
    for name, value in ws.env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ws.project)
    ws.trust_now()
    code = main(["-p", prompt])
    # A one-shot leaves its model connections to the process's exit; here they are collected now, quietly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()
    return code


def _attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _named(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return [span for span in spans if span.name.startswith(prefix)]


def _parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def _span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def _turn_with_a_tool_call_and_a_fallback(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch, *, capture: bool
) -> tuple[list[ReadableSpan], str]:
    (ws.project / "notes.txt").write_text("the secret plan\n", encoding="utf-8")
    server.add(*[_broken()] * _REQUESTS_PER_FAILURE)
    with (
        scripted_server(calls(("call_1", "read_file", {"path": "notes.txt"})), text("read it")) as second,
        _in_memory(capture=capture) as exporter,
    ):
        code = _one_shot_in_process(_with_fallback(ws, server, second), monkeypatch, "summarise notes.txt")
        assert len(model_requests(second)) == 2
    assert code == 0
    [session] = ws.sessions()
    return list(exporter.get_finished_spans()), str(session["id"])


def test_a_turn_is_one_tree_of_agent_chat_and_tool_spans(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spans, session_id = _turn_with_a_tool_call_and_a_fallback(ws, server, monkeypatch, capture=False)

    [turn] = _named(spans, "invoke_agent ")
    assert turn.name == "invoke_agent hive"
    assert turn.kind is SpanKind.INTERNAL
    assert _parent_id(turn) is None
    attributes = _attributes(turn)
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.conversation.id"] == session_id
    assert attributes["gen_ai.agent.name"] == "hive"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == MODEL
    assert attributes["gen_ai.usage.input_tokens"] == 30  # the two rounds of the fallback provider
    assert attributes["gen_ai.usage.output_tokens"] == 7
    assert attributes["gen_ai.response.finish_reasons"] == ("completed",)

    # One chat span per HTTP request: the primary's three tries that failed, then the fallback's two rounds.
    chats = _named(spans, "chat ")
    assert [_attributes(chat)["gen_ai.provider.name"] for chat in chats] == [
        *["openai"] * _REQUESTS_PER_FAILURE,
        "x_ai",
        "x_ai",
    ]
    assert all(chat.kind is SpanKind.CLIENT and _parent_id(chat) == _span_id(turn) for chat in chats)
    assert all(chat.name == f"chat {MODEL}" for chat in chats)
    *tries, called, answered = chats
    for failed in tries:
        assert failed.status.status_code is StatusCode.ERROR
        assert _attributes(failed)["error.type"] == "internal"  # a 500
        assert "gen_ai.usage.input_tokens" not in _attributes(failed)
        assert "gen_ai.response.model" not in _attributes(failed)
    for chat, finish, usage in ((called, "tool_calls", (20, 5)), (answered, "stop", (10, 2))):
        chat_attributes = _attributes(chat)
        assert chat_attributes["gen_ai.operation.name"] == "chat"
        assert chat_attributes["gen_ai.request.model"] == MODEL
        assert chat_attributes["gen_ai.response.model"] == MODEL  # as the server's response names it
        assert chat_attributes["gen_ai.response.finish_reasons"] == (finish,)
        assert (
            chat_attributes["gen_ai.usage.input_tokens"],
            chat_attributes["gen_ai.usage.output_tokens"],
        ) == usage
        assert chat_attributes["gen_ai.usage.cache_read.input_tokens"] == 0
        assert chat_attributes["gen_ai.response.time_to_first_chunk"] >= 0
        assert chat.status.status_code is StatusCode.UNSET

    [tool] = _named(spans, "execute_tool ")
    assert tool.name == "execute_tool read_file"
    assert tool.kind is SpanKind.INTERNAL
    assert _parent_id(tool) == _span_id(turn)
    tool_attributes = _attributes(tool)
    assert tool_attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_attributes["gen_ai.tool.name"] == "read_file"
    assert tool_attributes["gen_ai.tool.call.id"] == "call_1"
    assert tool_attributes["hive.permission.verdict"] == "allowed"
    assert tool_attributes["hive.tool.outcome"] == "ok"
    # The tool ran between the two rounds of the fallback provider.
    assert called.end_time is not None
    assert tool.start_time is not None
    assert called.end_time <= tool.start_time
    assert tool.end_time is not None
    assert answered.start_time is not None
    assert tool.end_time <= answered.start_time

    # Without the opt-in no content is recorded anywhere.
    for span in spans:
        assert not {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments"} & set(
            _attributes(span)
        ), span.name
        assert "the secret plan" not in json.dumps(_attributes(span), default=str)


def test_content_is_recorded_only_when_opted_in(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    spans, _ = _turn_with_a_tool_call_and_a_fallback(ws, server, monkeypatch, capture=True)
    [turn] = _named(spans, "invoke_agent ")
    assert json.loads(_attributes(turn)["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "summarise notes.txt"}]}
    ]
    *_, called, answered = _named(spans, "chat ")
    [output] = json.loads(_attributes(called)["gen_ai.output.messages"])
    assert output["parts"] == [
        {"type": "tool_call", "id": "call_1", "name": "read_file", "arguments": '{"path": "notes.txt"}'}
    ]
    sent = json.loads(_attributes(answered)["gen_ai.input.messages"])
    assert [message["role"] for message in sent][-3:] == ["user", "assistant", "tool"]
    assert "the secret plan" in sent[-1]["parts"][0]["response"]
    assert json.loads(_attributes(answered)["gen_ai.output.messages"])[0]["parts"] == [
        {"type": "text", "content": "read it"}
    ]
    [tool] = _named(spans, "execute_tool ")
    assert _attributes(tool)["gen_ai.tool.call.arguments"] == '{"path": "notes.txt"}'
    assert "the secret plan" in _attributes(tool)["gen_ai.tool.call.result"]


@pytest.mark.parametrize(
    "failure",
    [
        HttpFailure(status=500, message="a hiccup"),
        HttpFailure(status=429, message="slow down", retry_after=0),
    ],
    ids=["500", "429"],
)
def test_a_request_answered_once_with_an_error_is_a_span_per_try(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch, failure: HttpFailure
) -> None:
    ws.use(server).allow_all()
    server.add(Round(failure=failure), text("fine now"))
    with _in_memory(capture=False) as exporter:
        assert _one_shot_in_process(ws, monkeypatch, "hello") == 0
    assert len(model_requests(server)) == 2
    spans = list(exporter.get_finished_spans())
    [turn] = _named(spans, "invoke_agent ")
    failed, answered = _named(spans, "chat ")
    assert _parent_id(failed) == _parent_id(answered) == _span_id(turn)
    assert failed.status.status_code is StatusCode.ERROR
    assert _attributes(failed)["error.type"] == ("internal" if failure.status == 500 else "rate_limit")
    assert answered.status.status_code is StatusCode.UNSET
    assert _attributes(answered)["gen_ai.response.finish_reasons"] == ("stop",)
    assert failed.end_time is not None
    assert answered.start_time is not None
    assert failed.end_time <= answered.start_time


def test_a_refused_call_carries_the_verdict_and_its_error_type(
    ws: Workspace, server: ScriptedModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws.use(server).permissions("permissions:\n  read:\n    - pattern: 'notes.txt'\n      action: deny\n")
    server.add(calls(("call_1", "read_file", {"path": "notes.txt"})), text("refused"))
    with _in_memory(capture=False) as exporter:
        assert _one_shot_in_process(ws, monkeypatch, "read notes.txt") == 0
    [tool] = _named(exporter.get_finished_spans(), "execute_tool ")
    attributes = _attributes(tool)
    assert attributes["hive.permission.verdict"] == "denied"
    assert attributes["hive.tool.outcome"] == "denied"
    assert attributes["error.type"] == "denied"
    assert tool.status.status_code is StatusCode.ERROR


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP traces endpoint: keeps every export request's body, decoded."""

    received: ClassVar[list[ExportTraceServiceRequest]] = []
    arrived: ClassVar[threading.Event] = threading.Event()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        encoding = self.headers.get("Content-Encoding", "")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "deflate":
            body = zlib.decompress(body)
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        assert self.path == "/v1/traces"
        type(self).received.append(request)
        type(self).arrived.set()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _received_spans(receiver: type[_Receiver]) -> list[Span]:
    """Every span the receiver was sent, in the order they came."""
    return [
        span
        for request in receiver.received
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


@contextmanager
def _otlp_receiver() -> Generator[tuple[str, type[_Receiver]]]:
    class Receiver(_Receiver):
        received: ClassVar[list[ExportTraceServiceRequest]] = []
        arrived: ClassVar[threading.Event] = threading.Event()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", Receiver
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_one_shot_exports_its_spans_over_otlp_http_before_it_exits(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    ws.use(server).allow_all()
    server.add(calls(("call_1", "list_directory", {"path": "."})), text("done"))
    with _otlp_receiver() as (endpoint, receiver):
        result = ws.run("-p", "look around", env={"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint})
        assert result.code == 0, result.stderr
        # The process has exited: whatever it exported has been received.
        spans = _received_spans(receiver)
        resources = [
            {item.key: item.value.string_value for item in request.resource_spans[0].resource.attributes}
            for request in receiver.received
        ]
    assert sorted(span.name for span in spans) == [
        f"chat {MODEL}",
        f"chat {MODEL}",
        "execute_tool list_directory",
        "invoke_agent hive",
    ]
    assert {resource["service.name"] for resource in resources} == {"hive"}
    [turn] = [span for span in spans if span.name == "invoke_agent hive"]
    assert len({span.trace_id for span in spans}) == 1
    assert all(span.parent_span_id == turn.span_id for span in spans if span is not turn)
    [session] = ws.sessions()
    conversation = {item.key: item.value.string_value for item in turn.attributes}["gen_ai.conversation.id"]
    assert conversation == session["id"]


def test_a_served_session_exports_one_agent_span_per_turn(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    server.add(text("one"), text("two"))
    with _otlp_receiver() as (endpoint, receiver):
        ws.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = endpoint + "/v1/traces"
        with ws.serve() as proc:
            assert proc.turn("first")[-1]["type"] == "turn_end"
            assert proc.turn("second")[-1]["type"] == "turn_end"
            proc.close_stdin()
            assert proc.wait() == 0, proc.stderr
        spans = _received_spans(receiver)
    turns = [span for span in spans if span.name == "invoke_agent hive"]
    assert len(turns) == 2
    assert len({span.trace_id for span in turns}) == 2  # a trace per turn
    [session] = ws.sessions()
    for turn in turns:
        assert {item.key: item.value.string_value for item in turn.attributes}["gen_ai.conversation.id"] == (
            session["id"]
        )
    assert sorted(span.name for span in spans).count(f"chat {MODEL}") == 2


def test_with_tracing_off_nothing_of_opentelemetry_is_imported(
    ws: Workspace, server: ScriptedModelServer
) -> None:
    """A turn through the whole CLI in a fresh interpreter, without a destination: no ``opentelemetry`` module
    is loaded (the extra is installed in this workspace, so only hive's own checks keep it out)."""
    ws.use(server).allow_all()
    server.add(calls(("call_1", "list_directory", {"path": "."})), text("done"))
    ws.trust_now()
    probe = (
        "import sys\n"
        "from hive_cli.__main__ import main\n"
        "code = main(['-p', 'look around'])\n"
        "loaded = sorted(name for name in sys.modules if name.split('.')[0] == 'opentelemetry')\n"
        "print('LOADED', loaded, code)\n"
    )
    completed = subprocess.run(
        [str(Path(HIVE).parent / "python"), "-c", probe],
        capture_output=True,
        text=True,
        cwd=ws.project,
        env=ws.env,
        timeout=120,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert "LOADED [] 0" in completed.stdout, completed.stdout + completed.stderr
    assert len(model_requests(server)) == 2  # the turn really ran, tool round included


def test_the_standard_variables_decide_whether_tracing_is_on() -> None:
    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"}
    on = tracing_status(endpoint)
    assert on.endpoint == "http://127.0.0.1:4318/v1/traces"
    assert not on.capture_content
    assert tracing_status({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h:1/t"}).endpoint == "http://h:1/t"
    assert tracing_status({}).endpoint is None
    assert tracing_status({**endpoint, "OTEL_SDK_DISABLED": "true"}).endpoint is None
    assert tracing_status({**endpoint, "OTEL_TRACES_EXPORTER": "none"}).endpoint is None
    assert tracing_status({**endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}).endpoint is None
    opted = tracing_status({**endpoint, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert opted.capture_content


def test_doctor_says_whether_tracing_is_on_and_where_to(ws: Workspace, server: ScriptedModelServer) -> None:
    ws.use(server)
    off = ws.run("doctor")
    on = ws.run("doctor", env={"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
    assert "tracing: off (no OTEL_EXPORTER_OTLP_ENDPOINT" in off.stdout
    assert "tracing: on, to http://127.0.0.1:4318/v1/traces" in on.stdout
