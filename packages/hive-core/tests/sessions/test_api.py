"""The public surface of hive_core.sessions."""

from __future__ import annotations

import inspect

import hive_core.sessions as sessions
from hive_core.sessions import SessionStore, SqliteSessionStore


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions, each alphabetical.
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert sessions.__all__ == sorted(sessions.__all__, key=_isort_key)
    for name in sessions.__all__:
        assert hasattr(sessions, name), name
    public = {
        "SessionStore",
        "SqliteSessionStore",
        "default_store",
        "default_path",
        "TranscriptRecorder",
        "DurableHitlBridge",
        "SuspendedTurn",
        "PendingApproval",
        "SessionInfo",
        "session_summaries",
        "encode_document",
        "SessionDeleted",
        "CommandError",
        "InvalidSessionId",
        "SessionNotFound",
        "validate_session_id",
        "new_session_id",
    }
    assert public <= set(sessions.__all__)


def test_every_public_name_has_a_docstring() -> None:
    for name in sessions.__all__:
        value = getattr(sessions, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), name


def test_the_sqlite_store_implements_every_method_of_the_protocol() -> None:
    wanted = {name for name in vars(SessionStore) if not name.startswith("_")}
    assert wanted == {
        "create",
        "get",
        "list_sessions",
        "latest",
        "delete",
        "fork",
        "set_status",
        "append",
        "entries",
        "restore",
        "pending_approvals",
        "close",
    }
    for name in wanted:
        mine = inspect.signature(getattr(SqliteSessionStore, name))
        theirs = inspect.signature(getattr(SessionStore, name))
        assert list(mine.parameters) == list(theirs.parameters), name
