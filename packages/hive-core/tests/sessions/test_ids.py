"""Session ids: generated ones sort by time, explicit ones are validated with a clear error."""

from __future__ import annotations

import re

import pytest

from hive_core.sessions import MAX_SESSION_ID_LENGTH, InvalidSessionId, new_session_id, validate_session_id


def test_generated_ids_are_unix_millis_in_hex_and_8_random_hex_digits() -> None:
    session_id = new_session_id(1_700_000_000.123)
    assert re.fullmatch(r"[0-9a-f]+-[0-9a-f]{8}", session_id)
    assert session_id.split("-")[0] == f"{1_700_000_000_123:x}"
    assert validate_session_id(session_id) == session_id


def test_generated_ids_sort_in_creation_order_and_do_not_repeat() -> None:
    ids = [new_session_id(1_700_000_000 + step) for step in range(50)]
    assert sorted(ids) == ids
    assert len({new_session_id(1_700_000_000) for _ in range(200)}) == 200


@pytest.mark.parametrize("session_id", ["a", "run-42_B", "x" * MAX_SESSION_ID_LENGTH, "0123456789abcdef"])
def test_valid_explicit_ids_are_returned_unchanged(session_id: str) -> None:
    assert validate_session_id(session_id) == session_id


@pytest.mark.parametrize(
    ("session_id", "message"),
    [
        ("", "cannot be empty"),
        ("x" * (MAX_SESSION_ID_LENGTH + 1), "at most 128 characters; this one has 129"),
        ("a b", "only letters, digits, '-' and '_' are allowed (found ' ')"),
        ("../etc", "(found '.', '/')"),
        ("caf\u00e9", "(found '\u00e9')"),
        ("a\nb", "(found '\\n')"),
    ],
)
def test_invalid_explicit_ids_say_what_is_wrong(session_id: str, message: str) -> None:
    with pytest.raises(InvalidSessionId) as caught:
        validate_session_id(session_id)
    assert message in str(caught.value)
    assert isinstance(caught.value, ValueError)
