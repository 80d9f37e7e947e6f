from __future__ import annotations

import json
from typing import get_args

import msgspec
import pytest

import hive_protocol as hp
from hive_protocol._schema import SCHEMA_PATH
from hive_protocol._schema import build_schema
from hive_protocol._schema import field_docstrings
from hive_protocol._schema import main
from hive_protocol._schema import render

STRUCTS = [
    *get_args(hp.Event),
    *get_args(hp.Request),
    hp.TurnOptions,
    hp.Question,
    hp.QuestionOption,
    hp.WorkItem,
]


def test_committed_schema_matches_the_code() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render(), (
        "schema.json drifted from the structs: run python -m hive_protocol._schema --write"
    )
    assert main(["--check"]) == 0


def test_check_fails_on_a_stale_schema(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stale = tmp_path / "schema.json"
    stale.write_text(render().replace("The text piece.", "Something else."), encoding="utf-8")
    monkeypatch.setattr("hive_protocol._schema.SCHEMA_PATH", stale)
    assert main(["--check"]) == 1


@pytest.mark.parametrize("cls", STRUCTS, ids=lambda c: c.__name__)
def test_every_type_and_field_is_documented(cls: type[msgspec.Struct]) -> None:
    assert (cls.__doc__ or "").strip(), f"{cls.__name__} has no docstring"
    docs = field_docstrings(cls)
    missing = [f.name for f in msgspec.structs.fields(cls) if not docs.get(f.name)]
    assert not missing, f"{cls.__name__} fields without a docstring: {missing}"


def test_schema_describes_every_type_with_its_wire_names() -> None:
    schema = build_schema()
    defs = schema["$defs"]
    tags = {cls.__struct_config__.tag for cls in [*get_args(hp.Event), *get_args(hp.Request)]}
    described = {
        d["properties"]["type"]["enum"][0] for d in defs.values() if "type" in d.get("properties", {})
    }
    assert described == tags
    tool_end = defs["ToolEndEvent"]
    assert list(tool_end["properties"]) == [
        "type",
        "tool",
        "success",
        "output",
        "call_id",
        "refusal",
        "stats",
    ]
    assert set(tool_end["required"]) == {"type", "tool", "success", "call_id"}
    assert tool_end["properties"]["call_id"]["description"] == "The call's id, as in its ``tool_start``."
    assert schema["x-protocol-version"] == hp.PROTOCOL_VERSION
    json.dumps(schema)  # the schema itself is plain JSON


def test_schema_validates_real_lines() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = build_schema()
    validator = jsonschema.Draft202012Validator(schema)
    good = hp.encode(hp.ToolEndEvent(tool="t", success=False, call_id="c", refusal="denied", output="no"))
    assert validator.is_valid(json.loads(good))
    assert not validator.is_valid({"type": "tool_end", "tool": "t", "success": "yes", "call_id": "c"})
    assert not validator.is_valid({"type": "turn_end", "stop_reason": "exploded"})
