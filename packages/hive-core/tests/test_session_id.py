"""Generated session ids: Unix milliseconds and random digits, so they sort by creation and never repeat."""

from __future__ import annotations

import re

from hive_core.session_id import new_session_id
from hive_core.sessions import validate_session_id


def test_generated_ids_are_unix_millis_in_hex_and_8_random_hex_digits() -> None:
    session_id = new_session_id(1_700_000_000.123)
    assert re.fullmatch(r"[0-9a-f]+-[0-9a-f]{8}", session_id)
    assert session_id.split("-")[0] == f"{1_700_000_000_123:x}"
    assert validate_session_id(session_id) == session_id


def test_generated_ids_sort_in_creation_order_and_do_not_repeat() -> None:
    ids = [new_session_id(1_700_000_000 + step) for step in range(50)]
    assert sorted(ids) == ids
    assert len({new_session_id(1_700_000_000) for _ in range(200)}) == 200
