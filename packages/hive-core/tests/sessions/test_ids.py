"""Explicit session ids are validated with a clear error."""

from __future__ import annotations

import pytest

from hive_core.sessions import MAX_SESSION_ID_LENGTH
from hive_core.sessions import InvalidSessionId
from hive_core.sessions import validate_session_id


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
