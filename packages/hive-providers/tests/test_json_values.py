"""The tolerant JSON readers of ``backends/kit/json_values.py``: a value of the wrong type reads as empty or
``None``, never raises, and the right type comes back whole."""

from __future__ import annotations

import pytest

from hive_providers.backends.kit.json_values import as_array
from hive_providers.backends.kit.json_values import as_count
from hive_providers.backends.kit.json_values import as_list
from hive_providers.backends.kit.json_values import as_mapping
from hive_providers.backends.kit.json_values import as_object
from hive_providers.backends.kit.json_values import as_texts

_WRONG: list[object] = [None, "text", 3, 2.5, True, b"bytes"]


def test_an_object_reads_as_itself_and_a_copy() -> None:
    value: object = {"a": 1, "b": [2]}
    assert as_object(value) is value
    copy = as_mapping(value)
    assert copy == value
    assert copy is not value


def test_an_array_reads_as_itself_and_a_copy() -> None:
    value: object = [1, "two", {"three": 3}]
    assert as_array(value) is value
    copy = as_list(value)
    assert copy == value
    assert copy is not value


@pytest.mark.parametrize("value", [*_WRONG, [1], ["a"]])
def test_what_is_not_an_object_reads_as_none_or_empty(value: object) -> None:
    assert as_object(value) is None
    assert as_mapping(value) == {}


@pytest.mark.parametrize("value", [*_WRONG, {"a": 1}])
def test_what_is_not_an_array_reads_as_none_or_empty(value: object) -> None:
    assert as_array(value) is None
    assert as_list(value) == []


def test_texts_are_a_non_empty_array_of_strings_only() -> None:
    assert as_texts(["bash", "-lc", "ls"]) == ["bash", "-lc", "ls"]
    assert as_texts([]) is None
    assert as_texts(["bash", 1]) is None
    assert as_texts("bash") is None
    assert as_texts({"0": "bash"}) is None


@pytest.mark.parametrize(
    ("value", "count"), [(0, 0), (7, 7), (-1, None), (True, None), (1.0, None), ("3", None)]
)
def test_a_count_is_a_non_negative_integer_and_not_a_boolean(value: object, count: int | None) -> None:
    assert as_count(value) == count
