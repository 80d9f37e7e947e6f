"""The one reader of YAML and JSON files: values, the position of every key and value, and its faults."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import cast

import pytest

from hive_core.config import ConfigError
from hive_core.config.structured import Document
from hive_core.config.structured import Mark
from hive_core.config.structured import parse_document
from hive_core.config.structured import read_document
from hive_core.config.structured import read_text
from hive_core.errors import UserError

JSON_TEXT = '{\n  "a": 1,\n  "list": [true, null, "x", -2.5],\n  "nested": {"key": "value"}\n}\n'
YAML_TEXT = 'a: 1\nlist: [true, null, "x", -2.5]\nnested:\n  key: value\n'


class _Fault(UserError):
    """An error class of the caller's own."""


@pytest.mark.parametrize(("text", "syntax"), [(JSON_TEXT, "json"), (YAML_TEXT, "yaml")])
def test_yaml_and_json_give_the_same_value(text: str, syntax: str) -> None:
    document = parse_document(text, source="f", format="json" if syntax == "json" else "yaml", error=_Fault)
    assert document.value == {"a": 1, "list": [True, None, "x", -2.5], "nested": {"key": "value"}}


def test_json_positions_of_keys_and_values() -> None:
    document = parse_document(JSON_TEXT, source="f.json", format="json", error=_Fault)
    assert document.values[()] == Mark(1, 1)
    assert document.keys[("a",)] == Mark(2, 3)
    assert document.values[("a",)] == Mark(2, 8)
    assert document.values[("list", 2)] == Mark(3, 24)
    assert document.keys[("nested", "key")] == Mark(4, 14)
    assert document.raw[("list", 3)] == "-2.5"
    assert document.key_mark(("nested", "key", "deeper")) == Mark(4, 14)
    assert document.value_mark(("nested",)) == Mark(4, 13)


def test_yaml_positions_of_keys_and_values() -> None:
    document = parse_document(YAML_TEXT, source="f.yaml", error=_Fault)
    assert document.keys[("nested", "key")] == Mark(4, 3)
    assert document.values[("nested", "key")] == Mark(4, 8)
    assert document.values[("list", 1)] == Mark(2, 14)


def test_json_reads_what_the_standard_library_reads() -> None:
    text = '{"n": NaN, "big": 12345678901234567890, "e": "\\u00e9\\n", "neg": -Infinity, "deep": [[[]]]}'
    document = parse_document(text, source="f", format="json", error=_Fault)
    value = cast("dict[str, object]", document.value)
    expected = cast("dict[str, object]", json.loads(text))
    assert math.isnan(cast("float", value.pop("n")))
    assert math.isnan(cast("float", expected.pop("n")))
    assert value == expected


@pytest.mark.parametrize(
    ("text", "syntax", "line", "column", "words"),
    [
        (
            '{\n  "a": 1,\n  "a": 2\n}',
            "json",
            3,
            3,
            "not valid JSON: the key 'a' appears twice in one object",
        ),
        ("a:\n  b: 1\n  b: 2\n", "yaml", 3, 3, "not valid YAML: the key 'b' appears twice in one mapping"),
        ('{\n  "a": [1,]\n}', "json", 2, 11, "not valid JSON: Expecting value"),
        ("a: [\n", "yaml", 2, 1, "not valid YAML"),
        ("a: &x\n  b: *x\n", "yaml", 1, 4, "contains it"),  # at the anchor: an alias is its node again
    ],
)
def test_faults_are_raised_as_the_callers_error_with_their_position(
    text: str, syntax: str, line: int, column: int, words: str
) -> None:
    with pytest.raises(_Fault) as caught:
        parse_document(text, source="f", format="json" if syntax == "json" else "yaml", error=_Fault)
    assert (caught.value.source, caught.value.line, caught.value.column) == ("f", line, column)
    assert words in caught.value.problem


def test_read_document_chooses_json_by_the_suffix(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b'\xef\xbb\xbf{"key": "yes"}')
    (tmp_path / "a.yml").write_text("key: yes\n", encoding="utf-8")
    json_document = read_document(tmp_path / "a.json", error=_Fault)
    yaml_document = read_document(tmp_path / "a.yml", error=_Fault)
    assert json_document is not None
    assert json_document.value == {"key": "yes"}
    assert yaml_document is not None
    assert yaml_document.value == {"key": True}


def test_a_missing_file_is_none_and_an_unreadable_one_an_error(tmp_path: Path) -> None:
    assert read_document(tmp_path / "none.yaml", error=_Fault) is None
    assert read_text(tmp_path / "none" / "deeper.env", error=_Fault) is None
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(ConfigError, match="cannot read the file") as caught:
        read_document(tmp_path / "dir.yaml", error=ConfigError)
    assert caught.value.source == str(tmp_path / "dir.yaml")
    (tmp_path / "latin.json").write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(_Fault, match="not UTF-8"):
        read_document(tmp_path / "latin.json", error=_Fault)


def test_a_document_without_positions_points_nowhere() -> None:
    document = Document(source="inline", value={"a": 1})
    assert document.key_mark(("a",)) == Mark(None, None)
    assert document.value_mark(("a", 0)) == Mark(None, None)
