"""Pi's events as hive events (:class:`PiEventMapper`, from lines recorded from pi 0.74.2 against the scripted
model server, their ``partial`` snapshots cut), and :class:`PiBackend` over a fake ``pi`` process: the JSON
fallback when Pi refuses hive's extension, and the classified failures."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any
from typing import Final

import anyio
import pytest
from backend_harness import replay
from backend_harness import text_of

from hive_core.testing import Answerer
from hive_protocol import Event
from hive_protocol import TextDeltaEvent
from hive_protocol import ToolEndEvent
from hive_protocol import ToolStartEvent
from hive_protocol import TurnEndEvent
from hive_protocol import UserMessageRequest
from hive_providers.backends.kit.errors import BackendStartError
from hive_providers.backends.kit.specs import BackendOptions
from hive_providers.backends.pi import PiBackend
from hive_providers.backends.pi import PiEventMapper
from hive_providers.backends.pi.rpc import QUESTION_MARKER
from hive_providers.backends.pi.rpc import answer_value
from hive_providers.backends.pi.rpc import read_dialog
from hive_providers.backends.pi.wire import decode_event
from hive_providers.backends.registry import resolve_backend

_USAGE: Final = {"input": 1398, "output": 5, "cacheRead": 2, "cacheWrite": 0, "totalTokens": 1405}


def _assistant(content: list[dict[str, Any]], stop: str, **more: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "usage": _USAGE, "stopReason": stop, **more}


def _delta(kind: str, delta: str) -> dict[str, Any]:
    return {
        "type": "message_update",
        "assistantMessageEvent": {"type": kind, "contentIndex": 0, "delta": delta},
    }


TEXT_TURN: Final[list[dict[str, Any]]] = [
    {"type": "session", "version": 3, "id": "01a2323a-2e2b", "cwd": "/p"},
    {"type": "agent_start"},
    {"type": "turn_start"},
    {"type": "message_start", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]}},
    {"type": "message_end", "message": {"role": "user", "content": [{"type": "text", "text": "hello"}]}},
    {"type": "message_start", "message": _assistant([], "stop")},
    {"type": "message_update", "assistantMessageEvent": {"type": "text_start", "contentIndex": 0}},
    _delta("text_delta", "MOCK_REPLY"),
    _delta("text_delta", " ok"),
    {"type": "message_update", "assistantMessageEvent": {"type": "text_end", "content": "MOCK_REPLY ok"}},
    {"type": "message_end", "message": _assistant([{"type": "text", "text": "MOCK_REPLY ok"}], "stop")},
    {"type": "turn_end", "message": _assistant([{"type": "text", "text": "MOCK_REPLY ok"}], "stop")},
    {"type": "agent_end", "messages": []},
]

_CALL: Final = {"type": "toolCall", "id": "call_hive0", "name": "bash", "arguments": {"command": "touch x"}}
TOOL_TURN: Final[list[dict[str, Any]]] = [
    {"type": "session", "version": 3, "id": "s-tool", "cwd": "/p"},
    {"type": "agent_start"},
    {"type": "message_start", "message": _assistant([], "stop")},
    {"type": "message_update", "assistantMessageEvent": {"type": "toolcall_start", "contentIndex": 0}},
    _delta("toolcall_delta", '{"command": "touch x"}'),
    {"type": "message_update", "assistantMessageEvent": {"type": "toolcall_end", "toolCall": _CALL}},
    {"type": "message_end", "message": _assistant([_CALL], "toolUse")},
    {
        "type": "tool_execution_start",
        "toolCallId": "call_hive0",
        "toolName": "bash",
        "args": {"command": "touch x"},
    },
    {
        "type": "tool_execution_update",
        "toolCallId": "call_hive0",
        "toolName": "bash",
        "args": {"command": "touch x"},
        "partialResult": {"content": []},
    },
    {
        "type": "tool_execution_end",
        "toolCallId": "call_hive0",
        "toolName": "bash",
        "result": {"content": [{"type": "text", "text": "(no output)"}]},
        "isError": False,
    },
    {
        "type": "message_start",
        "message": {"role": "toolResult", "content": [{"type": "text", "text": "(no output)"}]},
    },
    {
        "type": "message_end",
        "message": {"role": "toolResult", "content": [{"type": "text", "text": "(no output)"}]},
    },
    {"type": "turn_end"},
    {"type": "message_start", "message": _assistant([], "stop")},
    _delta("text_delta", "MOCK_REPLY"),
    _delta("text_delta", " done"),
    {"type": "message_end", "message": _assistant([{"type": "text", "text": "MOCK_REPLY done"}], "stop")},
    {"type": "agent_end", "messages": []},
]


def _map(lines: list[dict[str, Any]]) -> tuple[PiEventMapper, list[Event]]:
    return replay(PiEventMapper, lambda mapper, line: mapper.on_event(decode_event(line)), lines)


def test_text_turn_streams_once_and_counts_usage() -> None:
    mapper, events = _map(TEXT_TURN)
    assert mapper.session_id == "01a2323a-2e2b"
    assert mapper.ended
    assert mapper.persisted
    assert [type(e) for e in events] == [TextDeltaEvent, TextDeltaEvent, TurnEndEvent]
    assert text_of(events) == "MOCK_REPLY ok"  # message_end repeats it: not sent twice
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens, end.cached_input_tokens) == (1400, 5, 2)
    assert end.total_tokens == 1405
    assert end.stop_reason == "completed"


def test_tool_turn_maps_executions_and_sums_both_messages() -> None:
    _, events = _map(TOOL_TURN)
    starts = [e for e in events if isinstance(e, ToolStartEvent)]
    ends = [e for e in events if isinstance(e, ToolEndEvent)]
    assert [(s.tool, s.input) for s in starts] == [("execute_command", {"command": "touch x"})]
    assert [(e.call_id, e.success, e.output) for e in ends] == [(starts[0].call_id, True, "(no output)")]
    assert events.index(starts[0]) < events.index(ends[0])
    assert text_of(events) == "MOCK_REPLY done"
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert (end.input_tokens, end.output_tokens) == (2800, 10)


def test_failed_tool_and_message_without_deltas() -> None:
    lines = [
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "read", "args": {"path": "nope"}},
        {
            "type": "tool_execution_end",
            "toolCallId": "c1",
            "toolName": "read",
            "result": {"content": [{"type": "text", "text": "ENOENT"}]},
            "isError": True,
        },
        {"type": "message_start", "message": _assistant([], "stop")},
        {"type": "message_end", "message": _assistant([{"type": "text", "text": "whole"}], "length")},
        {"type": "agent_end"},
    ]
    _, events = _map(lines)
    ends = [e for e in events if isinstance(e, ToolEndEvent)]
    assert [(e.success, e.output) for e in ends] == [(False, "ENOENT")]
    assert text_of(events) == "whole"
    end = events[-1]
    assert isinstance(end, TurnEndEvent)
    assert end.stop_reason == "output_limit"


def test_error_stop_is_a_failure() -> None:
    from hive_providers.backends.pi.events import run_failure

    mapper, _ = _map([{"type": "message_end", "message": _assistant([], "error", errorMessage="500 boom")}])
    assert run_failure(mapper) == "Pi ended the turn with an error: 500 boom"
    assert run_failure(_map(TEXT_TURN)[0]) is None


def test_question_dialog_round_trip() -> None:
    questions = [{"question": "Which?", "header": "DB", "options": [{"label": "A"}, {"label": "B"}]}]
    title = QUESTION_MARKER + "\n" + json.dumps({"toolCallId": "call_1", "questions": questions})
    dialog = read_dialog({"type": "extension_ui_request", "id": "u1", "method": "input", "title": title})
    assert dialog is not None
    assert (dialog.request_id, dialog.tool_call_id) == ("u1", "call_1")
    assert [q.question for q in dialog.questions] == ["Which?"]
    assert [o.label for o in dialog.questions[0].options] == ["A", "B"]
    reply = answer_value("u1", dialog.questions, {"Which?": ["B"]})
    assert json.loads(reply["value"]) == {"answers": {"Which?": "B"}}
    assert answer_value("u1", dialog.questions, {})["cancelled"] is True
    assert read_dialog({"id": "u2", "method": "input", "title": "Name?"}) is None
    assert read_dialog({"id": "u3", "method": "confirm", "title": title}) is None


# -- the backend over a fake pi ---------------------------------------------------------------------------------

_FAKE: Final = """\
import json, sys
args = sys.argv[1:]
mode = args[args.index("--mode") + 1]
behaviour = {behaviour!r}
if behaviour == "refuse_extension" and mode == "rpc":
    sys.exit(1)
if behaviour == "noise":
    print("this is not JSON", flush=True)
    sys.exit(3)
sys.stdin.read()
lines = json.loads({lines!r})
for index, line in enumerate(lines):
    if behaviour == "die" and index == 3:
        sys.stderr.write("pi: out of cheese\\n")
        sys.exit(7)
    print(json.dumps(line), flush=True)
"""


def _backend(tmp_path: Path, behaviour: str, *, questions: bool = False) -> PiBackend:
    script = tmp_path / "pi"
    source = _FAKE.format(behaviour=behaviour, lines=json.dumps(TEXT_TURN))
    script.write_text(f"#!{sys.executable}\n{source}", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return PiBackend(
        resolve_backend("pi"),
        BackendOptions(
            cwd=tmp_path,
            home=tmp_path / "home",
            executable=str(script),
            questions=Answerer(None) if questions else None,
            startup_timeout=30.0,
            cancel_grace=1.0,
        ),
    )


async def _turn(backend: PiBackend) -> list[Event]:
    events: list[Event] = []
    with anyio.fail_after(30):
        await backend(UserMessageRequest(content="hello"), events.append)
    return events


@pytest.mark.anyio
async def test_refused_extension_falls_back_to_json(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    backend = _backend(tmp_path, "refuse_extension", questions=True)
    events = await _turn(backend)
    assert text_of(events) == "MOCK_REPLY ok"
    assert isinstance(events[-1], TurnEndEvent)
    assert backend.json_fallback
    assert backend.last_command is not None
    assert backend.last_command[1:3] == ["--mode", "json"]
    assert "ask_user_question extension" in caplog.text
    assert backend.session_id == "01a2323a-2e2b"


@pytest.mark.anyio
async def test_non_json_exit_at_start_is_a_start_error(tmp_path: Path) -> None:
    with pytest.raises(BackendStartError, match=r"exited with code 3 at start.*not JSON"):
        await _turn(_backend(tmp_path, "noise"))


@pytest.mark.anyio
async def test_dying_mid_turn_quotes_stderr(tmp_path: Path) -> None:
    from hive_providers.backends.kit.errors import AgentProcessError

    with pytest.raises(AgentProcessError, match=r"exited with code 7 during the turn.*out of cheese"):
        await _turn(_backend(tmp_path, "die"))


@pytest.mark.anyio
async def test_missing_program_is_not_installed(tmp_path: Path) -> None:
    from hive_providers.backends.kit.errors import BackendNotInstalled

    backend = _backend(tmp_path, "ok")
    backend.options.executable = str(tmp_path / "no-such-pi")
    with pytest.raises(BackendNotInstalled):
        await _turn(backend)


# -- the decoder ------------------------------------------------------------------------------------------------


def test_recorded_events_decode_to_their_structs_and_the_rest_to_unknown() -> None:
    from hive_providers.backends.kit.wire import Unknown
    from hive_providers.backends.pi import wire

    decoded = {line["type"]: decode_event(line) for line in TOOL_TURN}
    assert decoded["session"] == wire.SessionHeader(id="s-tool")
    assert isinstance(decoded["tool_execution_start"], wire.ToolExecutionStart)
    assert decoded["tool_execution_start"].args == {"command": "touch x"}
    assert isinstance(decoded["tool_execution_end"], wire.ToolExecutionEnd)
    assert isinstance(decoded["message_end"], wire.MessageEnd)
    assert isinstance(decoded["agent_end"], wire.AgentEnd)
    assert decoded["turn_end"] == Unknown("turn_end", {"type": "turn_end"})
    usage = decode_event({"type": "message_end", "message": _assistant([], "stop")})
    assert isinstance(usage, wire.MessageEnd)
    assert usage.message is not None
    assert usage.message.usage == wire.Usage(input=1398, output=5, cache_read=2, cache_write=0)
    bad = decode_event({"type": "tool_execution_end", "isError": "maybe"})
    assert isinstance(bad, Unknown)
    assert bad.kind == "tool_execution_end"
    assert bad.problem
    assert decode_event({"no_type": True}) == Unknown(None, {"no_type": True})
