"""The shipped fixtures and the fixture reader: every scenario loads, its expected lines are a valid canonical
stream, its placeholders can be filled, and malformed fixture files are refused with the file and the fault."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import msgspec
import pytest

from hive_conformance.compare import MEASURED_FIELDS
from hive_conformance.compare import RUNNER_CHOSEN_FIELDS
from hive_conformance.fixtures import AwaitStep
from hive_conformance.fixtures import FixtureError
from hive_conformance.fixtures import RawStep
from hive_conformance.fixtures import Scenario
from hive_conformance.fixtures import SendStep
from hive_conformance.fixtures import decode_steps
from hive_conformance.fixtures import default_fixtures_dir
from hive_conformance.fixtures import load_scenario
from hive_conformance.fixtures import load_scenarios
from hive_conformance.fixtures import substitute
from hive_conformance.workspace import SESSION_ID
from hive_protocol import SessionStartedEvent
from hive_protocol import UnknownEvent
from hive_protocol import decode_event
from hive_protocol import encode
from hive_protocol import verify

SCENARIOS = load_scenarios()
IDS = [scenario.name for scenario in SCENARIOS]


def test_the_kit_ships_at_least_thirty_scenarios() -> None:
    assert len(SCENARIOS) >= 30
    assert (default_fixtures_dir() / "files" / "notes.txt").is_file()
    assert "files" not in IDS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_expected_lines_are_a_valid_canonical_stream(scenario: Scenario) -> None:
    assert scenario.expected, f"{scenario.name}: no expected.jsonl"
    assert verify(scenario.expected, turns=scenario.turns) == []
    for line in scenario.expected:
        event = decode_event(line)
        assert not isinstance(event, UnknownEvent)
        assert encode(event) == line
    first = decode_event(scenario.expected[0])
    assert isinstance(first, SessionStartedEvent)
    assert first.session_id == SESSION_ID


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_expected_lines_keep_measured_fields_at_zero(scenario: Scenario) -> None:
    for line in scenario.expected:
        value = json.loads(line)
        for name in MEASURED_FIELDS:
            kind, _, field = name.partition(".")
            if value["type"] == kind and field in value:
                assert value[field] == 0


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_every_placeholder_refers_to_an_event_the_runner_writes_earlier(scenario: Scenario) -> None:
    seen: dict[str, dict[str, object]] = {}
    expected = iter(json.loads(line) for line in scenario.expected)
    for step in scenario.steps:
        if isinstance(step, AwaitStep):
            # Everything up to the awaited event has been written by then.
            while step.event_type not in seen:
                event = next(expected)
                seen[event["type"]] = event
        if isinstance(step, SendStep):
            assert json.loads(substitute(step.line, seen))["type"]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_varies_names_fields_of_events_the_scenario_writes(scenario: Scenario) -> None:
    written = {(value["type"], key) for value in map(json.loads, scenario.expected) for key in value}
    for name in scenario.meta.varies:
        kind, _, field = name.partition(".")
        assert (kind, field) in written, f"{scenario.name}: {name} never appears"
        assert name not in RUNNER_CHOSEN_FIELDS | MEASURED_FIELDS, f"{name} varies kit-wide already"


def test_steps_are_requests_raw_lines_and_waits() -> None:
    data = b'{"type": "user_message", "content": "hi"}\n\n{"$raw": "null"}\n{"$await": "tool_start", "count": 2}\n'
    assert decode_steps(data) == [
        SendStep('{"type": "user_message", "content": "hi"}'),
        RawStep("null"),
        AwaitStep("tool_start", 2),
    ]


@pytest.mark.parametrize(
    ("line", "fault"),
    [
        (b"{nope", "not JSON"),
        (b"[1, 2]", "a step is a JSON object"),
        (b'{"$raw": 3}', '{"$raw": "text"}'),
        (b'{"$raw": "x", "extra": 1}', '{"$raw": "text"}'),
        (b'{"$await": "turn_end", "count": 0}', '{"$await": "<event type>", "count": 1}'),
        (b'{"content": "no type"}', 'a step is a request (with "type")'),
    ],
)
def test_a_malformed_step_names_its_line(line: bytes, fault: str) -> None:
    with pytest.raises(FixtureError, match=f"input.jsonl, .*{_escape(fault)}"):
        decode_steps(b"\n" + line, source="input.jsonl")
    with pytest.raises(FixtureError, match="line 2"):
        decode_steps(b"\n" + line, source="input.jsonl")


def test_placeholders_take_the_latest_event_and_stay_inside_their_string() -> None:
    seen = {"hitl_request": {"id": 'hitl-"quoted"\n', "level": "high"}, "turn_end": {"input_tokens": 3}}
    line = '{"type":"hitl_response","id":"${hitl_request.id}","reason":"${turn_end.input_tokens} ${repeat:3:ab}"}'
    filled = substitute(line, seen)
    assert json.loads(filled) == {"type": "hitl_response", "id": 'hitl-"quoted"\n', "reason": "3 ababab"}


@pytest.mark.parametrize(
    ("placeholder", "fault"),
    [
        ("${hitl_request.id}", "wrote no hitl_request with a id"),
        ("${turn_end.nope}", "wrote no turn_end with a nope"),
        ("${repeat:x:y}", "write ${repeat:<count>:<text>}"),
    ],
)
def test_a_placeholder_that_cannot_be_filled_is_a_fixture_error(placeholder: str, fault: str) -> None:
    with pytest.raises(FixtureError, match=_escape(fault)):
        substitute(f'{{"type":"cancel","x":"{placeholder}"}}', {"turn_end": {"input_tokens": 1}})


def _scenario_dir(root: Path, name: str = "demo", /, **meta: object) -> Path:
    path = root / name
    path.mkdir(parents=True)
    (path / "meta.json").write_text(
        json.dumps({"description": "A demo.", "requirements": ["HIVE-TEXT-001"], **meta})
    )
    (path / "input.jsonl").write_text('{"type": "user_message", "content": "hi"}\n')
    (path / "script.jsonl").write_text('{"parts": [{"type": "text", "chunks": ["Hi"]}]}\n')
    return path


def test_a_scenario_loads_from_its_directory(tmp_path: Path) -> None:
    path = _scenario_dir(tmp_path, varies=["error.message"], tool_timeout_ms=500, keep_input_open=True)
    (path / "expected.jsonl").write_bytes(b'{"type":"a"}\n{"type":"b"}\n')
    scenario = load_scenario(path)
    assert scenario.name == "demo"
    assert scenario.turns == 1
    assert scenario.expected == [b'{"type":"a"}\n', b'{"type":"b"}\n']
    assert scenario.meta.varies == ["error.message"]
    assert scenario.meta.tool_timeout_ms == 500
    assert scenario.meta.keep_input_open
    assert len(scenario.rounds) == 1


@pytest.mark.parametrize(
    ("meta", "fault"),
    [
        ({"requirements": []}, "requirements is empty"),
        ({"varies": ["message"]}, "varies entries must be '<event type>.<field>'"),
        ({"capabilities": ["teleport"]}, "meta.json"),
        ({"surprise": 1}, "unknown field `surprise`"),
        ({"tool_timeout_ms": 0}, "meta.json"),
    ],
)
def test_a_malformed_meta_file_is_refused(tmp_path: Path, meta: dict[str, object], fault: str) -> None:
    path = _scenario_dir(tmp_path, **meta)
    with pytest.raises(FixtureError, match=_escape(fault)):
        load_scenario(path)


def test_a_malformed_script_names_the_file(tmp_path: Path) -> None:
    path = _scenario_dir(tmp_path)
    (path / "script.jsonl").write_text('{"parts": [{"type": "video"}]}\n')
    with pytest.raises(FixtureError, match=r"script\.jsonl: script line 1"):
        load_scenario(path)


def test_a_missing_input_file_is_refused(tmp_path: Path) -> None:
    path = _scenario_dir(tmp_path)
    (path / "input.jsonl").unlink()
    with pytest.raises(FixtureError, match=r"input\.jsonl: missing"):
        load_scenario(path)


def test_scenarios_are_chosen_by_name_and_unknown_names_are_refused(tmp_path: Path) -> None:
    _scenario_dir(tmp_path, "b")
    _scenario_dir(tmp_path, "a")
    (tmp_path / "files").mkdir()
    (tmp_path / "_draft").mkdir()
    assert [scenario.name for scenario in load_scenarios(tmp_path)] == ["a", "b"]
    assert [scenario.name for scenario in load_scenarios(tmp_path, names=["b"])] == ["b"]
    with pytest.raises(FixtureError, match=r"no such scenario .*: c, d"):
        load_scenarios(tmp_path, names=["d", "c", "a"])
    with pytest.raises(FixtureError, match="no such fixtures directory"):
        load_scenarios(tmp_path / "nowhere")


def test_fixture_files_are_plain_json_lines(tmp_path: Path) -> None:
    for path in default_fixtures_dir().rglob("*.jsonl"):
        for line in path.read_bytes().split(b"\n"):
            if line:
                msgspec.json.decode(line)


def _escape(text: str) -> str:
    return re.escape(text)


# Scenarios that send what the schema forbids on purpose: unreadable lines, unknown fields, invalid option values.
_DELIBERATELY_INVALID = {
    "HIVE-SESS-005",
    "HIVE-SESS-006",
    "HIVE-SESS-007",
    "HIVE-WIRE-007",
    "HIVE-OPT-003",
    "HIVE-OPT-004",
}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=IDS)
def test_fixture_lines_follow_the_protocols_json_schema(scenario: Scenario) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(files("hive_protocol").joinpath("schema.json").read_text(encoding="utf-8"))
    events = jsonschema.Draft202012Validator({**schema, "anyOf": [{"$ref": "#/$defs/Event"}]})
    requests = jsonschema.Draft202012Validator({**schema, "anyOf": [{"$ref": "#/$defs/Request"}]})
    for line in scenario.expected:
        events.validate(json.loads(line))
    if _DELIBERATELY_INVALID & set(scenario.meta.requirements):
        return
    seen = {kind: {"id": "x"} for kind in ("hitl_request", "question_request")}
    for step in scenario.steps:
        if isinstance(step, RawStep):
            pytest.fail(f"{scenario.name} sends a raw line without citing an unreadable-request requirement")
        if isinstance(step, SendStep):
            requests.validate(json.loads(substitute(step.line, seen)))
