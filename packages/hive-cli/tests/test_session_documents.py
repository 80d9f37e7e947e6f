"""The ``hive sessions`` JSON documents: camelCase, ISO times, optional fields omitted, shapes of seed 000."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hive_cli.session_documents import CommandError
from hive_cli.session_documents import SessionDeleted
from hive_cli.session_documents import encode_document
from hive_cli.session_documents import iso_time
from hive_cli.session_documents import session_summaries
from hive_cli.session_documents import summarise
from hive_core.messages import Message
from hive_core.messages import TextPart
from hive_core.messages import user
from hive_core.sessions import SessionInfo
from hive_core.sessions import SqliteSessionStore


def test_times_are_iso_8601_round_trip_in_utc() -> None:
    assert iso_time(0) == "1970-01-01T00:00:00.0000000Z"
    assert iso_time(1_788_134_400.25) == "2026-08-31T00:00:00.2500000Z"
    assert datetime.fromisoformat(iso_time(1_788_134_400.123456)).timestamp() == 1_788_134_400.123456


def test_a_listed_session_has_the_seed_fields_in_camel_case() -> None:
    info = SessionInfo(
        id="18f-abc",
        project_path="/p",
        created=1_788_134_400.0,
        updated=1_788_134_500.0,
        model="gpt-5",
        status="forked",
        first_message="fix the tests",
        message_count=4,
    )
    assert json.loads(encode_document(session_summaries([info]))) == [
        {
            "id": "18f-abc",
            "status": "forked",
            "model": "gpt-5",
            "created": "2026-08-31T00:00:00.0000000Z",
            "message_count": 4,
            "first_message": "fix the tests",
        }
    ]
    assert list(json.loads(encode_document(summarise(info)))) == [
        "id",
        "status",
        "model",
        "created",
        "message_count",
        "first_message",
    ]


def test_missing_fields_are_omitted_and_long_first_messages_cut_to_100() -> None:
    bare = SessionInfo(id="s", project_path="/p", created=0.0, updated=0.0)
    assert encode_document(summarise(bare)) == (
        '{"id":"s","status":"active","created":"1970-01-01T00:00:00.0000000Z","message_count":0}'
    )
    long = summarise(
        SessionInfo(id="s", project_path="/p", created=0.0, updated=0.0, first_message="\u00e9" * 150)
    )
    assert long.first_message == "\u00e9" * 97 + "..."
    assert len(long.first_message or "") == 100
    assert "\u00e9" in encode_document(long)  # non-ASCII written as is


def test_an_empty_list_is_an_empty_array() -> None:
    assert encode_document(session_summaries([])) == "[]"


def test_delete_documents() -> None:
    assert encode_document(SessionDeleted(deleted="18f-abc")) == '{"deleted":"18f-abc","success":true}'
    assert (
        encode_document(CommandError(error="no session with id 'x'"))
        == '{"error":"no session with id \'x\'","exit_code":1}'
    )


def test_the_list_document_of_a_real_store(tmp_path: Path) -> None:
    project = tmp_path
    with SqliteSessionStore(tmp_path / "s.db", clock=lambda: 1_788_134_400.5) as store:
        first = store.create(project_path=project, model="m", session_id="older")
        store.append(first.id, user("hello there"))
        store.append(first.id, Message("assistant", [TextPart("hi")]))
        store.create(project_path=project, session_id="newer")
        document = json.loads(encode_document(session_summaries(store.list_sessions(limit=10))))
    assert document == [
        {"id": "newer", "status": "active", "created": "2026-08-31T00:00:00.5000000Z", "message_count": 0},
        {
            "id": "older",
            "status": "active",
            "model": "m",
            "created": "2026-08-31T00:00:00.5000000Z",
            "message_count": 2,
            "first_message": "hello there",
        },
    ]
